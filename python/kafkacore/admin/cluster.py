"""Reads of the cluster the operations share: metadata, the brokers, the replica
assignment of topics (Kafka's ``ReassignPartitionsCommand.getReplicaAssignmentForTopics``),
and the requests that must reach the controller, with Kafka's error texts.

Thread-safety: the functions block; any thread.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from kafkacore.admin.client import TIMEOUT, TP, Admin, AdminError, error_text, wait

__all__ = [
    "controller_call",
    "current_assignment",
    "error_message",
    "exception_name",
    "exception_text",
    "metadata",
    "nodes",
    "replica_assignment",
]


def metadata(admin: Admin) -> Any:
    """The cluster's metadata (confluent-kafka's ``ClusterMetadata``: every topic)."""
    try:
        return admin.client.list_topics(timeout=TIMEOUT)
    except Exception as exc:
        raise AdminError(error_text(exc)) from None


def nodes(admin: Admin) -> list[Any]:
    """DescribeCluster's nodes (id, host, port, rack)."""
    return list(wait(admin.client.describe_cluster(request_timeout=TIMEOUT)).nodes)


def replica_assignment(md: Any, topics: Iterable[str]) -> dict[TP, list[int]]:
    """The replicas of every partition of ``topics`` in the metadata ``md``; Kafka's
    ``UnknownTopicOrPartitionException`` text for a topic it does not hold."""
    out: dict[TP, list[int]] = {}
    for topic in topics:
        t = md.topics.get(topic)
        if t is None or (t.error is not None and not t.partitions):
            raise AdminError(
                "org.apache.kafka.common.errors.UnknownTopicOrPartitionException: "
                f"Topic {topic} not found."
            )
        for p, info in t.partitions.items():
            out[(topic, p)] = list(info.replicas)
    return out


def current_assignment(admin: Admin, topics: Iterable[str] | None = None) -> dict[TP, list[int]]:
    """The replicas of every partition of ``topics`` (all topics when None)."""
    md = metadata(admin)
    return replica_assignment(md, list(md.topics) if topics is None else list(topics))


def controller_call(admin: Admin, api_name: str, request: Any, version: int = 0) -> Any:
    """Send ``request`` to the controller (found in the metadata), again after
    NOT_CONTROLLER or a failed connection, for :data:`TIMEOUT` seconds."""
    from kafkacore.protocol import ErrorCode

    deadline = time.monotonic() + TIMEOUT
    while True:
        md = metadata(admin)
        controller = md.brokers.get(md.controller_id)
        if controller is not None:
            try:
                response = admin.send(controller.host, controller.port, api_name, version, request)
            except OSError:
                response = None
            if response is not None and response.error_code != ErrorCode.NOT_CONTROLLER:
                return response
        if time.monotonic() > deadline:
            raise AdminError(
                "org.apache.kafka.common.errors.TimeoutException: no controller answered "
                f"{api_name}"
            )
        time.sleep(0.2)


def error_message(code: int, message: str | None) -> str:
    """The broker's message for an error, else Kafka's default message for its code."""
    from kafkacore.protocol import ErrorCode
    from kafkacore.protocol.errors import message as default_message

    if message:
        return message
    return default_message(code) or ErrorCode(code).name


# Kafka 4.3.1's ``Errors`` whose exception class is not the code's name in CamelCase with
# ``Exception`` appended (read from its jar: ``Errors.values()``, ``exception().getClass()``).
_IRREGULAR_EXCEPTIONS = {
    -1: "UnknownServerException",
    2: "CorruptRecordException",
    7: "TimeoutException",
    10: "RecordTooLargeException",
    11: "ControllerMovedException",
    12: "OffsetMetadataTooLarge",
    13: "NetworkException",
    17: "InvalidTopicException",
    18: "RecordBatchTooLargeException",
    29: "TopicAuthorizationException",
    30: "GroupAuthorizationException",
    31: "ClusterAuthorizationException",
    36: "TopicExistsException",
    40: "InvalidConfigurationException",
    45: "OutOfOrderSequenceException",
    46: "DuplicateSequenceException",
    49: "InvalidPidMappingException",
    50: "InvalidTxnTimeoutException",
    53: "TransactionalIdAuthorizationException",
    56: "KafkaStorageException",
    58: "SaslAuthenticationException",
    61: "DelegationTokenDisabledException",
    64: "UnsupportedByAuthenticationException",
    65: "DelegationTokenAuthorizationException",
    68: "GroupNotEmptyException",
    97: "PrincipalDeserializationException",
    106: "FetchSessionTopicIdException",
    128: "InvalidRegularExpression",
}


def exception_name(code: int) -> str:
    """The Java exception class Kafka's clients raise for an error code."""
    from kafkacore.protocol import ErrorCode

    irregular = _IRREGULAR_EXCEPTIONS.get(code)
    if irregular is not None:
        return irregular
    return "".join(w.capitalize() for w in ErrorCode(code).name.split("_")) + "Exception"


def exception_text(code: int, message: str | None = None) -> str:
    """What Java prints for the exception of an error (``Throwable.toString``): the class
    and the broker's message, else Kafka's default message for the code."""
    package = "org.apache.kafka.common" if code == 87 else "org.apache.kafka.common.errors"
    return f"{package}.{exception_name(code)}: {error_message(code, message)}"
