"""The KRaft quorum controller, request by request (Kafka's ``QuorumControllerTest``,
``ClusterControlManagerTest``, ``ReplicationControlManagerTest``): a single-voter quorum
in-process (a real metadata log, Raft client and ControllerApis), answers and records
checked against Kafka 4.3's rules, and every refusal with Kafka's code changing nothing.
The same controller against a real Kafka 4.3.1 broker and Kafka's tools:
``tests/interop/test_kraft_controller_vs_kafka.py``."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

from kafkacore.config import BrokerConfig
from kafkacore.controller.kraft.feature_control import local_supported_features
from kafkacore.protocol.api import ApiKey, api_for, decode_response, encode_request
from kafkacore.protocol.errors import ErrorCode
from kafkacore.protocol.headers import RequestHeader
from kafkacore.protocol.messages import envelope
from kafkacore.raft.snapshots import read_snapshot
from kafkacore.server.assembly import kraft_controller
from support.kraft import Node, controller_node, controller_props, request
from support.ports import free_port

K = ApiKey


def _cls(key: int) -> Any:
    return api_for(key).request.cls


def _features(**levels: tuple[int, int]) -> list[Any]:
    cls = _cls(K.BROKER_REGISTRATION)
    ranges = {**local_supported_features(), **levels}
    return [
        cls.Feature(name=n, min_supported_version=lo, max_supported_version=hi)
        for n, (lo, hi) in ranges.items()
    ]


async def _register(
    node: Node,
    broker_id: int,
    *,
    incarnation: uuid.UUID | None = None,
    dirs: list[uuid.UUID] | None = None,
    cluster_id: str | None = None,
    features: list[Any] | None = None,
    previous_epoch: int = -1,
) -> Any:
    cls = _cls(K.BROKER_REGISTRATION)
    return await node.call(
        K.BROKER_REGISTRATION,
        4,
        broker_id=broker_id,
        cluster_id=cluster_id or node.controller.cluster_id,
        incarnation_id=incarnation or uuid.uuid4(),
        listeners=[
            cls.Listener(
                name="PLAINTEXT", host="localhost", port=9000 + broker_id, security_protocol=0
            )
        ],
        features=features if features is not None else _features(),
        rack=None,
        log_dirs=dirs if dirs is not None else [uuid.uuid4()],
        previous_broker_epoch=previous_epoch,
    )


async def _heartbeat(
    node: Node, broker_id: int, epoch: int, offset: int | None = None, **flags: Any
) -> Any:
    if offset is None:
        offset = node.controller.committed.offset
    return await node.call(
        K.BROKER_HEARTBEAT,
        2,
        broker_id=broker_id,
        broker_epoch=epoch,
        current_metadata_offset=offset,
        want_fence=flags.get("want_fence", False),
        want_shut_down=flags.get("want_shut_down", False),
    )


async def _live_broker(node: Node, broker_id: int) -> int:
    registered = await _register(node, broker_id)
    assert registered.error_code == 0
    answer = await _heartbeat(node, broker_id, registered.broker_epoch)
    assert not answer.is_fenced, answer
    return int(registered.broker_epoch)


def _run(tmp_path: Path, scenario: Any, **props: str) -> None:
    async def main() -> None:
        async with controller_node(tmp_path / "controller", free_port(), **props) as node:
            await scenario(node)

    asyncio.run(main())


def test_registration_epochs_fencing_and_refusals(tmp_path: Path) -> None:
    async def scenario(node: Node) -> None:
        incarnation = uuid.uuid4()
        first = await _register(node, 1, incarnation=incarnation)
        assert first.error_code == 0
        image = node.controller.committed.image
        broker = image.cluster.broker(1)
        assert broker is not None and broker.fenced and broker.epoch == first.broker_epoch
        # the epoch is the offset of the RegisterBrokerRecord: below it, still fenced
        early = await _heartbeat(node, 1, first.broker_epoch, first.broker_epoch - 1)
        assert (early.error_code, early.is_caught_up, early.is_fenced) == (0, False, True)
        caught_up = await _heartbeat(node, 1, first.broker_epoch)
        assert (caught_up.is_caught_up, caught_up.is_fenced) == (True, False)
        assert not node.controller.committed.image.cluster.broker(1).fenced
        # the same incarnation again: the registration is amended, the epoch kept
        again = await _register(node, 1, incarnation=incarnation)
        assert (again.error_code, again.broker_epoch) == (0, first.broker_epoch)
        refusals = {
            ErrorCode.DUPLICATE_BROKER_REGISTRATION: await _register(node, 1),
            ErrorCode.INCONSISTENT_CLUSTER_ID: await _register(node, 2, cluster_id="other"),
            ErrorCode.UNSUPPORTED_VERSION: await _register(
                node, 3, features=_features(**{"group.version": (0, 0)})
            ),
            ErrorCode.INVALID_REGISTRATION: await _register(node, 4, dirs=[]),
        }
        for code, answer in refusals.items():
            assert answer.error_code == code, (code, answer)
        without_mv = await _register(node, 5, features=[])
        assert without_mv.error_code == ErrorCode.INVALID_REGISTRATION
        stale = await _heartbeat(node, 1, first.broker_epoch + 1000)
        assert stale.error_code == ErrorCode.STALE_BROKER_EPOCH
        unknown = await _heartbeat(node, 42, 7)
        assert unknown.error_code == ErrorCode.STALE_BROKER_EPOCH
        assert set(node.controller.committed.image.cluster.brokers) == {1}

    _run(tmp_path, scenario)


def _topic(name: str, partitions: int, rf: int, configs: dict[str, str] | None = None) -> Any:
    cls = _cls(K.CREATE_TOPICS)
    return cls.CreatableTopic(
        name=name,
        num_partitions=partitions,
        replication_factor=rf,
        assignments=[],
        configs=[cls.CreatableTopicConfig(name=k, value=v) for k, v in (configs or {}).items()],
    )


async def _create(node: Node, *topics: Any, validate_only: bool = False) -> Any:
    return await node.call(
        K.CREATE_TOPICS, 7, topics=list(topics), timeout_ms=5000, validate_only=validate_only
    )


def test_create_topics_places_replicas_and_refuses_as_kafka(tmp_path: Path) -> None:
    async def scenario(node: Node) -> None:
        for broker_id in (1, 2, 3):
            await _live_broker(node, broker_id)
        created = await _create(node, _topic("orders", 6, 3, {"retention.ms": "1000"}))
        (result,) = created.topics
        assert (result.error_code, result.num_partitions, result.replication_factor) == (0, 6, 3)
        assert any(c.name == "retention.ms" and c.value == "1000" for c in result.configs)
        topic = node.controller.committed.image.topics.topic("orders")
        assert topic is not None and topic.id == result.topic_id
        for partition in topic.partitions.values():
            assert sorted(partition.replicas) == [1, 2, 3]
            assert partition.isr == partition.replicas and partition.leader == partition.replicas[0]
        leaders = {p.leader for p in topic.partitions.values()}
        assert leaders == {1, 2, 3}  # placement spreads the leaders
        offset = node.controller.committed.offset
        refused = await _create(
            node,
            _topic("orders", 1, 1),
            _topic("bad name!", 1, 1),
            _topic("too-wide", 1, 4),
            _topic("bad-config", 1, 1, {"retention.ms": "abc"}),
            _topic("zero", 0, 1),
        )
        codes = {t.name: (t.error_code, t.error_message) for t in refused.topics}
        assert codes["orders"] == (ErrorCode.TOPIC_ALREADY_EXISTS, "Topic 'orders' already exists.")
        assert codes["bad name!"][0] == ErrorCode.INVALID_TOPIC_EXCEPTION
        assert codes["too-wide"] == (
            ErrorCode.INVALID_REPLICATION_FACTOR,
            "Unable to replicate the partition 4 time(s): The target replication factor of 4 "
            "cannot be reached because only 3 broker(s) are registered.",
        )
        assert codes["bad-config"] == (
            ErrorCode.INVALID_CONFIG,
            "Invalid value abc for configuration retention.ms: Not a number of type LONG",
        )
        assert codes["zero"][0] == ErrorCode.INVALID_PARTITIONS
        checked = await _create(node, _topic("dry", 1, 1), validate_only=True)
        assert checked.topics[0].error_code == 0
        await asyncio.sleep(0.1)
        image = node.controller.committed.image
        assert image.topics.topic("dry") is None and len(image.topics.by_name) == 1
        assert offset <= node.controller.committed.offset  # only NoOps since

    _run(tmp_path, scenario)


async def _alter_isr(
    node: Node,
    broker_id: int,
    epoch: int,
    topic_id: uuid.UUID,
    pid: int,
    isr: list[int],
    leader_epoch: int,
    partition_epoch: int,
    version: int = 3,
) -> Any:
    cls = _cls(K.ALTER_PARTITION)
    data = cls.PartitionData(
        partition_index=pid,
        leader_epoch=leader_epoch,
        new_isr_with_epochs=[cls.BrokerState(broker_id=b, broker_epoch=-1) for b in isr],
        leader_recovery_state=0,
        partition_epoch=partition_epoch,
    )
    response = await node.call(
        K.ALTER_PARTITION,
        version,
        broker_id=broker_id,
        broker_epoch=epoch,
        topics=[cls.TopicData(topic_id=topic_id, partitions=[data])],
    )
    return response.topics[0].partitions[0]


def test_alter_partition_checks_in_kafkas_order_and_keeps_elr(tmp_path: Path) -> None:
    async def scenario(node: Node) -> None:
        epochs = {b: await _live_broker(node, b) for b in (1, 2, 3)}
        created = await _create(node, _topic("t", 1, 3, {"min.insync.replicas": "2"}))
        topic_id = created.topics[0].topic_id
        partition = node.controller.committed.image.topics.partition("t", 0)
        leader = partition.leader
        others = [r for r in partition.replicas if r != leader]
        le, pe = partition.leader_epoch, partition.partition_epoch
        checks = [
            (
                await _alter_isr(node, leader, epochs[leader], topic_id, 0, [leader], le + 1, pe),
                ErrorCode.NOT_CONTROLLER,
            ),
            (
                await _alter_isr(node, leader, epochs[leader], topic_id, 0, [leader], le, pe + 1),
                ErrorCode.NOT_CONTROLLER,
            ),
            (
                await _alter_isr(
                    node, others[0], epochs[others[0]], topic_id, 0, [others[0]], le, pe
                ),
                ErrorCode.INVALID_REQUEST,
            ),
            (
                await _alter_isr(node, leader, epochs[leader], topic_id, 0, [others[0]], le, pe),
                ErrorCode.INVALID_REQUEST,
            ),
            (
                await _alter_isr(node, leader, epochs[leader], topic_id, 0, [leader, 99], le, pe),
                ErrorCode.INVALID_REQUEST,
            ),
            (
                await _alter_isr(node, leader, epochs[leader], topic_id, 5, [leader], le, pe),
                ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            ),
        ]
        for answer, code in checks:
            assert answer.error_code == code, (answer, code)
        unknown = await _alter_isr(node, leader, epochs[leader], uuid.uuid4(), 0, [leader], le, pe)
        assert unknown.error_code == ErrorCode.UNKNOWN_TOPIC_ID
        assert node.controller.committed.image.topics.partition("t", 0) == partition
        # shrink to the leader alone: below min.insync.replicas=2, the others become ELR
        shrunk = await _alter_isr(node, leader, epochs[leader], topic_id, 0, [leader], le, pe)
        assert (shrunk.error_code, shrunk.isr, shrunk.partition_epoch) == (0, [leader], pe + 1)
        now = node.controller.committed.image.topics.partition("t", 0)
        assert sorted(now.elr) == sorted(others) and now.leader_epoch == le
        stale = await _alter_isr(
            node, leader, epochs[leader], topic_id, 0, partition.replicas, le, pe
        )
        assert stale.error_code == ErrorCode.INVALID_UPDATE_VERSION
        # the leader is fenced (session): the ELR member takes over, alone in the ISR
        await _heartbeat(node, leader, epochs[leader], want_fence=True)
        after = node.controller.committed.image.topics.partition("t", 0)
        assert after.leader in others and after.isr == (after.leader,)
        assert after.leader_epoch == le + 1

    _run(tmp_path, scenario)


def test_controlled_shutdown_moves_leadership_then_lets_the_broker_go(tmp_path: Path) -> None:
    async def scenario(node: Node) -> None:
        epochs = {b: await _live_broker(node, b) for b in (1, 2)}
        await _create(node, _topic("t", 4, 2))
        led = [
            p
            for p in node.controller.committed.image.topics.topic("t").partitions.values()
            if p.leader == 1
        ]
        assert led
        first = await _heartbeat(node, 1, epochs[1], want_shut_down=True)
        assert (first.error_code, first.should_shut_down) == (0, False)
        image = node.controller.committed.image
        assert image.cluster.broker(1).in_controlled_shutdown
        assert all(
            p.leader == 2 and 1 not in p.isr for p in image.topics.topic("t").partitions.values()
        )
        await _heartbeat(node, 2, epochs[2])  # the other broker reports its offset
        done = await _heartbeat(node, 1, epochs[1], want_shut_down=True)
        assert done.should_shut_down
        assert node.controller.committed.image.cluster.broker(1).fenced

    _run(tmp_path, scenario)


def test_session_expiry_fences_a_silent_broker(tmp_path: Path) -> None:
    async def scenario(node: Node) -> None:
        epochs = {b: await _live_broker(node, b) for b in (1, 2)}
        await _create(node, _topic("t", 2, 2))
        deadline = asyncio.get_running_loop().time() + 8
        while asyncio.get_running_loop().time() < deadline:
            await _heartbeat(node, 2, epochs[2])  # only broker 2 keeps its session
            if node.controller.committed.image.cluster.broker(1).fenced:
                break
            await asyncio.sleep(0.2)
        image = node.controller.committed.image
        assert image.cluster.broker(1).fenced and not image.cluster.broker(2).fenced
        assert all(p.leader == 2 for p in image.topics.topic("t").partitions.values())

    _run(
        tmp_path,
        scenario,
        **{"broker.session.timeout.ms": "1500", "broker.heartbeat.interval.ms": "500"},
    )


def test_partitions_deletion_elections_and_reassignment(tmp_path: Path) -> None:
    async def scenario(node: Node) -> None:
        epochs = {b: await _live_broker(node, b) for b in (1, 2, 3)}
        created = await _create(node, _topic("t", 1, 2))
        topic_id = created.topics[0].topic_id
        cp = _cls(K.CREATE_PARTITIONS)
        grown = await node.call(
            K.CREATE_PARTITIONS,
            3,
            topics=[cp.CreatePartitionsTopic(name="t", count=3, assignments=None)],
            timeout_ms=5000,
            validate_only=False,
        )
        assert grown.results[0].error_code == 0
        shrink = await node.call(
            K.CREATE_PARTITIONS,
            3,
            topics=[cp.CreatePartitionsTopic(name="t", count=2, assignments=None)],
            timeout_ms=5000,
            validate_only=False,
        )
        assert (shrink.results[0].error_code, shrink.results[0].error_message) == (
            ErrorCode.INVALID_PARTITIONS,
            "The topic t currently has 3 partition(s); 2 would not be an increase.",
        )
        assert len(node.controller.committed.image.topics.topic("t").partitions) == 3
        # reassign partition 0 to the broker it lacks plus one it has
        p0 = node.controller.committed.image.topics.partition("t", 0)
        missing = ({1, 2, 3} - set(p0.replicas)).pop()
        target = [missing, p0.replicas[0]]
        ra = _cls(K.ALTER_PARTITION_REASSIGNMENTS)
        moved = await node.call(
            K.ALTER_PARTITION_REASSIGNMENTS,
            0,
            timeout_ms=5000,
            topics=[
                ra.ReassignableTopic(
                    name="t",
                    partitions=[ra.ReassignablePartition(partition_index=0, replicas=target)],
                )
            ],
        )
        assert moved.responses[0].partitions[0].error_code == 0
        ongoing = node.controller.committed.image.topics.partition("t", 0)
        assert ongoing.adding_replicas == (missing,) and ongoing.is_reassigning
        listed = await node.call(K.LIST_PARTITION_REASSIGNMENTS, 0, timeout_ms=5000, topics=None)
        assert [(t.name, [p.partition_index for p in t.partitions]) for t in listed.topics] == [
            ("t", [0])
        ]
        # the new replica joins the ISR: the reassignment completes
        await _alter_isr(
            node,
            ongoing.leader,
            epochs[ongoing.leader],
            topic_id,
            0,
            [*ongoing.isr, missing],
            ongoing.leader_epoch,
            ongoing.partition_epoch,
        )
        done = node.controller.committed.image.topics.partition("t", 0)
        assert sorted(done.replicas) == sorted(target) and not done.is_reassigning
        cancel = await node.call(
            K.ALTER_PARTITION_REASSIGNMENTS,
            0,
            timeout_ms=5000,
            topics=[
                ra.ReassignableTopic(
                    name="t",
                    partitions=[ra.ReassignablePartition(partition_index=1, replicas=None)],
                )
            ],
        )
        assert cancel.responses[0].partitions[0].error_code == ErrorCode.NO_REASSIGNMENT_IN_PROGRESS
        el = _cls(K.ELECT_LEADERS)
        elected = await node.call(
            K.ELECT_LEADERS,
            2,
            election_type=0,
            timeout_ms=5000,
            topic_partitions=[el.TopicPartitions(topic="t", partitions=[0, 9])],
        )
        codes = [p.error_code for p in elected.replica_election_results[0].partition_result]
        assert codes[1] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        assert codes[0] in (0, ErrorCode.ELECTION_NOT_NEEDED)
        dt = _cls(K.DELETE_TOPICS)
        deleted = await node.call(
            K.DELETE_TOPICS,
            6,
            timeout_ms=5000,
            topics=[
                dt.DeleteTopicState(name="t", topic_id=uuid.UUID(int=0)),
                dt.DeleteTopicState(name=None, topic_id=uuid.uuid4()),
            ],
        )
        assert [r.error_code for r in deleted.responses] == [0, ErrorCode.UNKNOWN_TOPIC_ID]
        assert node.controller.committed.image.topics.topic("t") is None

    _run(tmp_path, scenario)


def test_configs_quotas_scram_acls_features_and_producer_ids(tmp_path: Path) -> None:
    async def scenario(node: Node) -> None:
        epoch = await _live_broker(node, 1)
        await _create(node, _topic("t", 1, 1))
        iac = _cls(K.INCREMENTAL_ALTER_CONFIGS)
        answer = await node.call(
            K.INCREMENTAL_ALTER_CONFIGS,
            1,
            validate_only=False,
            resources=[
                iac.AlterConfigsResource(
                    resource_type=2,
                    resource_name="t",
                    configs=[
                        iac.AlterableConfig(
                            name="cleanup.policy", config_operation=0, value="compact"
                        ),
                        iac.AlterableConfig(
                            name="cleanup.policy", config_operation=2, value="delete"
                        ),
                    ],
                ),
                iac.AlterConfigsResource(
                    resource_type=2,
                    resource_name="t",
                    configs=[
                        iac.AlterableConfig(name="retention.ms", config_operation=2, value="5"),
                    ],
                ),
                iac.AlterConfigsResource(resource_type=2, resource_name="nope", configs=[]),
            ],
        )
        codes = [(r.error_code, r.error_message) for r in answer.responses]
        assert codes[0] == (0, None)
        assert codes[1] == (
            ErrorCode.INVALID_CONFIG,
            "Can't append to key retention.ms because its type is not LIST.",
        )
        assert codes[2][0] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        configs = node.controller.committed.image.configs.data
        assert dict(configs[next(r for r in configs if r.name == "t")]) == {
            "cleanup.policy": "compact,delete"
        }
        q = _cls(K.ALTER_CLIENT_QUOTAS)
        quotas = await node.call(
            K.ALTER_CLIENT_QUOTAS,
            1,
            validate_only=False,
            entries=[
                q.EntryData(
                    entity=[q.EntityData(entity_type="user", entity_name="alice")],
                    ops=[q.OpData(key="producer_byte_rate", value=1024.0, remove=False)],
                ),
                q.EntryData(
                    entity=[q.EntityData(entity_type="user", entity_name="bob")],
                    ops=[q.OpData(key="producer_byte_rate", value=1.5, remove=False)],
                ),
            ],
        )
        assert [e.error_code for e in quotas.entries] == [0, ErrorCode.INVALID_REQUEST]
        assert quotas.entries[1].error_message == "producer_byte_rate cannot be a fractional value."
        s = _cls(K.ALTER_USER_SCRAM_CREDENTIALS)
        scram = await node.call(
            K.ALTER_USER_SCRAM_CREDENTIALS,
            0,
            deletions=[],
            upsertions=[
                s.ScramCredentialUpsertion(
                    name="alice",
                    mechanism=1,
                    iterations=4096,
                    salt=b"salt",
                    salted_password=b"x" * 32,
                ),
                s.ScramCredentialUpsertion(
                    name="bob", mechanism=1, iterations=10, salt=b"salt", salted_password=b"x" * 32
                ),
            ],
        )
        assert [(r.user, r.error_code) for r in scram.results] == [
            ("alice", 0),
            ("bob", ErrorCode.UNACCEPTABLE_CREDENTIAL),
        ]
        assert node.controller.committed.image.scram.credential(1, "alice") is not None
        a = _cls(K.CREATE_ACLS)
        acls = await node.call(
            K.CREATE_ACLS,
            3,
            creations=[
                a.AclCreation(
                    resource_type=2,
                    resource_name="t",
                    resource_pattern_type=3,
                    principal="User:alice",
                    host="*",
                    operation=3,
                    permission_type=3,
                ),
                a.AclCreation(
                    resource_type=2,
                    resource_name="t",
                    resource_pattern_type=3,
                    principal="alice",
                    host="*",
                    operation=3,
                    permission_type=3,
                ),
            ],
        )
        assert [r.error_code for r in acls.results] == [0, ErrorCode.INVALID_REQUEST]
        assert len(node.controller.committed.image.acls.acls) == 1
        f = _cls(K.UPDATE_FEATURES)
        down = await node.call(
            K.UPDATE_FEATURES,
            1,
            timeout_ms=5000,
            validate_only=False,
            feature_updates=[
                f.FeatureUpdateKey(feature="metadata.version", max_version_level=21, upgrade_type=2)
            ],
        )
        assert down.error_code == ErrorCode.INVALID_UPDATE_VERSION
        assert "Refusing to perform the requested downgrade" in down.results[0].error_message
        off = await node.call(
            K.UPDATE_FEATURES,
            2,
            timeout_ms=5000,
            validate_only=False,
            feature_updates=[
                f.FeatureUpdateKey(feature="group.version", max_version_level=0, upgrade_type=2)
            ],
        )
        assert off.error_code == 0
        assert "group.version" not in node.controller.committed.image.features.finalized
        ids = await node.call(K.ALLOCATE_PRODUCER_IDS, 0, broker_id=1, broker_epoch=epoch)
        more = await node.call(K.ALLOCATE_PRODUCER_IDS, 0, broker_id=1, broker_epoch=epoch)
        assert (ids.producer_id_start, ids.producer_id_len, more.producer_id_start) == (
            0,
            1000,
            1000,
        )
        stale = await node.call(K.ALLOCATE_PRODUCER_IDS, 0, broker_id=1, broker_epoch=epoch + 1)
        assert stale.error_code == ErrorCode.STALE_BROKER_EPOCH

    _run(tmp_path, scenario)


def test_envelope_answers_the_forwarded_request_and_refuses_bad_ones(tmp_path: Path) -> None:
    async def scenario(node: Node) -> None:
        await _live_broker(node, 1)
        inner = request(
            K.CREATE_TOPICS, topics=[_topic("fwd", 1, 1)], timeout_ms=5000, validate_only=False
        )
        frame = encode_request(RequestHeader(K.CREATE_TOPICS, 7, 77, "client"), inner)[4:]
        principal_cls: Any = envelope.PRINCIPAL.cls
        principal = b"\x00\x00" + envelope.PRINCIPAL.encode(
            principal_cls(type="User", name="alice", token_authenticated=False), 0
        )
        answer = await node.call(
            K.ENVELOPE,
            0,
            request_data=frame,
            request_principal=principal,
            client_host_address=b"\x7f\x00\x00\x01",
        )
        assert answer.error_code == 0
        correlation, response = decode_response(bytes(answer.response_data), K.CREATE_TOPICS, 7)
        assert (correlation, response.topics[0].error_code) == (77, 0)
        assert node.controller.committed.image.topics.topic("fwd") is not None
        bad = await node.call(
            K.ENVELOPE, 0, request_data=frame, request_principal=b"\x00", client_host_address=b""
        )
        assert bad.error_code == ErrorCode.PRINCIPAL_DESERIALIZATION_FAILURE
        registration = encode_request(
            RequestHeader(K.BROKER_REGISTRATION, 4, 1, "c"), request(K.BROKER_REGISTRATION)
        )[4:]
        not_forwardable = await node.call(
            K.ENVELOPE,
            0,
            request_data=registration,
            request_principal=principal,
            client_host_address=b"",
        )
        assert not_forwardable.error_code == ErrorCode.INVALID_REQUEST

    _run(tmp_path, scenario)


def test_snapshot_then_restart_restores_the_state(tmp_path: Path) -> None:
    """A snapshot of the committed state, the log below it cleaned, a restart: the
    image is the same, loaded from the snapshot and the log after it."""
    port = free_port()

    async def first() -> Any:
        async with controller_node(
            tmp_path / "c", port, **{"metadata.max.retention.bytes": "0"}
        ) as node:
            await _live_broker(node, 1)
            await _create(node, _topic("t", 3, 1))
            snapshot_id = node.controller.snapshot()
            assert snapshot_id is not None
            data = node.assembled.metadata_log.read_snapshot(snapshot_id)
            assert data is not None and read_snapshot(data).values
            await _create(node, _topic("after", 1, 1))
            await asyncio.sleep(0.3)
            return node.controller.committed.image

    image = asyncio.run(first())

    async def second() -> None:
        config = BrokerConfig(controller_props(1, port, tmp_path / "c"))
        assembled = kraft_controller(config)
        await assembled.raft.start()
        await assembled.controller.start()
        try:
            node = Node(assembled, None)
            await node.wait(
                lambda: (
                    assembled.controller.is_active
                    and assembled.controller.committed.image.topics.topic("after")
                )
            )
            restored = assembled.controller.committed.image
            assert restored.topics == image.topics and restored.features == image.features
            assert set(restored.cluster.brokers) == set(image.cluster.brokers)
        finally:
            await assembled.controller.stop()
            await assembled.raft.stop()
            assembled.metadata_log.close()

    asyncio.run(second())
