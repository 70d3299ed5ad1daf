"""The KIP-848 group APIs' handlers (ConsumerGroupHeartbeat, ConsumerGroupDescribe), as
Kafka 4.3.1's ``KafkaApis`` serves them: UNSUPPORTED_VERSION unless the consumer protocol
is enabled (``group.version`` >= 1 and "consumer" in
``group.coordinator.rebalance.protocols``), READ (heartbeat) or DESCRIBE (describe) on the
group, DESCRIBE on the subscribed topics, then the coordinator's answer. No sockets."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping

from kafkacore.protocol import ApiKey, ErrorCode
from kafkacore.protocol.messages.consumer_group_describe import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
)
from kafkacore.protocol.messages.consumer_group_heartbeat import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
)
from kafkacore.security.acl import AclOperation, ResourceType
from kafkacore.server import authz
from kafkacore.server.group.consumer import ConsumerGroupCoordinator
from kafkacore.server.request_context import ApiHandler, RequestContext
from kafkacore.server.services import BrokerServices

__all__ = ["CONSUMER_GROUP_HANDLERS"]

MEMBER_TYPE_CLASSIC = 0
MEMBER_TYPE_CONSUMER = 1


def _consumer(services: BrokerServices) -> ConsumerGroupCoordinator:
    coordinator: ConsumerGroupCoordinator = services.group_coordinator.consumer
    return coordinator


async def handle_consumer_group_heartbeat(
    services: BrokerServices, context: RequestContext, request: ConsumerGroupHeartbeatRequest
) -> ConsumerGroupHeartbeatResponse:
    cls = ConsumerGroupHeartbeatResponse
    consumer = _consumer(services)

    def error(code: int, message: str | None = None) -> ConsumerGroupHeartbeatResponse:
        return cls(throttle_time_ms=0, error_code=code, error_message=message)

    if not consumer.enabled():
        return error(ErrorCode.UNSUPPORTED_VERSION)
    if not authz.authorize(
        services, context, AclOperation.READ, ResourceType.GROUP, request.group_id
    ):
        return error(ErrorCode.GROUP_AUTHORIZATION_FAILED)
    names = request.subscribed_topic_names
    if names and authz.enabled(services):
        allowed = authz.filter_authorized(
            services, context, AclOperation.DESCRIBE, ResourceType.TOPIC, names
        )
        refused = sorted(set(names) - allowed)
        if refused:
            return error(
                ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                f"The group has subscribed to topics that it doesn't have DESCRIBE access "
                f"to: {refused}",
            )
    answer = await consumer.heartbeat(
        context.api_version,
        request,
        context.client_id or "",
        "/" + context.client_address,
    )
    assignment = None
    if answer.assignment is not None:
        assignment = cls.Assignment(
            topic_partitions=[
                cls.TopicPartitions(topic_id=t, partitions=ps) for t, ps in answer.assignment
            ]
        )
    return cls(
        throttle_time_ms=0,
        error_code=answer.error_code,
        error_message=answer.error_message,
        member_id=answer.member_id,
        member_epoch=answer.member_epoch,
        heartbeat_interval_ms=answer.heartbeat_interval_ms,
        assignment=assignment,
    )


def _assignment(
    consumer: ConsumerGroupCoordinator, partitions: Mapping[uuid.UUID, Iterable[int]]
) -> ConsumerGroupDescribeResponse.Assignment:
    """``ConsumerGroupDescribeResponseData.Assignment`` of a member's partitions (topics
    no longer in the metadata are left out, as Kafka does)."""
    cls = ConsumerGroupDescribeResponse
    topics: list[ConsumerGroupDescribeResponse.TopicPartitions] = []
    for topic_id, listed in partitions.items():
        name = consumer.image.topic_name(topic_id)
        if name is None:
            continue
        topics.append(
            cls.TopicPartitions(topic_id=topic_id, topic_name=name, partitions=list(listed))
        )
    return cls.Assignment(topic_partitions=topics)


def _owned(
    assigned: Mapping[uuid.UUID, Iterable[int]], pending: Mapping[uuid.UUID, Iterable[int]]
) -> dict[uuid.UUID, list[int]]:
    owned: dict[uuid.UUID, list[int]] = {t: list(ps) for t, ps in assigned.items()}
    for topic_id, partitions in pending.items():
        owned.setdefault(topic_id, []).extend(p for p in partitions if p not in owned[topic_id])
    return owned


def handle_consumer_group_describe(
    services: BrokerServices, context: RequestContext, request: ConsumerGroupDescribeRequest
) -> ConsumerGroupDescribeResponse:
    cls = ConsumerGroupDescribeResponse
    consumer = _consumer(services)
    if not consumer.enabled():
        return cls(
            throttle_time_ms=0,
            groups=[
                cls.DescribedGroup(group_id=g, error_code=ErrorCode.UNSUPPORTED_VERSION)
                for g in request.group_ids
            ],
        )
    groups: list[ConsumerGroupDescribeResponse.DescribedGroup] = []
    refused: list[ConsumerGroupDescribeResponse.DescribedGroup] = []
    for group_id in request.group_ids:
        if not authz.authorize(
            services, context, AclOperation.DESCRIBE, ResourceType.GROUP, group_id
        ):
            refused.append(
                cls.DescribedGroup(
                    group_id=group_id, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED
                )
            )
            continue
        described = consumer.describe(group_id)
        if described.error_code:
            groups.append(
                cls.DescribedGroup(
                    group_id=group_id,
                    error_code=described.error_code,
                    error_message=described.error_message,
                )
            )
            continue
        members: list[ConsumerGroupDescribeResponse.Member] = []
        for m in described.members:
            members.append(
                cls.Member(
                    member_id=m.member_id,
                    instance_id=m.instance_id,
                    rack_id=m.rack_id,
                    member_epoch=m.member_epoch,
                    client_id=m.client_id,
                    client_host=m.client_host,
                    subscribed_topic_names=sorted(m.subscribed_topic_names),
                    subscribed_topic_regex=m.subscribed_topic_regex,
                    # ConsumerGroupMember.asConsumerGroupDescribeMember: what the member
                    # owns, its partitions pending revocation included
                    assignment=_assignment(consumer, _owned(m.assigned, m.pending_revocation)),
                    target_assignment=_assignment(consumer, described.targets[m.member_id]),
                    member_type=(
                        MEMBER_TYPE_CLASSIC if m.uses_classic_protocol else MEMBER_TYPE_CONSUMER
                    ),
                )
            )
        group = cls.DescribedGroup(
            group_id=group_id,
            error_code=0,
            group_state=described.group_state,
            group_epoch=described.group_epoch,
            assignment_epoch=described.assignment_epoch,
            assignor_name=described.assignor_name,
            members=members,
        )
        if request.include_authorized_operations:
            group.authorized_operations = authz.authorized_operations(
                services, context, ResourceType.GROUP, group_id
            )
        groups.append(group)
    return cls(throttle_time_ms=0, groups=groups + refused)


CONSUMER_GROUP_HANDLERS: dict[ApiKey, ApiHandler] = {
    ApiKey.CONSUMER_GROUP_HEARTBEAT: handle_consumer_group_heartbeat,
    ApiKey.CONSUMER_GROUP_DESCRIBE: handle_consumer_group_describe,
}
