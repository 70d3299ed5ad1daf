"""The native produce path against the Python path (figures, not pass/fail): `make bench`.

One Produce request = one idempotent batch (16 records of 100 B, in sequence) for each
of 1, 6 or 100 partitions, appended at the partition layer as the Produce handler does:

* ``leased``: ``ReplicaManager.append_leased_records`` - the partitions' leases and one
  backend ``produce_append`` call for the whole request (GIL released on native);
* ``python path``: per partition ``validate_produce_records`` +
  ``Partition.append_records_to_leader`` (the log's validator, producer state, segment).

Both backends; every figure is the bytes of a round of requests over its median time.
"""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from kafkacore.config import LogConfig
from kafkacore.log import Log, TopicPartition
from kafkacore.log.producer_state import ProducerStateManager
from kafkacore.log.validator import validate_produce_records
from kafkacore.metadata.store import PartitionState
from kafkacore.server.partition import Partition
from kafkacore.server.replica_manager import ReplicaManager

CONFIG = LogConfig({"segment.bytes": 1 << 30})
RECORDS = 16
VALUE = b"x" * 100
# requests per round: native / pure
REQUESTS = {1: (400, 40), 6: (150, 15), 100: (10, 2)}


def _world(root: Path, backend: ModuleType, partitions: int) -> list[Partition]:
    world = []
    for index in range(partitions):
        directory = root / f"t-{index}"
        log = Log(
            directory,
            CONFIG,
            backend=backend,
            producer_state=ProducerStateManager(directory),
        )
        partition = Partition(TopicPartition("t", index), log, 1)
        partition.make_leader(PartitionState((1,), 1, 0, (1,), 0), record_epoch_start=True)
        world.append(partition)
    return world


def _requests(backend: ModuleType, partitions: int, count: int) -> list[list[bytes]]:
    """``count`` requests of in-sequence batches of producer 1 after its first batch."""
    now = 1_700_000_000_000
    records = [(i, now + i, None, VALUE, []) for i in range(RECORDS)]
    return [
        [
            bytes(
                backend.build_batch(
                    records, producer_id=1, producer_epoch=0, base_sequence=(r + 1) * RECORDS
                )
            )
            for _ in range(partitions)
        ]
        for r in range(count)
    ]


@pytest.mark.parametrize("partitions", [1, 6, 100])
@pytest.mark.parametrize("path", ["leased", "python"])
def test_produce_request(
    benchmark: Any,
    backend: ModuleType,
    backend_name: str,
    tmp_path: Path,
    partitions: int,
    path: str,
) -> None:
    count = REQUESTS[partitions][0 if backend_name == "native" else 1]
    requests = _requests(backend, partitions, count)
    rounds = itertools.count()
    opened: list[Partition] = []

    def setup() -> tuple[tuple[Any, ...], dict[str, Any]]:
        for partition in opened:  # closing (fsync) is not part of the timed requests
            partition.log.close()
            shutil.rmtree(partition.log.dir)
        opened.clear()
        world = _world(tmp_path / f"round-{next(rounds)}", backend, partitions)
        opened.extend(world)
        # the producer's first batch (sequences 0..15) makes it known everywhere
        for partition in world:
            batch = backend.build_batch(
                [(i, 1_700_000_000_000, None, VALUE, []) for i in range(RECORDS)],
                producer_id=1,
                producer_epoch=0,
                base_sequence=0,
            )
            partition.append_records_to_leader(bytes(batch))
        return (world,), {}

    def leased(world: list[Partition]) -> None:
        for request in requests:
            infos = ReplicaManager.append_leased_records(list(zip(world, request, strict=True)), 1)
            assert infos is not None and None not in infos

    def python_path(world: list[Partition]) -> None:
        for request in requests:
            for partition, records in zip(world, request, strict=True):
                partition.append_records_to_leader(validate_produce_records(records))

    amount = sum(len(batch) for request in requests for batch in request)
    benchmark.extra_info.update(
        {
            "op": f"produce request, {partitions} partition(s), {path} path",
            "impl": backend_name,
            "amount": amount,
            "unit": "bytes",
            "requests": count,
        }
    )
    benchmark.pedantic(leased if path == "leased" else python_path, setup=setup, rounds=5)
