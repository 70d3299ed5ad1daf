"""Every API x allowed/denied against Apache Kafka 4.3.1's own broker: the same ACL sets,
the same raw requests, every authorization decision compared field by field.

Kafka runs from its jars in KRaft combined mode with
``authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer``. Its
clients' listener is PLAINTEXT, so every client is ``User:ANONYMOUS`` (as on kafkacore);
the controller and inter-broker listeners are SASL_PLAINTEXT with PLAIN and the user
``admin``, the only ``super.users`` entry: the broker's own requests to its controller are
authorized while ANONYMOUS gets exactly what the ACLs say. The ACLs are set on Kafka with
CreateAcls/DeleteAcls through confluent-kafka's AdminClient as ``admin``; on kafkacore
the in-process broker's authorizer is given the same bindings directly (kafkacore's
CreateAcls belongs to the ACL-store work).

Compared, for every phase (ACL set) and every request of ``support/authz_cases.py``:
each error code that is an authorization error (29, 30, 31, 53) on either side must be
the same on the other; a field naming a test resource (``az-...``) must be present on
both sides (Metadata hides the same topics, ListGroups the same groups); the
``*_authorized_operations`` bit sets must be equal. Other codes (features kafkacore
answers differently, e.g. transactions) are not part of this comparison.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from kafkacore.security.acl import AclBinding, AclStore, Authorizer
from support.authz_cases import (
    AUTH_CODES,
    CASES,
    CLIENT_HOST,
    DOOMED,
    PHASES,
    TOPIC,
    decisions,
    flatten,
)
from support.brokers import free_port
from support.kafka_jars import kafka_libs, require, start_kraft_node, stop_process
from support.raw_client import RawClient, make_request, run_broker

RECORDING = "kafka_authz_decisions.json"  # in tests/support: test_authz.py's table

pytestmark = pytest.mark.interop

KAFKA_VERSION = "4.3.1"
ADMIN_PASSWORD = "admin-secret"
_JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    f'username="admin" password="{ADMIN_PASSWORD}" user_admin="{ADMIN_PASSWORD}";'
)


def _kafka_props(tmp: Path, port: int, broker_port: int, controller_port: int) -> str:
    lines = [
        "process.roles=broker,controller",
        "node.id=1",
        f"controller.quorum.voters=1@localhost:{controller_port}",
        f"listeners=PLAINTEXT://localhost:{port},BROKER://localhost:{broker_port},"
        f"CONTROLLER://localhost:{controller_port}",
        f"advertised.listeners=PLAINTEXT://localhost:{port},BROKER://localhost:{broker_port}",
        "controller.listener.names=CONTROLLER",
        "inter.broker.listener.name=BROKER",
        "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,BROKER:SASL_PLAINTEXT,"
        "CONTROLLER:SASL_PLAINTEXT",
        "sasl.enabled.mechanisms=PLAIN",
        "sasl.mechanism.inter.broker.protocol=PLAIN",
        "sasl.mechanism.controller.protocol=PLAIN",
        f"listener.name.broker.plain.sasl.jaas.config={_JAAS}",
        f"listener.name.controller.plain.sasl.jaas.config={_JAAS}",
        "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users=User:admin",
        f"log.dirs={tmp / 'data'}",
        "num.partitions=1",
        "default.replication.factor=1",
        "offsets.topic.replication.factor=1",
        "offsets.topic.num.partitions=1",
        "transaction.state.log.replication.factor=1",
        "transaction.state.log.min.isr=1",
        "transaction.state.log.num.partitions=1",
        "share.coordinator.state.topic.replication.factor=1",
        "share.coordinator.state.topic.min.isr=1",
        "group.initial.rebalance.delay.ms=0",
        "auto.create.topics.enable=true",
        "",
    ]
    return "\n".join(lines)


class KafkaBroker:
    def __init__(self, tmp: Path) -> None:
        require("java")
        self.libs = kafka_libs(KAFKA_VERSION)
        self.tmp = tmp
        self.port, self.broker_port, self.controller_port = free_port(), free_port(), free_port()
        self.props = tmp / "server.properties"
        self.props.write_text(_kafka_props(tmp, self.port, self.broker_port, self.controller_port))
        self.log = tmp / "kafka.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = start_kraft_node(self.libs, self.props, self.log)
        self._wait_ready()

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-4000:] if self.log.exists() else ""

    def _wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        admin = self.admin()
        while True:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise AssertionError(f"Kafka exited {self.proc.returncode}:\n{self.tail()}")
            try:
                if admin.list_topics(timeout=2).brokers:
                    return
            except Exception:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"Kafka did not start in {timeout} s:\n{self.tail()}")
            time.sleep(0.2)

    def admin(self) -> Any:
        from confluent_kafka.admin import AdminClient

        return AdminClient(
            {
                "bootstrap.servers": f"localhost:{self.broker_port}",
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "PLAIN",
                "sasl.username": "admin",
                "sasl.password": ADMIN_PASSWORD,
                "broker.address.family": "v4",
                "log_level": 0,
            }
        )

    def stop(self) -> None:
        stop_process(self.proc, grace_s=30)


def _ck_binding(binding: AclBinding) -> Any:
    from confluent_kafka.admin import (
        AclBinding as CkBinding,
    )
    from confluent_kafka.admin import (
        AclOperation as CkOperation,
    )
    from confluent_kafka.admin import (
        AclPermissionType as CkPermission,
    )
    from confluent_kafka.admin import (
        ResourcePatternType as CkPattern,
    )
    from confluent_kafka.admin import (
        ResourceType as CkResource,
    )

    p, e = binding.pattern, binding.entry
    # by wire code: confluent-kafka names the CLUSTER resource type BROKER
    return CkBinding(
        CkResource(int(p.resource_type)),
        p.name,
        CkPattern(int(p.pattern_type)),
        e.principal,
        e.host,
        CkOperation(int(e.operation)),
        CkPermission(int(e.permission_type)),
    )


def _set_kafka_acls(kafka: KafkaBroker, bindings: list[AclBinding]) -> None:
    from confluent_kafka.admin import (
        AclBindingFilter,
        AclOperation,
        AclPermissionType,
        ResourcePatternType,
        ResourceType,
    )

    admin = kafka.admin()
    any_filter = AclBindingFilter(
        ResourceType.ANY,
        None,
        ResourcePatternType.ANY,
        None,
        None,
        AclOperation.ANY,
        AclPermissionType.ANY,
    )
    for fut in admin.delete_acls([any_filter], request_timeout=30).values():
        fut.result(30)
    if bindings:
        for fut in admin.create_acls(
            [_ck_binding(b) for b in bindings], request_timeout=30
        ).values():
            fut.result(30)
    # the broker's authorizer applies the records after the controller commits them
    deadline = time.monotonic() + 15
    while len(admin.describe_acls(any_filter, request_timeout=30).result(30)) != len(bindings):
        assert time.monotonic() < deadline, "Kafka's ACLs did not converge"
        time.sleep(0.05)
    time.sleep(0.3)


def _kafka_topic_ids(admin: Any) -> dict[str, uuid.UUID]:
    from confluent_kafka import TopicCollection

    described = admin.describe_topics(TopicCollection([TOPIC, DOOMED]), request_timeout=30)
    out = {}
    for name, fut in described.items():
        tid = fut.result(30).topic_id
        msb = tid.get_most_significant_bits() & (2**64 - 1)
        lsb = tid.get_least_significant_bits() & (2**64 - 1)
        out[name] = uuid.UUID(int=(msb << 64) | lsb)
    return out


def _compare(case: str, phase: str, kafka: dict[str, Any], ours: dict[str, Any]) -> list[str]:
    problems = []
    if "closed" in kafka or "closed" in ours:
        if kafka.get("closed") != ours.get("closed"):
            problems.append(
                f"{phase}/{case}: connection closed by kafka {kafka.get('closed')}, "
                f"kafkacore {ours.get('closed')}"
            )
        return problems
    for key in sorted(set(kafka) | set(ours)):
        k, o = kafka.get(key, "absent"), ours.get(key, "absent")
        if key.endswith("authorized_operations"):
            # internal topics kafkacore lacks (__transaction_state) are not compared
            if k != o and (("az-" in key) or (k != "absent" and o != "absent")):
                problems.append(f"{phase}/{case}: {key}: kafka {k}, kafkacore {o}")
        elif k != o and (key.endswith(".name") or k in AUTH_CODES or o in AUTH_CODES):
            # an authorization error, or a topic name hidden or shown
            problems.append(f"{phase}/{case}: {key}: kafka {k}, kafkacore {o}")
    for item in sorted(_items(kafka) ^ _items(ours)):
        where = "kafka" if item in _items(kafka) else "kafkacore"
        problems.append(f"{phase}/{case}: {item} answered by {where} only")
    return problems


def _items(flat: dict[str, Any]) -> set[str]:
    """The list items naming a test resource (``topics[az-t]``, ``groups[az-g]``): which
    resources an answer shows (Metadata and ListGroups hide some)."""
    return {key[: m.end()] for key in flat for m in re.finditer(r"\[az-[^\]]*\]", key)}


async def _create_topics(port: int) -> dict[str, uuid.UUID]:
    cls = make_request("CreateTopics")
    client = RawClient(*await asyncio.open_connection(CLIENT_HOST, port))
    try:
        response = await client.call(
            "CreateTopics",
            7,
            make_request(
                "CreateTopics",
                topics=[
                    cls.CreatableTopic(
                        name=name,
                        num_partitions=1,
                        replication_factor=1,
                        assignments=[],
                        configs=[],
                    )
                    for name in (TOPIC, DOOMED)
                ],
                timeout_ms=30000,
                validate_only=False,
            ),
        )
    finally:
        client.close()
    assert [t.error_code for t in response.topics] == [0, 0], response
    return {t.name: t.topic_id for t in response.topics}


async def _answer(port: int, case: Any, ids: dict[str, uuid.UUID]) -> dict[str, Any]:
    """The flattened response, on a connection of its own (a broker that closes the
    connection answers ``{"closed": True}``)."""
    client = RawClient(*await asyncio.open_connection(CLIENT_HOST, port))
    try:
        response = await client.call(case.api, case.version, case.build(ids), cid=7)
        return flatten(response, {i: n for n, i in ids.items()})
    except (asyncio.IncompleteReadError, ConnectionError, TimeoutError):
        return {"closed": True}
    finally:
        client.close()


def test_every_api_decides_as_kafka(tmp_path: Path) -> None:
    started = time.monotonic()
    (tmp_path / "kafka").mkdir()
    (tmp_path / "kc").mkdir()
    kafka = KafkaBroker(tmp_path / "kafka")
    problems: list[str] = []
    answers: dict[str, dict[str, dict[str, Any]]] = {}
    compared = {"decisions": 0, "fields": 0, "requests": 0}
    try:
        kafka.start()
        # the topics, made by the super user on Kafka, with no authorizer yet on kafkacore
        from confluent_kafka.admin import NewTopic

        admin = kafka.admin()  # kept referenced: a collected client abandons its futures
        for fut in admin.create_topics(
            [NewTopic(TOPIC, 1, 1), NewTopic(DOOMED, 1, 1)], operation_timeout=30
        ).values():
            fut.result(60)
        kafka_ids = _kafka_topic_ids(admin)

        async def scenario(server: Any) -> None:
            our_ids = await _create_topics(server.bound_port)
            for phase, bindings in PHASES.items():
                await asyncio.to_thread(_set_kafka_acls, kafka, bindings)
                # BrokerServices is frozen: the test gives the running broker its authorizer
                object.__setattr__(server.services, "authorizer", Authorizer(AclStore(bindings)))
                for case in CASES:
                    fk = await _answer(kafka.port, case, kafka_ids)
                    fo = await _answer(server.bound_port, case, our_ids)
                    answers.setdefault(phase, {})[case.name] = decisions(fk)
                    compared["requests"] += 1
                    compared["fields"] += len(set(fk) | set(fo))
                    compared["decisions"] += len(set(decisions(fk)) | set(decisions(fo)))
                    problems.extend(_compare(case.name, phase, fk, fo))

        run_broker(tmp_path / "kc", scenario, **{"auto.create.topics.enable": "true"})
    finally:
        kafka.stop()
    print(
        f"compared {compared['requests']} requests ({len(CASES)} APIs/variants x "
        f"{len(PHASES)} ACL sets), {compared['fields']} fields of which "
        f"{compared['decisions']} authorization decisions, in "
        f"{time.monotonic() - started:.1f} s"
    )
    # Kafka's decisions, tests/support/kafka_authz_decisions.json (test_authz.py's table)
    dump = os.environ.get("KAFKACORE_AUTHZ_DUMP")
    if dump:
        Path(dump).write_text(json.dumps(answers, indent=1, sort_keys=True, default=str))
    assert not problems, "\n".join(problems)
    assert compared["requests"] == len(CASES) * len(PHASES)
    # the recording test_authz.py checks kafkacore against must be what Kafka answers now
    recorded = json.loads((Path(__file__).parents[1] / "support" / RECORDING).read_text())
    live = json.loads(json.dumps(answers, sort_keys=True, default=str))
    stale = [
        f"{phase} {case}: recorded {recorded.get(phase, {}).get(case)}, Kafka {decided}"
        for phase, by_case in live.items()
        for case, decided in by_case.items()
        if recorded.get(phase, {}).get(case) != decided
    ]
    assert live == recorded, (
        "tests/support/kafka_authz_decisions.json differs from Kafka's live answers "
        "(rewrite it with KAFKACORE_AUTHZ_DUMP=<that file>):\n" + "\n".join(stale[:20])
    )
