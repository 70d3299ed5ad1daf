"""Protocol-level tests of broker fixes found by the client compatibility suite."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kafkacore.protocol import APIS_BY_NAME
from kafkacore.server import KafkaServer
from test_server_protocol import _req, run

pytestmark = pytest.mark.timeout(30)

# Kafka with no authorizer answers every operation the resource type supports.
TOPIC_OPS = {"READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE"} | {
    "DESCRIBE_CONFIGS",
    "ALTER_CONFIGS",
}
CLUSTER_OPS = {"CREATE", "ALTER", "DESCRIBE", "CLUSTER_ACTION", "DESCRIBE_CONFIGS"} | {
    "ALTER_CONFIGS",
    "IDEMPOTENT_WRITE",
}
ACL_CODES = {
    "READ": 3,
    "WRITE": 4,
    "CREATE": 5,
    "DELETE": 6,
    "ALTER": 7,
    "DESCRIBE": 8,
    "CLUSTER_ACTION": 9,
    "DESCRIBE_CONFIGS": 10,
    "ALTER_CONFIGS": 11,
    "IDEMPOTENT_WRITE": 12,
}


def _ops(field: int) -> set[str]:
    return {name for name, code in ACL_CODES.items() if field & (1 << code)}


def test_metadata_and_describe_cluster_authorized_operations(tmp_path: Path) -> None:
    """kafka-python 2.3's admin client asks for authorized operations (Metadata v8) and
    decodes the bit field; INT32_MIN there made it fail with "31 is not a valid
    ACLOperation"."""

    async def scenario(server: KafkaServer, connect: Any) -> None:
        client = await connect()
        topic = APIS_BY_NAME["Metadata"].request.cls.MetadataRequestTopic(name="t")
        asked = _req(
            "Metadata",
            topics=[topic],
            allow_auto_topic_creation=True,
            include_cluster_authorized_operations=True,
            include_topic_authorized_operations=True,
        )
        response = await client.call("Metadata", 8, asked)
        assert _ops(response.cluster_authorized_operations) == CLUSTER_OPS
        assert _ops(response.topics[0].topic_authorized_operations) == TOPIC_OPS
        assert response.topics[0].topic_authorized_operations > 0
        not_asked = _req("Metadata", topics=[topic], allow_auto_topic_creation=True)
        response = await client.call("Metadata", 8, not_asked, cid=2)
        assert response.cluster_authorized_operations == -(2**31)
        assert response.topics[0].topic_authorized_operations == -(2**31)
        response = await client.call(
            "DescribeCluster",
            1,
            _req("DescribeCluster", include_cluster_authorized_operations=True),
            cid=3,
        )
        assert _ops(response.cluster_authorized_operations) == CLUSTER_OPS

    run(tmp_path, scenario)
