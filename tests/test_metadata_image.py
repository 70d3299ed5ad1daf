"""The metadata image and its deltas (kafkacore.metadata.image): records replayed one by
one, the image written back as records, snapshots replacing an image, what a delta
means for one broker, the loader's transactions and catch-up, and the records no image
can replay. ``tests/interop/test_metadata_image_vs_kafka.py`` replays the same histories
into Kafka 4.3.1's own ``MetadataDelta`` and compares the images."""

from __future__ import annotations

import dataclasses
import random
import uuid
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkacore.log import TopicPartition
from kafkacore.metadata.image import (
    EMPTY_IMAGE,
    LogDeltaManifest,
    MetadataDelta,
    MetadataImage,
    MetadataLoader,
    MetadataProvenance,
    MetadataReplayError,
    SnapshotManifest,
)
from kafkacore.metadata.image.configs import ConfigResource
from kafkacore.metadata.records import MetadataRecordType, encode_record
from kafkacore.metadata.versions import LATEST_PRODUCTION
from kafkacore.protocol.messages.raft_records import ControlRecordType
from kafkacore.raft.records import (
    ControlRecord,
    build_control_batch,
    build_data_batch,
    iter_batches,
    leader_change_message,
)
from support.budget import examples
from support.metadata_ops import Batch, bad_record, history, make

T = MetadataRecordType
TOPIC_ID = uuid.UUID(int=(1 << 100) | 7)


def replay(batches: list[Batch], image: MetadataImage = EMPTY_IMAGE) -> MetadataImage:
    """One delta per batch, as a loader publishes them."""
    for batch in batches:
        delta = MetadataDelta(image)
        for record in batch.records:
            delta.replay(record)
        last = batch.base_offset + len(batch.records) - 1
        image = delta.apply(MetadataProvenance(last, 1, 0))
    return image


def replay_at_once(batches: list[Batch]) -> MetadataImage:
    delta = MetadataDelta(EMPTY_IMAGE)
    for batch in batches:
        for record in batch.records:
            delta.replay(record)
    last = batches[-1].base_offset + len(batches[-1].records) - 1
    return delta.apply(MetadataProvenance(last, 1, 0))


def snapshot_of(image: MetadataImage, base: MetadataImage = EMPTY_IMAGE) -> MetadataImage:
    delta = MetadataDelta(base)
    for record in image.records():
        delta.replay(record)
    delta.finish_snapshot()
    return delta.apply(image.provenance)


@settings(max_examples=examples(40), deadline=None)
@given(seed=st.integers(0, 2**32), operations=st.integers(0, 60))
def test_histories_replay_alike_and_round_trip(seed: int, operations: int) -> None:
    """Batch by batch or all in one delta, the image is the same; written back as
    records and replayed as a snapshot - onto nothing, or onto an unrelated image - it
    is the same again."""
    batches = history(random.Random(seed), operations)
    image = replay(batches)
    assert snapshot_of(image) == image
    plain = history(random.Random(seed), operations, topic_configs=False)
    assert replay(plain) == replay_at_once(plain)
    other = replay(history(random.Random(seed + 1), operations))
    onto_other = snapshot_of(image, other)
    if image.producer_ids.is_empty():  # as Kafka's: a snapshot never takes producer ids back
        assert onto_other.producer_ids == other.producer_ids
        onto_other = dataclasses.replace(onto_other, producer_ids=image.producer_ids)
    assert onto_other == image
    for record in image.records():  # every record written is encodable at its version
        encode_record(record)


@settings(max_examples=examples(20), deadline=None)
@given(seed=st.integers(0, 2**32))
def test_records_no_image_can_replay_are_refused(seed: int) -> None:
    rnd = random.Random(seed)
    image = replay(history(rnd, 20))
    delta = MetadataDelta(image)
    with pytest.raises(MetadataReplayError):
        delta.replay(bad_record(rnd, []))
    assert delta.apply(image.provenance) == image  # the refused record changed nothing


def _bootstrapped() -> MetadataImage:
    return replay(history(random.Random(0), 0))


def _register(broker: int, epoch: int, fenced: bool = True) -> Any:
    return make(
        T.REGISTER_BROKER_RECORD,
        4,
        broker_id=broker,
        incarnation_id=uuid.uuid4(),
        broker_epoch=epoch,
        fenced=fenced,
    )


def test_broker_epochs_fence_and_unfence() -> None:
    image = replay([Batch(6, [_register(1, 6)])], _bootstrapped())
    assert image.cluster.broker(1).fenced and image.cluster.broker_epoch(1) == 6
    image = replay([Batch(7, [make(T.UNFENCE_BROKER_RECORD, id=1, epoch=6)])], image)
    assert not image.cluster.broker(1).fenced
    assert [b.id for b in image.cluster.unfenced_brokers()] == [1]
    change = make(
        T.BROKER_REGISTRATION_CHANGE_RECORD,
        1,
        broker_id=1,
        broker_epoch=6,
        fenced=1,
        in_controlled_shutdown=1,
    )
    image = replay([Batch(8, [change])], image)
    broker = image.cluster.broker(1)
    assert broker.fenced and broker.in_controlled_shutdown
    stale = MetadataDelta(image)
    with pytest.raises(MetadataReplayError, match="did not match the current broker epoch, 6"):
        stale.replay(make(T.UNFENCE_BROKER_RECORD, id=1, epoch=5))
    with pytest.raises(MetadataReplayError, match="but that broker was not registered"):
        stale.replay(make(T.FENCE_BROKER_RECORD, id=2, epoch=6))
    bad = make(T.BROKER_REGISTRATION_CHANGE_RECORD, broker_id=1, broker_epoch=6, fenced=3)
    with pytest.raises(MetadataReplayError, match="unknown value for fenced field: 3"):
        stale.replay(bad)
    gone = replay(
        [Batch(9, [make(T.UNREGISTER_BROKER_RECORD, broker_id=1, broker_epoch=6)])], image
    )
    assert gone.cluster.broker(1) is None and gone.cluster.broker_epoch(1) == -1


def _topic(partitions: int = 2, replicas: tuple[int, ...] = (1, 2, 3)) -> list[Any]:
    return [
        make(T.TOPIC_RECORD, name="orders", topic_id=TOPIC_ID),
        *(
            make(
                T.PARTITION_RECORD,
                2,
                partition_id=p,
                topic_id=TOPIC_ID,
                replicas=list(replicas),
                isr=list(replicas),
                leader=replicas[p % len(replicas)],
                leader_epoch=0,
                partition_epoch=0,
            )
            for p in range(partitions)
        ),
    ]


def test_partition_changes_bump_epochs_and_keep_what_they_do_not_name() -> None:
    image = replay([Batch(6, _topic())], _bootstrapped())
    p0 = image.topics.partition("orders", 0)
    assert p0.directories == (uuid.UUID(int=0),) * 3  # no directories: MIGRATING
    shrink = make(
        T.PARTITION_CHANGE_RECORD,
        2,
        partition_id=0,
        topic_id=TOPIC_ID,
        isr=[1],
        eligible_leader_replicas=[2, 3],
    )
    image = replay([Batch(9, [shrink])], image)
    p0 = image.topics.partition(TOPIC_ID, 0)
    assert (p0.isr, p0.elr, p0.leader, p0.leader_epoch, p0.partition_epoch) == (
        (1,),
        (2, 3),
        1,
        0,
        1,
    )
    move = make(T.PARTITION_CHANGE_RECORD, 2, partition_id=0, topic_id=TOPIC_ID, leader=2)
    p0 = replay([Batch(10, [move])], image).topics.partition("orders", 0)
    assert (p0.leader, p0.leader_epoch, p0.partition_epoch, p0.isr) == (2, 1, 2, (1,))


def test_clear_elr_of_one_topic_or_all() -> None:
    other = uuid.UUID(int=(1 << 100) | 8)
    records = [
        *_topic(1),
        make(T.TOPIC_RECORD, name="other", topic_id=other),
        make(
            T.PARTITION_RECORD,
            2,
            partition_id=0,
            topic_id=other,
            replicas=[1, 2],
            isr=[1],
            leader=1,
            partition_epoch=0,
            eligible_leader_replicas=[2],
            last_known_elr=[2],
        ),
        make(
            T.PARTITION_CHANGE_RECORD,
            2,
            partition_id=0,
            topic_id=TOPIC_ID,
            isr=[1],
            eligible_leader_replicas=[2],
        ),
    ]
    image = replay([Batch(6, records)], _bootstrapped())
    one = replay([Batch(10, [make(T.CLEAR_ELR_RECORD, topic_name="orders")])], image)
    assert one.topics.partition("orders", 0).elr == ()
    assert one.topics.partition("other", 0).elr == (2,)
    every = replay([Batch(10, [make(T.CLEAR_ELR_RECORD, topic_name="")])], image)
    assert every.topics.partition("other", 0).elr == ()
    assert every.topics.partition("other", 0).last_known_elr == ()
    assert every.topics.partition("other", 0).partition_epoch == 1
    with pytest.raises(MetadataReplayError, match="Unable to clear elr for topic with name x"):
        MetadataDelta(image).replay(make(T.CLEAR_ELR_RECORD, topic_name="x"))


def test_removing_a_topic_removes_its_configs() -> None:
    config = make(
        T.CONFIG_RECORD, resource_type=2, resource_name="orders", name="retention.ms", value="1"
    )
    image = replay([Batch(6, [*_topic(), config])], _bootstrapped())
    assert image.configs.configs(ConfigResource(2, "orders")) == {"retention.ms": "1"}
    image = replay([Batch(10, [make(T.REMOVE_TOPIC_RECORD, topic_id=TOPIC_ID)])], image)
    assert image.topics.topic("orders") is None
    assert ConfigResource(2, "orders") not in image.configs.data


def test_local_changes_say_what_a_broker_leads_follows_and_deletes() -> None:
    image = replay([Batch(6, _topic(2, (1, 2)))], _bootstrapped())
    delta = MetadataDelta(image)
    delta.replay(make(T.PARTITION_CHANGE_RECORD, 2, partition_id=0, topic_id=TOPIC_ID, leader=2))
    delta.replay(
        make(
            T.PARTITION_CHANGE_RECORD,
            2,
            partition_id=1,
            topic_id=TOPIC_ID,
            replicas=[2, 3],
            isr=[2, 3],
        )
    )
    changes = delta.topics().local_changes(2)
    p0, p1 = TopicPartition("orders", 0), TopicPartition("orders", 1)
    assert (set(changes.leaders), set(changes.elected_leaders)) == ({p0, p1}, {p0})
    assert changes.topic_ids == {"orders": TOPIC_ID} and not changes.followers
    joining = delta.topics().local_changes(3)
    assert set(joining.followers) == {p1} and set(joining.directory_ids) == {(TOPIC_ID, p1)}
    assert delta.topics().local_changes(1).deletes == {TopicPartition("orders", 1)}
    removed = MetadataDelta(image)
    removed.replay(make(T.REMOVE_TOPIC_RECORD, topic_id=TOPIC_ID))
    assert removed.topics().local_changes(1).deletes == {
        TopicPartition("orders", 0),
        TopicPartition("orders", 1),
    }


def test_feature_levels_and_metadata_version() -> None:
    image = _bootstrapped()
    assert image.features.metadata_version == LATEST_PRODUCTION
    assert image.features.is_elr_enabled
    assert image.features.level("group.version") == 1
    off = replay(
        [Batch(6, [make(T.FEATURE_LEVEL_RECORD, name="group.version", feature_level=0)])], image
    )
    assert "group.version" not in off.features.finalized
    with pytest.raises(MetadataReplayError, match="No MetadataVersion with feature level 99"):
        MetadataDelta(image).replay(
            make(T.FEATURE_LEVEL_RECORD, name="metadata.version", feature_level=99)
        )


# -- the loader ------------------------------------------------------------------------------


class Recorder:
    name = "recorder"

    def __init__(self) -> None:
        self.seen: list[tuple[MetadataDelta, MetadataImage, Any]] = []

    def on_metadata_update(self, delta: MetadataDelta, image: MetadataImage, manifest: Any) -> None:
        self.seen.append((delta, image, manifest))


def _raft_batches(batches: list[Batch], epoch: int = 1) -> list[Any]:
    data = b"".join(
        build_data_batch(
            b.base_offset, epoch, 1000 + b.base_offset, [encode_record(r) for r in b.records]
        )
        for b in batches
    )
    return list(iter_batches(data))


def test_loader_publishes_each_commit_and_whole_transactions() -> None:
    recorder = Recorder()
    loader = MetadataLoader([recorder])
    loader.handle_commit(_raft_batches(history(random.Random(3), 0)))
    assert isinstance(recorder.seen[-1][2], LogDeltaManifest)
    assert recorder.seen[-1][1].features.metadata_version == LATEST_PRODUCTION
    begin = make(T.BEGIN_TRANSACTION_RECORD, name="create")
    first = [Batch(6, [begin, *_topic(1)])]
    loader.handle_commit(_raft_batches(first))
    assert len(recorder.seen) == 1  # inside a transaction: nothing published
    loader.handle_commit(_raft_batches([Batch(9, [make(T.ABORT_TRANSACTION_RECORD)])]))
    assert len(recorder.seen) == 2 and loader.image.topics.topic("orders") is None
    assert loader.offset == 9
    loader.handle_commit(
        _raft_batches([Batch(10, [begin, *_topic(1)]), Batch(13, [make(T.END_TRANSACTION_RECORD)])])
    )
    assert loader.image.topics.topic("orders") is not None
    change = ControlRecord(ControlRecordType.LEADER_CHANGE, leader_change_message(1, [1], [1]))
    loader.handle_commit(list(iter_batches(build_control_batch(14, 2, 0, [change]))))
    assert (loader.offset, loader.image.provenance.last_epoch) == (14, 2)  # the offset only


def test_loader_holds_publications_until_caught_up_and_greets_late_publishers() -> None:
    recorder = Recorder()
    batches = history(random.Random(4), 10)
    last = batches[-1].base_offset + len(batches[-1].records) - 1
    loader = MetadataLoader([recorder], catch_up_offset=last)
    loader.handle_commit(_raft_batches(batches[:-1]))
    assert recorder.seen == []
    loader.handle_commit(_raft_batches(batches[-1:]))
    ((delta, image, _manifest),) = recorder.seen
    assert image.same_content(replay(batches)) and delta.image is EMPTY_IMAGE
    late = Recorder()
    loader.install_publisher(late)
    ((delta, image, manifest),) = late.seen
    assert image is loader.image and isinstance(manifest, SnapshotManifest)
    assert delta.apply(image.provenance) == image


def test_loader_snapshot_replaces_the_image() -> None:
    recorder = Recorder()
    loader = MetadataLoader([recorder])
    loader.handle_commit(_raft_batches(history(random.Random(5), 30)))
    target = replay(history(random.Random(6), 30))
    loader.load_snapshot(target.records(), target.provenance)
    assert loader.image == target
    assert isinstance(recorder.seen[-1][2], SnapshotManifest)
