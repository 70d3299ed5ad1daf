"""KRaft's own bytes against Apache Kafka 4.3.1's classes (the quorum APIs themselves are
declared in ``kafkacore.protocol.messages`` and proven by ``test_protocol_vs_kafka.py``).

* The control messages (LeaderChangeMessage, SnapshotHeader/Footer, KRaftVersionRecord,
  VotersRecord): declared as Kafka defines them, and every version of dense and
  hypothesis-drawn samples serialized like Kafka's generated classes.
* Whole batches: a control batch as ``MemoryRecords.with*Record`` builds it, a data batch
  as the Raft ``BatchBuilder`` builds it, a snapshot file as ``RecordsSnapshotWriter``
  writes it, and the ``quorum-state`` file as ``FileQuorumStateStore`` writes and reads it.

Kafka's side is java/RaftRecords.java in LineServer's line mode, one JVM for the module.
"""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafkacore.log.checkpoints import uuid_to_base64
from kafkacore.protocol.messages import raft_records
from kafkacore.protocol.samples import sample
from kafkacore.protocol.schema import KafkaStruct, MessageSchema
from kafkacore.raft.quorum_state import ElectionState
from kafkacore.raft.records import ControlRecord, build_control_batch, build_data_batch
from kafkacore.raft.snapshots import build_snapshot, snapshot_file_name
from kafkacore.raft.types import OffsetAndEpoch, ReplicaKey
from kafkacore.raft.voters import VoterSet
from support.kafka_json import to_kafka_json
from support.kafka_schemas import kafka_definitions, schema_differences
from support.sampled import check_samples

pytestmark = [pytest.mark.interop, pytest.mark.downloads]

SEEDS = range(4)
CONTROL = list(raft_records.CONTROL_VALUES.values())
CONTROL_CASES = [(schema.name, version) for schema in CONTROL for version in schema.valid]


@pytest.fixture(scope="module")
def raft_codec(java: Any) -> Iterator[Any]:
    with java.serve("RaftRecords") as codec:
        yield codec


def _ask(codec: Any, spec: dict[str, Any]) -> str:
    answer: str = codec.ask(json.dumps(spec, ensure_ascii=False))
    status, _, rest = answer.partition(" ")
    assert status == "ok", f"Kafka refused {spec['kind']}: {rest}"
    return rest


def _control_schema(name: str) -> MessageSchema:
    return next(s for s in CONTROL if s.name == name)


def test_control_record_declarations_are_kafkas(kafka_libs: Path) -> None:
    definitions = kafka_definitions(kafka_libs)
    for schema in CONTROL:
        assert schema_differences(schema, definitions[schema.name], schema.valid) == []


@pytest.mark.parametrize(("name", "version"), CONTROL_CASES)
def test_control_messages_encode_as_kafka(raft_codec: Any, name: str, version: int) -> None:
    schema = _control_schema(name)

    def same_as_kafka(value: KafkaStruct) -> None:
        data = to_kafka_json(value, schema.struct, version)
        spec = {"kind": "message", "class": name, "version": version, "data": data}
        kafka = bytes.fromhex(_ask(raft_codec, spec))
        assert schema.encode(value, version) == kafka, f"{name} v{version}: {value!r}"
        assert schema.decode(kafka, version) == value

    check_samples(schema, version, same_as_kafka)


# -- batches, snapshots and quorum-state ------------------------------------------------------


def _voters(rnd: random.Random) -> VoterSet:
    record = sample(raft_records.KRAFT_VOTERS, 0, rnd)
    record.version = 0
    for voter in record.voters:  # valid voters: distinct ids, real directory ids
        voter.voter_directory_id = uuid.UUID(int=rnd.getrandbits(128) | 2)
        for i, endpoint in enumerate(voter.endpoints):  # listener names: distinct, not empty
            endpoint.name = f"{endpoint.name.upper()}_{i}"
        voter.k_raft_version_feature.min_supported_version = 0
        voter.k_raft_version_feature.max_supported_version = 1
    ids = rnd.sample(range(100), len(record.voters))
    for voter, voter_id in zip(record.voters, ids, strict=True):
        voter.voter_id = voter_id
    return VoterSet.from_voters_record(record)


def _batch_cases() -> list[tuple[str, dict[str, Any], Any]]:
    """``(name, RaftRecords spec, our bytes or text)`` for batches, snapshots and files."""
    cases: list[tuple[str, dict[str, Any], Any]] = []
    rnd = random.Random(20261207)
    types = raft_records.ControlRecordType
    for seed in SEEDS:
        offset, ts, epoch = rnd.randrange(1 << 40), rnd.randrange(1 << 41), rnd.randrange(1 << 20)
        for kind, schema in raft_records.CONTROL_VALUES.items():
            message = sample(schema, 0, random.Random(f"batch-{kind}-{seed}"))
            message.version = 0
            if kind is types.KRAFT_VOTERS:
                message = _voters(rnd).to_voters_record()
            spec = {
                "kind": "control",
                "class": schema.name,
                "offset": offset,
                "time": ts,
                "epoch": epoch,
                "data": to_kafka_json(message, schema.struct, 0),
            }
            ours = build_control_batch(offset, epoch, ts, [ControlRecord(kind, message)])
            cases.append((f"control {schema.name} {seed}", spec, ours))
        values = [
            "".join(rnd.choice("abcxyz-0123") for _ in range(rnd.randrange(40)))
            for _ in range(rnd.randrange(1, 30))
        ]
        spec = {"kind": "batch", "offset": offset, "time": ts, "epoch": epoch, "values": values}
        ours = build_data_batch(offset, epoch, ts, [v.encode() for v in values])
        cases.append((f"batch {seed}", spec, ours))
        for kraft_version in (0, 1):
            voters = _voters(rnd) if kraft_version else None
            snapshot_id = OffsetAndEpoch(rnd.randrange(1, 1 << 40), rnd.randrange(1 << 20))
            last_ts = rnd.randrange(1 << 41)
            spec = {
                "kind": "snapshot",
                "offset": snapshot_id.offset,
                "epoch": snapshot_id.epoch,
                "time": ts,
                "lastContained": last_ts,
                "kraftVersion": kraft_version,
                "voters": None
                if voters is None
                else to_kafka_json(voters.to_voters_record(), raft_records.KRAFT_VOTERS.struct, 0),
                "values": values,
            }
            data = build_snapshot(
                snapshot_id,
                [v.encode() for v in values],
                timestamp_ms=ts,
                last_contained_log_timestamp=last_ts,
                kraft_version=kraft_version,
                voters=voters,
            )
            ours_text = f"{snapshot_file_name(snapshot_id)} {data.hex()}"
            cases.append((f"snapshot {seed} kraft.version {kraft_version}", spec, ours_text))
        for kraft_version in (0, 1):
            voters_ids = sorted(rnd.sample(range(1, 50), rnd.randint(1, 5)))
            leader = rnd.choice([-1, *voters_ids])
            voted = -1 if leader >= 0 and rnd.random() < 0.5 else rnd.choice([-1, *voters_ids])
            directory = uuid.UUID(int=rnd.getrandbits(128) | 2)
            state = ElectionState(
                rnd.randrange(1 << 20),
                None if leader < 0 else leader,
                None if voted < 0 else ReplicaKey(voted, directory),
                frozenset(voters_ids),
            )
            spec = {
                "kind": "quorumstate",
                "kraftVersion": kraft_version,
                "epoch": state.epoch,
                "leaderId": leader,
                "votedId": voted,
                "votedDirectoryId": uuid_to_base64(directory),
                "voters": voters_ids,
            }
            text = state.to_json(kraft_version)
            cases.append((f"quorum-state {seed} kraft.version {kraft_version}", spec, text))
            read = {"kind": "readquorumstate", "text": text}
            cases.append((f"read quorum-state {seed} kraft.version {kraft_version}", read, state))
    return cases


def test_batches_snapshots_and_quorum_state_as_kafka_writes_them(raft_codec: Any) -> None:
    checked = 0
    for name, spec, ours in _batch_cases():
        kafka = _ask(raft_codec, spec)
        if name.startswith("read quorum-state"):
            state = ours
            voted = state.voted_key
            leader = -1 if state.leader_id is None else state.leader_id
            shown = "-" if voted is None else f"{voted.id}:{uuid_to_base64(voted.directory_id)}"
            if voted is not None and name.endswith("version 0"):
                shown = f"{voted.id}:-"  # version 0 keeps no directory id
            assert kafka == f"epoch={state.epoch} leader={leader} voted={shown}", name
        elif name.startswith("quorum-state"):
            assert bytes.fromhex(kafka).decode() == ours, name
        elif name.startswith("snapshot"):
            assert kafka == ours, f"{name}: ours {ours[:120]}... Kafka's {kafka[:120]}..."
        else:
            assert kafka == ours.hex(), name
        checked += 1
    assert checked == len(SEEDS) * (5 + 1 + 2 + 4)
