"""A real log with closed segments and a remote log manager over it, for the tiered
storage tests (tests/test_remote_storage.py, tests/interop/test_tiered_objects_vs_kafka.py):
the log is kafkacore's, the bucket a real S3Proxy's, ``__remote_log_metadata`` a real
kafkacore broker's topic."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path
from typing import Any

from kafkacore.client.tiered import ClientMetadataTopic
from kafkacore.config import BrokerConfig, LogConfig
from kafkacore.log import Log
from kafkacore.log.files import TopicPartition
from kafkacore.log.producer_state import ProducerStateManager
from kafkacore.log.remote.manager import RemoteLogManager, RemoteLogManagerConfig
from kafkacore.log.remote.metadata import TopicBasedRemoteLogMetadataManager
from kafkacore.log.remote.model import TopicIdPartition
from kafkacore.log.remote.object_store import S3ObjectStore
from kafkacore.log.remote.storage import RemoteStorageManager
from kafkacore.record import build_batch, iter_batches, records
from support.brokers import Broker

SEGMENT_BYTES = 8 << 10
TIERED_BROKER = BrokerConfig({"remote.log.storage.system.enable": "true"})


def log_config(base: LogConfig | None = None, **overrides: Any) -> LogConfig:
    """A topic config on a broker with tiered storage (``local_retention_bytes=0`` ->
    ``local.retention.bytes``)."""
    values = dict(base.originals) if base is not None else {}
    values.update({k.replace("_", "."): v for k, v in overrides.items()})
    return LogConfig(values, TIERED_BROKER)


def make_log(
    directory: Path,
    *,
    batches: int = 60,
    topic_id: uuid.UUID | None = None,
    txn_every: int = 0,
    **config: Any,
) -> Log:
    """A tiered topic's partition ``orders-0`` in ``directory`` with ``batches`` batches of
    10 records in 8 KiB segments; every ``txn_every``-th batch (0: none) is a transaction,
    aborted when odd-numbered, else committed."""
    values: dict[str, Any] = {
        "internal.segment.bytes": SEGMENT_BYTES,
        "remote.storage.enable": True,
        "index.interval.bytes": 1024,
    }
    values.update(config)
    topic_config = LogConfig(values, TIERED_BROKER)
    tp = TopicPartition("orders", 0)
    path = directory / str(tp)
    path.mkdir(parents=True, exist_ok=True)
    log = Log(
        path,
        topic_config,
        topic_partition=tp,
        topic_id=topic_id or uuid.uuid4(),
        producer_state=ProducerStateManager(str(path), topic_partition=str(tp)),
        remote_storage_system_enable=True,
    )
    append(log, batches, txn_every=txn_every)
    return log


def append(
    log: Log, batches: int, *, epoch: int = 0, start_ms: int | None = None, txn_every: int = 0
) -> None:
    """``batches`` batches of 10 records, timestamps one ms apart per batch."""
    now = start_ms if start_ms is not None else int(time.time() * 1000)
    for i in range(batches):
        rows = [(j, now + i, f"k{i}".encode(), os.urandom(40) + bytes([j]), []) for j in range(10)]
        if txn_every and i % txn_every == txn_every - 1:
            pid = 1000 + i
            batch = build_batch(
                rows, producer_id=pid, producer_epoch=0, base_sequence=0, transactional=True
            )
            log.append_as_leader(batch, leader_epoch=epoch)
            log.append_txn_marker(pid, 0, 0, commit=(i // txn_every) % 2 == 0, leader_epoch=epoch)
        else:
            log.append_as_leader(build_batch(rows), leader_epoch=epoch)


def all_local_bytes(log: Log, start: int) -> bytes:
    out = []
    offset = start
    while offset < log.log_end_offset:
        info = log.read(offset, 1 << 20)
        data = info.read_bytes()
        out.append(data)
        last = 0
        for pos, _m, _s in iter_batches(data):
            last = records(data, pos)[-1].offset
        offset = last + 1
    return b"".join(out)


class Tiering:
    """A log, its remote log manager and metadata manager, for one test."""

    def __init__(self, broker: Broker, store: S3ObjectStore, log: Log, **config: Any) -> None:
        self.log = log
        self.tp = log.topic_partition
        self.hw = log.log_end_offset
        self.rlmm = TopicBasedRemoteLogMetadataManager(
            ClientMetadataTopic(broker.bootstrap, client_id="rlmm-test"),
            broker_id=1,
            num_partitions=3,
            replication_factor=1,
            poll_interval_s=0.02,
        )
        self.rlmm.start()
        self.rlm = RemoteLogManager(
            RemoteLogManagerConfig(**config),
            broker_id=1,
            log_dir=str(Path(log.dir).parent),
            rsm=RemoteStorageManager(store),
            rlmm=self.rlmm,
            get_log=lambda tp: self.log if tp == self.tp else None,
            high_watermark=lambda tp: self.hw,
        )
        assert log.topic_id is not None
        self.tip = TopicIdPartition(log.topic_id, self.tp.topic, self.tp.partition)
        self.lead(0)

    def lead(self, epoch: int) -> None:
        assert self.log.topic_id is not None
        self.rlm.on_leadership_change({self.tp: (self.log.topic_id, epoch)}, {})
        assert self.rlmm.wait_ready(self.tip, 30)

    def close(self) -> None:
        self.rlm.close()
        self.rlmm.close()


def produce_transactions(
    bootstrap: str, topic: str, transactions: int, per_transaction: int = 200
) -> list[bytes]:
    """``transactions`` transactions of ``per_transaction`` records of about 1 KiB from
    one transactional confluent-kafka producer, every third one (the 2nd, 5th, ...)
    aborted after its records were written; the committed values, in order."""
    import uuid as uuid_mod

    import confluent_kafka as ck

    producer = ck.Producer(
        {"bootstrap.servers": bootstrap, "transactional.id": f"tx-{uuid_mod.uuid4().hex}"}
    )
    producer.init_transactions(30)
    committed: list[bytes] = []
    for t in range(transactions):
        producer.begin_transaction()
        values = [b"%d-%d-" % (t, i) + os.urandom(1000) for i in range(per_transaction)]
        for v in values:
            producer.produce(topic, v)
        if t % 3 == 1:
            producer.flush(30)  # the aborted records are written (else never sent)
            producer.abort_transaction(30)
        else:
            producer.commit_transaction(30)
            committed.extend(values)
    return committed
