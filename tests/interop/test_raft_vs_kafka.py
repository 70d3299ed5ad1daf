"""KRaft's bytes against Apache Kafka 4.3.1's own classes.

* The quorum APIs (Vote, BeginQuorumEpoch, EndQuorumEpoch, DescribeQuorum, FetchSnapshot,
  Add/Remove/UpdateRaftVoter), every version: random values drawn from our schemas,
  serialized by Kafka's generated ``*Data`` classes (java/ProtocolMessages.java), must
  encode to the same bytes and decode to the same values.
* The control messages (LeaderChangeMessage, SnapshotHeader/Footer, KRaftVersionRecord,
  VotersRecord), every version, likewise (java/RaftRecords.java).
* Whole batches: a control batch as ``MemoryRecords.with*Record`` builds it, a data batch
  as the Raft ``BatchBuilder`` builds it, a snapshot file as ``RecordsSnapshotWriter``
  writes it, and the ``quorum-state`` file as ``FileQuorumStateStore`` writes and reads it.
"""

from __future__ import annotations

import json
import random
import uuid
from pathlib import Path
from typing import Any

import pytest
from test_protocol_vs_kafka import _first_difference, _normalise_records, to_kafka_json

from kafkacore.log.checkpoints import uuid_to_base64
from kafkacore.protocol.messages import raft_records
from kafkacore.protocol.samples import sample
from kafkacore.protocol.schema import MessageSchema
from kafkacore.raft import wire
from kafkacore.raft.quorum_state import ElectionState
from kafkacore.raft.records import (
    ControlRecord,
    build_control_batch,
    build_data_batch,
)
from kafkacore.raft.snapshots import build_snapshot, snapshot_file_name
from kafkacore.raft.types import OffsetAndEpoch, ReplicaKey
from kafkacore.raft.voters import VoterSet

pytestmark = [pytest.mark.interop, pytest.mark.downloads]

SEEDS = range(4)
RAFT_APIS = [52, 53, 54, 55, 59, 80, 81, 82]
API_CASES = [
    (key, version, kind)
    for key in RAFT_APIS
    for version in wire.SCHEMAS[key][0].valid
    for kind in ("request", "response")
]
CONTROL_CASES = [
    (schema.name, version)
    for schema in raft_records.CONTROL_VALUES.values()
    for version in schema.valid
]


def _api_schema(key: int, kind: str) -> MessageSchema:
    request, response = wire.SCHEMAS[key]
    return request if kind == "request" else response


def _lines_through(java: Any, main: str, lines: list[str], directory: Path) -> list[str]:
    path = directory / "cases.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = java.run(main, str(path)).check()
    outputs = result.stdout.decode("utf-8").splitlines()
    assert len(outputs) == len(lines), result.stderr.decode(errors="replace")[-2000:]
    return outputs


@pytest.fixture(scope="module")
def kafka_api_bytes(java: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[Any, Any]:
    values = {}
    lines = []
    for key, version, kind in API_CASES:
        schema = _api_schema(key, kind)
        for seed in SEEDS:
            value = sample(schema, version, random.Random(f"raft-{key}-{version}-{kind}-{seed}"))
            values[(key, version, kind, seed)] = value
            payload = json.dumps(to_kafka_json(value, schema.struct, version), ensure_ascii=False)
            lines.append(f"{key} {version} {kind} {payload}")
    outputs = _lines_through(java, "ProtocolMessages", lines, tmp_path_factory.mktemp("raft-api"))
    return {k: (values[k], out) for k, out in zip(values, outputs, strict=True)}


@pytest.mark.parametrize(
    ("key", "version", "kind"), API_CASES, ids=[f"{k}-v{v}-{kd}" for k, v, kd in API_CASES]
)
def test_quorum_apis_encode_as_kafka(
    kafka_api_bytes: dict[Any, Any], key: int, version: int, kind: str
) -> None:
    schema = _api_schema(key, kind)
    for seed in SEEDS:
        value, line = kafka_api_bytes[(key, version, kind, seed)]
        status, _, rest = line.partition(" ")
        assert status == "ok", f"Kafka refused our {schema.name} v{version}: {rest}"
        hex_bytes, _, kafka_json = rest.partition(" ")
        kafka = bytes.fromhex(hex_bytes)
        assert schema.encode(value, version) == kafka, f"{schema.name} v{version} seed {seed}"
        assert schema.decode(kafka, version) == value
        ours = _normalise_records(
            to_kafka_json(value, schema.struct, version),
            json.loads(kafka_json),
            schema.struct,
            version,
        )
        assert ours == json.loads(kafka_json), _first_difference(
            ours, json.loads(kafka_json), schema.name
        )


# -- control messages and batches -----------------------------------------------------------


def _control_schema(name: str) -> MessageSchema:
    return next(s for s in raft_records.CONTROL_VALUES.values() if s.name == name)


@pytest.fixture(scope="module")
def kafka_records(java: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every case of this section through RaftRecords.java in one JVM, by case name."""
    cases: dict[str, tuple[dict[str, Any], Any]] = {}
    for name, version in CONTROL_CASES:
        schema = _control_schema(name)
        for seed in SEEDS:
            value = sample(schema, version, random.Random(f"{name}-{version}-{seed}"))
            data = to_kafka_json(value, schema.struct, version)
            spec = {"kind": "message", "class": name, "version": version, "data": data}
            cases[f"message {name} v{version} {seed}"] = (spec, (schema, value, version))
    for spec_name, spec, ours in _batch_cases():
        cases[spec_name] = (spec, ours)
    lines = [json.dumps(spec, ensure_ascii=False) for spec, _ in cases.values()]
    outputs = _lines_through(java, "RaftRecords", lines, tmp_path_factory.mktemp("raft-rec"))
    return {
        name: (ours, out) for (name, (_, ours)), out in zip(cases.items(), outputs, strict=True)
    }


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


@pytest.mark.parametrize(("name", "version"), CONTROL_CASES)
def test_control_messages_encode_as_kafka(
    kafka_records: dict[str, Any], name: str, version: int
) -> None:
    for seed in SEEDS:
        (schema, value, v), line = kafka_records[f"message {name} v{version} {seed}"]
        assert line.startswith("ok "), line
        kafka = bytes.fromhex(line[3:])
        assert schema.encode(value, v) == kafka
        assert schema.decode(kafka, v) == value


def test_batches_snapshots_and_quorum_state_as_kafka_writes_them(
    kafka_records: dict[str, Any],
) -> None:
    checked = 0
    for name, (ours, line) in kafka_records.items():
        if name.startswith("message "):
            continue
        assert line.startswith("ok "), f"{name}: {line}"
        kafka = line[3:]
        if name.startswith("read quorum-state"):
            state = ours
            voted = state.voted_key
            leader = -1 if state.leader_id is None else state.leader_id
            shown = "-" if voted is None else f"{voted.id}:{uuid_to_base64(voted.directory_id)}"
            expected = f"epoch={state.epoch} leader={leader} voted={shown}"
            if voted is not None and name.endswith("version 0"):
                expected = expected.rsplit(":", 1)[0] + ":-"  # v0 keeps no directory id
            assert kafka == expected, name
        elif name.startswith("quorum-state"):
            assert bytes.fromhex(kafka).decode() == ours, name
        elif name.startswith("snapshot"):
            assert kafka == ours, f"{name}: ours {ours[:120]}... Kafka's {kafka[:120]}..."
        else:
            assert kafka == ours.hex(), name
        checked += 1
    assert checked == len(SEEDS) * (5 + 1 + 2 + 4)
