"""The tiered copy needs no kafkacore to be read: Apache Kafka 4.3.1's own
``DumpLogSegments`` reads the objects downloaded from the bucket as it reads the local
segment they were copied from, and reads kafkacore's ``__remote_log_metadata`` with its
``--remote-log-metadata-decoder``.

A real log's closed segments are tiered by the remote log manager into a real S3Proxy,
``__remote_log_metadata`` living in a real kafkacore broker; each object of one segment
is then downloaded (through S3, by key) into a directory of its own, under its Kafka
name, and dumped by Kafka beside the original.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafkacore.log.checkpoints import uuid_to_base64
from kafkacore.log.remote.layout import segment_prefix
from kafkacore.log.remote.model import RemoteLogSegmentState
from kafkacore.log.remote.object_store import S3ObjectStore
from kafkacore.log.remote.records import REMOTE_LOG_METADATA_TOPIC
from support.brokers import Broker, BrokerFactory
from support.object_store import ObjectStoreServer, bucket_name
from support.tiering import Tiering, make_log

pytestmark = [pytest.mark.interop, pytest.mark.downloads]


@pytest.fixture(scope="module")
def metadata_broker(broker_factory: BrokerFactory) -> Broker:
    return broker_factory("num.partitions=1")


@pytest.fixture(scope="module")
def tiered(
    metadata_broker: Broker,
    object_store: ObjectStoreServer,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Tiering]:
    bucket = object_store.create_bucket(bucket_name())
    store = S3ObjectStore(object_store.storage_config(bucket))
    log = make_log(tmp_path_factory.mktemp("tiered"), batches=80, txn_every=7)
    tiering = Tiering(metadata_broker, store, log)
    try:
        assert tiering.rlm.run_copy_task(tiering.tp) >= 3
        yield tiering
    finally:
        tiering.close()
        log.close()


def _download(tiering: Tiering, index: int, into: Path) -> tuple[Path, Path]:
    """Segment ``index``'s objects, downloaded under their names; (download dir, the
    local segment's directory)."""
    m = tiering.rlm.remote_segments(tiering.tp)[index]
    store = tiering.rlm.rsm.store
    into.mkdir(parents=True)
    for info in store.list(segment_prefix(m)):
        (into / info.key.rsplit("/", 1)[1]).write_bytes(store.get(info.key))
    return into, Path(tiering.log.dir)


def _normalise(text: str, directory: Path) -> str:
    return text.replace(str(directory), "<dir>")


@pytest.mark.parametrize(
    "options",
    [
        (),
        ("--deep-iteration", "--print-data-log"),
        ("--verify-index-only",),
        ("--index-sanity-check",),
    ],
)
def test_kafka_dumps_a_downloaded_segment_as_the_local_one(
    java: Any, tiered: Tiering, tmp_path: Path, options: tuple[str, ...]
) -> None:
    for index in (0, 1):
        downloaded, local = _download(tiered, index, tmp_path / f"s{index}")
        names = sorted(p.name for p in downloaded.iterdir())
        base = names[0].split(".")[0]
        assert f"{base}.log" in names and f"{base}.index" in names and f"{base}.timeindex" in names
        dumpable = [n for n in names if n != "leader-epoch-checkpoint"]
        theirs = java.dump_log_segments([downloaded / n for n in dumpable], *options).check()
        original = java.dump_log_segments([local / n for n in dumpable], *options).check()
        assert theirs.stderr.decode().count("Exception") == 0
        assert _normalise(theirs.stdout.decode(), downloaded) == _normalise(
            original.stdout.decode(), local
        )
        assert "baseOffset" in theirs.stdout.decode() or options


def test_kafka_dumps_a_downloaded_transaction_index(
    java: Any, tiered: Tiering, tmp_path: Path
) -> None:
    segments = tiered.rlm.remote_segments(tiered.tp)
    with_txns = [i for i, m in enumerate(segments) if not m.txn_index_empty]
    assert with_txns, "the log has aborted transactions in a tiered segment"
    downloaded, local = _download(tiered, with_txns[0], tmp_path / "txn")
    txn = next(p for p in downloaded.iterdir() if p.suffix == ".txnindex")
    theirs = java.dump_log_segments([txn]).check().stdout.decode()
    original = java.dump_log_segments([local / txn.name]).check().stdout.decode()
    assert "producerId: " in theirs and "lastStableOffset: " in theirs
    assert _normalise(theirs, downloaded) == _normalise(original, local)


def test_kafka_decodes_remote_log_metadata(
    java: Any, tiered: Tiering, metadata_broker: Broker
) -> None:
    segments = tiered.rlmm.cache(tiered.tip).segments()
    partition = tiered.rlmm.metadata_partition(tiered.tip)
    log_file = metadata_broker.data / f"{REMOTE_LOG_METADATA_TOPIC}-{partition}" / f"{0:020d}.log"
    out = java.dump_log_segments([log_file], "--remote-log-metadata-decoder").check()
    text = out.stdout.decode()
    payloads = re.findall(r"payload: (.*)", text)
    ours = [p for p in payloads if uuid_to_base64(tiered.tip.topic_id) in p]
    # every copy is two events (started, finished), each read by Kafka's decoder
    assert len(ours) == 2 * len(segments)
    for m in segments:
        sid = uuid_to_base64(m.segment_id.id)
        mine = [p for p in ours if sid in p]
        assert len(mine) == 2
        assert f"startOffset={m.start_offset}" in mine[0]
        assert f"endOffset={m.end_offset}" in mine[0]
        assert "state=COPY_SEGMENT_STARTED" in mine[0]
        assert "state=COPY_SEGMENT_FINISHED" in mine[1]
        assert m.state is RemoteLogSegmentState.COPY_SEGMENT_FINISHED
