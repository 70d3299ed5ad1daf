"""ConsumerGroupDescribe (API key 69), versions 0-1.

KIP-848's group description (v1: Member.MemberType, KIP-1099).

Declared from the facts of Kafka 4.3.1's message definitions
``ConsumerGroupDescribeRequest.json`` and ``ConsumerGroupDescribeResponse.json``.
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = ["REQUEST", "RESPONSE", "ConsumerGroupDescribeRequest", "ConsumerGroupDescribeResponse"]

REQUEST = message(
    "ConsumerGroupDescribeRequest",
    69,
    "request",
    valid="0-1",
    flexible="0+",
    fields=[
        field("GroupIds", "[]string", "0+"),
        field("IncludeAuthorizedOperations", "bool", "0+"),
    ],
)

RESPONSE = message(
    "ConsumerGroupDescribeResponse",
    69,
    "response",
    valid="0-1",
    flexible="0+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field(
            "Groups",
            "[]DescribedGroup",
            "0+",
            fields=[
                field("ErrorCode", "int16", "0+"),
                field("ErrorMessage", "string", "0+", nullable="0+", default=NULL),
                field("GroupId", "string", "0+"),
                field("GroupState", "string", "0+"),
                field("GroupEpoch", "int32", "0+"),
                field("AssignmentEpoch", "int32", "0+"),
                field("AssignorName", "string", "0+"),
                field(
                    "Members",
                    "[]Member",
                    "0+",
                    fields=[
                        field("MemberId", "string", "0+"),
                        field("InstanceId", "string", "0+", nullable="0+", default=NULL),
                        field("RackId", "string", "0+", nullable="0+", default=NULL),
                        field("MemberEpoch", "int32", "0+"),
                        field("ClientId", "string", "0+"),
                        field("ClientHost", "string", "0+"),
                        field("SubscribedTopicNames", "[]string", "0+"),
                        field("SubscribedTopicRegex", "string", "0+", nullable="0+", default=NULL),
                        field("Assignment", "Assignment", "0+"),
                        field("TargetAssignment", "Assignment", "0+"),
                        field("MemberType", "int8", "1+", default=-1),
                    ],
                ),
                field("AuthorizedOperations", "int32", "0+", default=-2147483648),
            ],
        ),
    ],
    common={
        "TopicPartitions": [
            field("TopicId", "uuid", "0+"),
            field("TopicName", "string", "0+"),
            field("Partitions", "[]int32", "0+"),
        ],
        "Assignment": [
            field("TopicPartitions", "[]TopicPartitions", "0+"),
        ],
    },
)

ConsumerGroupDescribeRequest = REQUEST.cls
ConsumerGroupDescribeResponse = RESPONSE.cls
