"""The native produce path (``kafkacore.log.lease``) against the Python path, which stays
the reference: random Produce request streams go through both, on both backends, and
every answer, every file of every partition directory and the producer state must be
the same.

Two worlds of the same partitions (a ``Partition`` leading its ``Log``, a mock clock):
the fast world answers each request as the Produce handler's branch does
(``ReplicaManager.append_leased_records``, then the Python path for whatever it
declines), the Python world only through the Python path
(``ReplicaManager.append_client_records``'s checks, ``Partition.append_records_to_leader``).
Between requests the streams move the clock, roll segments, change topic configs,
elect a new leader epoch, expire producers and end transactions - the decisions a lease
snapshots - so the revocations are exercised too.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkacore._backend import Backend
from kafkacore.config import LogConfig
from kafkacore.errors import error_code_for
from kafkacore.log import Log, LogAppendInfo, TopicPartition
from kafkacore.log.clock import MockTime
from kafkacore.log.producer_state import ProducerStateManager
from kafkacore.log.scheduler import MockScheduler
from kafkacore.log.validator import validate_produce_records
from kafkacore.metadata.store import PartitionState
from kafkacore.native import BACKENDS, load_backend
from kafkacore.server.partition import Partition
from kafkacore.server.replica_manager import ReplicaManager
from support.budget import examples

PARTITIONS = 3
PRODUCERS = (1, 2, 3)
EXPIRATION_MS = 20_000
# memory-backed files when the system has them: the streams fsync at rolls and flushes
_SCRATCH = "/dev/shm" if os.path.isdir("/dev/shm") else None
# (error code, message, base offset, log append time, log start offset)
Answer = tuple[int, str | None, int, int, int]


@dataclass
class World:
    """Partitions 0..PARTITIONS-1 of topic ``t`` led by node 1 at ``epoch``, on a clock."""

    backend: Backend
    root: str
    time: MockTime = field(default_factory=MockTime)
    partitions: list[Partition] = field(default_factory=list)
    epoch: int = 0
    leased: int = 0

    def open(self) -> World:
        scheduler = MockScheduler(self.time)  # a roll's delayed flush runs in a tick
        for index in range(PARTITIONS):
            directory = os.path.join(self.root, f"t-{index}")
            os.makedirs(directory)
            log = Log(
                directory,
                LogConfig(),
                backend=self.backend,
                time=self.time,
                scheduler=scheduler,
                producer_state=ProducerStateManager(
                    directory, producer_id_expiration_ms=EXPIRATION_MS
                ),
            )
            partition = Partition(TopicPartition("t", index), log, 1, clock=self.time.milliseconds)
            partition.make_leader(PartitionState((1,), 1, 0, (1,), 0), record_epoch_start=True)
            self.partitions.append(partition)
        return self

    def close(self) -> None:
        for partition in self.partitions:
            partition.log.close()


def _python_answer(partition: Partition, records: bytes, acks: int) -> Answer:
    """The Produce handler's answer for one partition through the Python path."""
    try:
        data = validate_produce_records(records)
        info = partition.append_records_to_leader(data, required_acks=acks)
    except Exception as exc:
        return error_code_for(exc), str(exc), -1, -1, -1
    return _ok(info)


def _ok(info: LogAppendInfo) -> Answer:
    return 0, None, info.first_offset, info.log_append_time, info.log_start_offset


def _produce(world: World, request: list[tuple[int, bytes]], acks: int, fast: bool) -> list[Answer]:
    entries = [(world.partitions[index], records) for index, records in request]
    infos = ReplicaManager.append_leased_records(entries, acks) if fast else None
    answers = []
    for i, (partition, records) in enumerate(entries):
        info = infos[i] if infos is not None else None
        if info is None:
            answers.append(_python_answer(partition, records, acks))
        else:
            world.leased += 1
            answers.append(_ok(info))
    return answers


# -- the streams ---------------------------------------------------------------------------


@dataclass
class Producers:
    """What the simulated producers sent: each one's epoch and, per partition, the next
    sequence (the streams send the same bytes to both worlds)."""

    epochs: dict[int, int] = field(default_factory=lambda: dict.fromkeys(PRODUCERS, 0))
    next_seq: dict[tuple[int, int], int] = field(default_factory=dict)
    # per partition of the request in flight: the producer and the sequence after it
    sent: dict[int, tuple[int, int]] = field(default_factory=dict)

    def answered(self, index: int, error_code: int) -> None:
        """The answer for partition ``index``: an accepted batch moves the sequence."""
        pid, after = self.sent.pop(index, (-1, 0))
        if pid >= 0 and error_code == 0:
            key = (pid, index)
            self.next_seq[key] = max(self.next_seq.get(key, 0), after)


_batch_specs = st.fixed_dictionaries(
    {
        "producer": st.sampled_from([None, *PRODUCERS, *PRODUCERS]),
        "sequence": st.sampled_from(["next"] * 12 + ["repeat", "gap", "zero"]),
        "bump_epoch": st.sampled_from([False] * 12 + [True]),
        "transactional": st.sampled_from([False, False, True]),
        "count": st.integers(1, 4),
        "value_size": st.sampled_from([0, 10, 300, 30_000]),
        "timestamp": st.sampled_from(["now"] * 12 + ["old", "future", "log_append"]),
        "damage": st.sampled_from([None] * 25 + ["crc", "base_offset", "short", "magic", "two"]),
        "compression": st.sampled_from([0, 0, 0, 1]),
    }
)

_produce_ops = st.tuples(
    st.just("produce"),
    st.lists(
        st.tuples(st.integers(0, PARTITIONS - 1), _batch_specs),
        min_size=1,
        max_size=PARTITIONS,
        unique_by=lambda entry: entry[0],
    ),
    st.sampled_from([1, 1, -1, 0]),
)
_other_ops = st.one_of(
    st.tuples(st.just("tick"), st.sampled_from([1, 500, 5_000, 30_000])),
    st.tuples(st.just("roll"), st.integers(0, PARTITIONS - 1)),
    st.tuples(
        st.just("config"),
        st.integers(0, PARTITIONS - 1),
        st.fixed_dictionaries(
            {
                "segment.bytes": st.sampled_from([1 << 20, 1 << 30]),
                "segment.ms": st.sampled_from([1_000, 604_800_000, 604_800_000]),
                "max.message.bytes": st.sampled_from([400, 1 << 20]),
                "flush.messages": st.sampled_from([5, 2**63 - 1, 2**63 - 1]),
                "message.timestamp.type": st.sampled_from(["CreateTime", "LogAppendTime"]),
                "message.timestamp.before.max.ms": st.sampled_from([60_000, 2**63 - 1]),
            }
        ),
    ),
    st.tuples(st.just("leader"), st.integers(0, PARTITIONS - 1)),
    st.tuples(st.just("expire")),
    st.tuples(st.just("end_txn"), st.sampled_from(PRODUCERS), st.booleans()),
)
# requests most of the time, a change of what the leases snapshot now and then
_ops = st.integers(0, 9).flatmap(lambda k: _produce_ops if k < 8 else _other_ops)


def _batch(
    backend: Backend, producers: Producers, index: int, spec: dict[str, Any], now: int
) -> bytes:
    """The records one partition of a request carries, built from ``spec``."""
    pid = spec["producer"]
    epoch, base_sequence = -1, -1
    if pid is not None:
        if spec["bump_epoch"]:
            producers.epochs[pid] += 1
            for key in [k for k in producers.next_seq if k[0] == pid]:
                producers.next_seq[key] = 0
        epoch = producers.epochs[pid]
        expected = producers.next_seq.get((pid, index), 0)
        base_sequence = {
            "next": expected,
            "repeat": max(0, expected - spec["count"]),
            "gap": expected + 2,
            "zero": 0,
        }[spec["sequence"]]
        producers.sent[index] = (pid, base_sequence + spec["count"])
    timestamp = {"now": now, "old": now - 3_600_000, "future": now + 7_200_000}.get(
        spec["timestamp"], now
    )
    records = [
        (i, timestamp + i, b"k%d" % i, b"v" * spec["value_size"], []) for i in range(spec["count"])
    ]
    data = backend.build_batch(
        records,
        base_offset=0,
        compression=spec["compression"],
        timestamp_type=1 if spec["timestamp"] == "log_append" else 0,
        producer_id=-1 if pid is None else pid,
        producer_epoch=epoch,
        base_sequence=base_sequence,
        transactional=pid is not None and spec["transactional"],
    )
    damage = spec["damage"]
    if damage == "crc":
        data = data[:-1] + bytes([data[-1] ^ 0xFF])
    elif damage == "base_offset":
        data = (5).to_bytes(8, "big") + data[8:]
    elif damage == "short":
        data = data[:-3]
    elif damage == "magic":
        data = data[:16] + b"\x01" + data[17:]
    elif damage == "two":
        data = data + data
    return data


def _apply(worlds: list[World], producers: Producers, op: tuple[Any, ...]) -> None:
    kind = op[0]
    if kind == "produce":
        request_specs, acks = op[1], op[2]
        backend = worlds[0].backend
        now = worlds[0].time.milliseconds()
        request = [
            (index, _batch(backend, producers, index, spec, now)) for index, spec in request_specs
        ]
        fast = _produce(worlds[0], request, acks, fast=True)
        slow = _produce(worlds[1], request, acks, fast=False)
        assert fast == slow
        for (index, _), answer in zip(request, fast, strict=True):
            producers.answered(index, answer[0])
        return
    for world in worlds:
        if kind == "tick":
            world.time.sleep(op[1])
        elif kind == "roll":
            world.partitions[op[1]].log.roll()
        elif kind == "config":
            world.partitions[op[1]].log.update_config(LogConfig(op[2]))
        elif kind == "leader":
            world.epoch += 1
            state = PartitionState((1,), 1, world.epoch, (1,), world.epoch)
            world.partitions[op[1]].make_leader(state, record_epoch_start=True)
        elif kind == "expire":
            for partition in world.partitions:
                partition.log.remove_expired_producers(world.time.milliseconds())
    if kind == "end_txn":
        pid, commit = op[1], op[2]
        codes = []
        for world in worlds:
            for partition in world.partitions:
                try:
                    partition.append_txn_marker(pid, producers.epochs[pid], 0, commit)
                    codes.append(0)
                except Exception as exc:
                    codes.append(error_code_for(exc))
        assert codes[:PARTITIONS] == codes[PARTITIONS:]


def _state(world: World) -> list[Any]:
    """Everything the two paths must agree on: offsets, producer state, every file."""
    state: list[Any] = []
    for partition in world.partitions:
        log = partition.log
        manager = log.producer_state
        assert manager is not None
        producers = sorted(
            (
                pid,
                entry.producer_epoch,
                entry.coordinator_epoch,
                entry.last_timestamp,
                entry.current_txn_first_offset,
                list(entry.batches),
            )
            for pid, entry in manager.active_producers.items()
        )
        state.append(
            (
                log.log_end_offset,
                partition.high_watermark,
                manager.map_end_offset,
                log.first_unstable_offset,
                producers,
            )
        )
        log.flush()
        for name in sorted(os.listdir(log.dir)):
            state.append((name, Path(log.dir, name).read_bytes()))
    return state


@contextmanager
def _worlds(backend: Backend) -> Iterator[list[World]]:
    with (
        tempfile.TemporaryDirectory(dir=_SCRATCH) as fast_dir,
        tempfile.TemporaryDirectory(dir=_SCRATCH) as slow_dir,
    ):
        worlds = [World(backend, fast_dir).open(), World(backend, slow_dir).open()]
        try:
            yield worlds
        finally:
            for world in worlds:
                world.close()


@pytest.mark.parametrize("backend_name", BACKENDS)
@settings(
    max_examples=examples(25),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(ops=st.lists(_ops, min_size=10, max_size=60))
def test_leased_produce_equals_the_python_path(
    backend_name: str, ops: list[tuple[Any, ...]]
) -> None:
    backend = load_backend(backend_name)
    producers = Producers()
    with _worlds(backend) as worlds:
        for op in ops:
            _apply(worlds, producers, op)
        assert worlds[1].leased == 0
        assert _state(worlds[0]) == _state(worlds[1])


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_a_plain_stream_goes_native_and_falls_back_where_it_must(backend_name: str) -> None:
    """In-sequence batches of a known producer and plain batches take the native path;
    a new producer's first batch, a duplicate, a roll and a new epoch take the Python
    path; the files and the state end up the same."""
    backend = load_backend(backend_name)
    producers = Producers()
    plain = {
        "producer": None,
        "sequence": "next",
        "bump_epoch": False,
        "transactional": False,
        "count": 2,
        "value_size": 10,
        "timestamp": "now",
        "damage": None,
        "compression": 0,
    }
    idempotent = {**plain, "producer": 1}
    with _worlds(backend) as worlds:
        stream: list[tuple[Any, ...]] = [
            ("produce", [(0, plain), (1, plain), (2, plain)], 1),  # 3 leased
            ("produce", [(0, idempotent)], 1),  # unknown producer: Python path
            ("produce", [(0, idempotent), (1, plain)], -1),  # 2 leased (re-granted)
            ("produce", [(0, {**idempotent, "sequence": "repeat"})], 1),  # duplicate
            ("roll", 0),
            ("produce", [(0, idempotent)], 1),  # 1 leased after the roll
            ("leader", 1),
            ("produce", [(1, plain)], 1),  # 1 leased at the new epoch
        ]
        for op in stream:
            _apply(worlds, producers, op)
        assert worlds[0].leased == 7
        assert worlds[1].leased == 0
        assert _state(worlds[0]) == _state(worlds[1])


def test_the_produce_handler_takes_the_leased_branch_over_the_wire(tmp_path: Path) -> None:
    """Through a broker: after an idempotent producer's first request (the Python path,
    which makes it known), its in-sequence requests over 3 partitions are appended by the
    leased branch - the leases survive them, where a Python-path append drops its log's
    lease - with the offsets the producer expects, and the records read back."""
    from kafkacore.native import backend
    from support.raw_client import APIS_BY_NAME, RawClient, run_broker

    produce = APIS_BY_NAME["Produce"].request.cls

    def request(sequence: int, acks: int) -> Any:
        now = int(time.time() * 1000)
        records = [(i, now, b"k", b"v%d" % (sequence + i), []) for i in range(2)]
        data = backend.build_batch(records, producer_id=7, producer_epoch=0, base_sequence=sequence)
        return produce(
            transactional_id=None,
            acks=acks,
            timeout_ms=5000,
            topic_data=[
                produce.TopicProduceData(
                    name="t",
                    partition_data=[
                        produce.PartitionProduceData(index=p, records=data) for p in range(3)
                    ],
                )
            ],
        )

    async def scenario(server: Any) -> None:
        rm = server.services.replica_manager
        await server.services.run_io(rm.create_topic, "t", 3)
        client = await RawClient.connect(server.bound_port)
        try:
            for round_, acks in enumerate([1, 1, -1, 1, -1]):
                response = await client.call("Produce", 9, request(2 * round_, acks))
                answers = response.responses[0].partition_responses
                assert [(a.error_code, a.base_offset) for a in answers] == [(0, 2 * round_)] * 3
            partitions = [rm.get_partition(TopicPartition("t", p)) for p in range(3)]
            for partition in partitions:
                assert partition.has_produce_lease(-1)
                assert partition.log.log_end_offset == 10
                assert partition.high_watermark == 10
                manager = partition.log.producer_state
                assert manager is not None
                assert manager.last_entry(7).last_seq == 9
                data = partition.log.read(0, 1 << 20, upper_bound=10).read_bytes()
                values = [r[3] for r in backend.batch_records(data, 0)]
                assert values == [b"v0", b"v1"]
        finally:
            client.close()

    run_broker(tmp_path, scenario)
