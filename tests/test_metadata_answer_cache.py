"""The broker's shared all-topics Metadata answer (``server/channel.py``'s encoded answers,
keyed by ``handlers.cluster.shared_metadata_answer``): built once per listener, version and
flags, answered from its bytes while the metadata cache does not change, and built again
after any change a client would see (a topic created, grown or deleted, a leader moved, a
broker's endpoint changed). Real broker, raw requests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kafkacore.metadata import PartitionState
from kafkacore.metadata.cache import BrokerInfo
from kafkacore.protocol import ApiKey
from kafkacore.server import KafkaServer
from kafkacore.server.handlers import HANDLERS
from support.raw_client import RawClient, make_request, run_broker

pytestmark = pytest.mark.timeout(60)


def _all_topics(version: int) -> Any:
    return make_request("Metadata", topics=None, allow_auto_topic_creation=False)


def _shape(answer: Any) -> dict[str, list[tuple[int, int, int]]]:
    """topic -> [(partition, leader, leader epoch)]"""
    return {
        t.name: [(p.partition_index, p.leader_id, p.leader_epoch) for p in t.partitions]
        for t in answer.topics
    }


def test_the_all_topics_answer_is_shared_and_follows_every_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[int] = []
    handler = HANDLERS[ApiKey.METADATA]

    def counting(services: Any, context: Any, request: Any) -> Any:
        built.append(context.api_version)
        return handler(services, context, request)

    monkeypatch.setitem(HANDLERS, ApiKey.METADATA, counting)

    async def scenario(server: KafkaServer) -> None:
        services = server.services
        assert services is not None
        client = await RawClient.connect(server.bound_port)
        cid = iter(range(1, 1000))

        async def metadata(version: int = 12) -> Any:
            return await client.call("Metadata", version, _all_topics(version), next(cid))

        create: Any = type(make_request("CreateTopics"))
        await client.call(
            "CreateTopics",
            7,
            create(
                topics=[create.CreatableTopic(name="a", num_partitions=2, replication_factor=1)],
                timeout_ms=5000,
            ),
            next(cid),
        )
        first = await metadata()
        assert [(p, leader) for p, leader, _ in _shape(first)["a"]] == [(0, 1), (1, 1)]
        count = len(built)
        second = await metadata()
        assert len(built) == count  # answered from the kept bytes
        assert _shape(second) == _shape(first) and second.brokers == first.brokers
        # another version is another answer (v1 has no leader epochs, no topic ids)
        older = await metadata(1)
        assert len(built) == count + 1
        assert [(p, leader) for p, leader, _ in _shape(older)["a"]] == [(0, 1), (1, 1)]
        # a named topic is answered for its request alone
        named: Any = type(make_request("Metadata"))
        await client.call(
            "Metadata", 12, named(topics=[named.MetadataRequestTopic(name="a")]), next(cid)
        )
        assert len(built) == count + 2

        # grown: the next answer shows the third partition
        grow: Any = type(make_request("CreatePartitions"))
        await client.call(
            "CreatePartitions",
            3,
            grow(
                topics=[grow.CreatePartitionsTopic(name="a", count=3, assignments=None)],
                timeout_ms=5000,
            ),
            next(cid),
        )
        assert len(_shape(await metadata())["a"]) == 3

        # a leader moved (as a ZooKeeper-mode broker learns it from UpdateMetadata)
        moved = PartitionState((1, 2), 2, 7, (1, 2), 7)
        services.metadata_cache.update_partition_states("a", None, {0: moved})
        assert _shape(await metadata())["a"][0] == (0, 2, 7)

        # a broker's endpoint changed
        me = services.metadata_cache.broker(1)
        assert me is not None
        services.metadata_cache.register_broker(BrokerInfo(1, "elsewhere", 1234, me.rack))
        assert [(b.node_id, b.host, b.port) for b in (await metadata()).brokers] == [
            (1, "elsewhere", 1234)
        ]
        services.metadata_cache.register_broker(me)

        # deleted: gone from the next answer
        delete: Any = type(make_request("DeleteTopics"))
        await client.call("DeleteTopics", 5, delete(topic_names=["a"], timeout_ms=5000), next(cid))
        assert "a" not in _shape(await metadata())
        before = len(built)
        await metadata()
        assert len(built) == before  # and kept again until the next change
        client.close()

    run_broker(tmp_path, scenario)
