"""ShareGroupDescribe (API key 77), version 1.

KIP-932's share-group description.

Declared from the facts of Kafka 4.3.1's message definitions
``ShareGroupDescribeRequest.json`` and ``ShareGroupDescribeResponse.json``.
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = ["REQUEST", "RESPONSE", "ShareGroupDescribeRequest", "ShareGroupDescribeResponse"]

REQUEST = message(
    "ShareGroupDescribeRequest",
    77,
    "request",
    valid="1",
    flexible="0+",
    fields=[
        field("GroupIds", "[]string", "0+"),
        field("IncludeAuthorizedOperations", "bool", "0+"),
    ],
)

RESPONSE = message(
    "ShareGroupDescribeResponse",
    77,
    "response",
    valid="1",
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
                        field("RackId", "string", "0+", nullable="0+", default=NULL),
                        field("MemberEpoch", "int32", "0+"),
                        field("ClientId", "string", "0+"),
                        field("ClientHost", "string", "0+"),
                        field("SubscribedTopicNames", "[]string", "0+"),
                        field("Assignment", "Assignment", "0+"),
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

ShareGroupDescribeRequest = REQUEST.cls
ShareGroupDescribeResponse = RESPONSE.cls
