"""kafkacore's metadata image against Apache Kafka 4.3.1's (``MetadataDelta``,
``MetadataImage.write``), through java/MetadataImages.java in one JVM.

Random valid histories (``support.metadata_ops``: bootstrap features, brokers with their
epochs, fencing, topics and partition changes with ELR, configs, client quotas, producer
ids, ACLs, SCRAM, tokens, controller registrations, ClearElr, removals) are replayed batch
by batch by both. Then Kafka writes its image out as records (what its snapshots hold):
the same records, byte for byte, as kafkacore's image writes (order aside: Kafka's hash
maps decide it), and kafkacore replaying Kafka's records as a snapshot gets its own image
back. A record no image can replay is refused by both, and changes neither.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkacore.metadata.image import EMPTY_IMAGE, MetadataDelta, MetadataImage, MetadataProvenance
from kafkacore.metadata.records import decode_record, encode_record
from support.budget import examples
from support.metadata_ops import Batch, bad_record, history

pytestmark = [pytest.mark.interop, pytest.mark.downloads]


@pytest.fixture(scope="module")
def kafka(java: Any) -> Iterator[Any]:
    with java.serve("MetadataImages") as server:
        yield server


def _frames(batch: Batch) -> str:
    return ",".join(encode_record(r).hex() for r in batch.records)


def _ours(image: MetadataImage, batch: Batch) -> MetadataImage:
    """Our replay of the batch as it is on disk (encoded, then read)."""
    delta = MetadataDelta(image)
    for record in batch.records:
        delta.replay(decode_record(encode_record(record)))
    return delta.apply(MetadataProvenance(batch.base_offset + len(batch.records) - 1, 1, 0))


def _kafka_records(kafka: Any) -> list[str]:
    answer = kafka.ask("write")
    assert answer.startswith("ok"), answer
    body = answer[3:]
    return body.split(",") if body else []


@settings(
    max_examples=examples(25),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(seed=st.integers(0, 2**32), operations=st.integers(0, 80))
def test_images_equal_kafkas(kafka: Any, seed: int, operations: int) -> None:
    rnd = random.Random(seed)
    batches = history(rnd, operations)
    assert kafka.ask("reset") == "ok"
    image = EMPTY_IMAGE
    for batch in batches:
        assert kafka.ask(f"batch {batch.base_offset} {_frames(batch)}") == "ok"
        image = _ours(image, batch)
    bad = Batch(batches[-1].base_offset + 1000, [bad_record(rnd, batches)])
    answer = kafka.ask(f"batch {bad.base_offset} {_frames(bad)}")
    assert answer.startswith("err "), answer
    frames = _kafka_records(kafka)
    assert sorted(frames) == sorted(encode_record(r).hex() for r in image.records())
    snapshot = MetadataDelta(EMPTY_IMAGE)
    for frame in frames:
        snapshot.replay(decode_record(bytes.fromhex(frame)))
    snapshot.finish_snapshot()
    assert snapshot.apply(image.provenance) == image


@settings(
    max_examples=examples(10),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(seed=st.integers(0, 2**32))
# Known and open (issue 27): some drawn histories end with different SCRAM credentials after
# the snapshot on the two sides (seed 16581135); not yet traced to our image or the Java
# harness
@pytest.mark.xfail(strict=False, reason="SCRAM after a snapshot vs Kafka: issue 27")
def test_a_snapshot_replaces_the_image_as_kafkas_does(kafka: Any, seed: int) -> None:
    """Over an unrelated image, both load our snapshot to the same image."""
    before = history(random.Random(seed), 30)
    target = EMPTY_IMAGE
    for batch in history(random.Random(seed + 1), 30):
        target = _ours(target, batch)
    assert kafka.ask("reset") == "ok"
    ours = EMPTY_IMAGE
    for batch in before:
        assert kafka.ask(f"batch {batch.base_offset} {_frames(batch)}") == "ok"
        ours = _ours(ours, batch)
    snapshot = Batch(0, target.records())
    assert kafka.ask(f"snapshot {target.offset} {_frames(snapshot)}") == "ok"
    delta = MetadataDelta(ours)
    for record in snapshot.records:
        delta.replay(record)
    delta.finish_snapshot()
    ours = delta.apply(target.provenance)
    written = MetadataDelta(EMPTY_IMAGE)
    for frame in _kafka_records(kafka):
        written.replay(decode_record(bytes.fromhex(frame)))
    assert written.apply(target.provenance) == ours
