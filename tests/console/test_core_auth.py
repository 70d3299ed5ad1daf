"""Login, rights, CSRF, read-only and the audit trail, against a broker with a SASL/SCRAM
listener and an authorizer: users log in with their SCRAM credentials, see and change
only what the broker's ACLs let them, and every change (refused ones too) is a record in
the audit topic. The ACL created in the browser is checked with Kafka 4.3.1's kafka-acls."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from console.conftest import (
    ConsoleBroker,
    KafkaTools,
    create_topics,
    screenshot,
    wait_console,
    wait_http,
)
from console.test_core_topics import audit_records
from support.brokers import Broker
from support.ports import free_port

USERS = {"alice": "alice-pw", "admin": "admin-pw"}


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConsoleBroker]:
    from confluent_kafka.admin import (
        AclBinding,
        AclOperation,
        AclPermissionType,
        AdminClient,
        ResourcePatternType,
        ResourceType,
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialUpsertion,
    )

    port, sasl_port, http_port = free_port(), free_port(), free_port()
    broker = Broker(
        tmp_path_factory.mktemp("secured") / "data",
        [
            f"listeners=PLAINTEXT://localhost:{port},SASL_PLAINTEXT://localhost:{sasl_port}",
            "inter.broker.listener.name=PLAINTEXT",
            "sasl.enabled.mechanisms=SCRAM-SHA-256",
            "authorizer.class.name=kafkacore.security.acl.Authorizer",
            "super.users=User:ANONYMOUS;User:admin",
            f"console.listeners=http://127.0.0.1:{http_port}",
        ],
        port=port,
    ).start()
    console = wait_console(broker, f"http://127.0.0.1:{http_port}")
    admin = AdminClient({"bootstrap.servers": console.bootstrap})  # ANONYMOUS: super user
    info = ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096)
    upserts = [UserScramCredentialUpsertion(u, info, p.encode()) for u, p in USERS.items()]
    for future in admin.alter_user_scram_credentials(upserts).values():
        future.result(30)
    create_topics(console.bootstrap, ("alice-t", 2, {}), ("secret-t", 1, {}))
    describe = AclBinding(
        ResourceType.TOPIC, "alice-", ResourcePatternType.PREFIXED, "User:alice", "*",
        AclOperation.DESCRIBE, AclPermissionType.ALLOW,
    )  # fmt: skip
    for future in admin.create_acls([describe]).values():
        future.result(30)
    yield console
    broker.stop()
    assert (broker.data / ".kafka_cleanshutdown").exists()


def log_in(page: Any, url: str, user: str, password: str) -> None:
    page.fill("input[name=username]", user)
    page.fill("input[name=password]", password)
    page.click("form.login button")


def test_login_rights_csrf_and_audit(secured: ConsoleBroker, page: Any) -> None:
    url = secured.console_url
    page.goto(url + "/topics")
    assert page.url == url + "/login?next=/topics"
    screenshot(page, "login")

    log_in(page, url, "alice", "wrong")
    assert "Login failed" in page.locator(".notice.error").inner_text()
    assert "Authentication failed" in page.locator(".notice.error").inner_text()

    log_in(page, url, "alice", USERS["alice"])
    page.wait_for_url(url + "/topics")
    assert page.locator("header .user").inner_text() == "alice"
    # the broker's ACLs decide what alice sees: Describe on alice-* only
    topics = [r.get_attribute("data-topic") for r in page.locator("#topics tr[data-topic]").all()]
    assert topics == ["alice-t"]

    # ... and what she may change: no Create ACL
    page.click("details.actions summary")
    form = page.locator("#create-topic")
    form.locator("input[name=name]").fill("alice-new")
    form.locator("button").click()
    assert "TOPIC_AUTHORIZATION_FAILED" in page.locator("#error").inner_text()

    # a POST without the session's CSRF token is refused
    answer = page.request.post(
        url + "/topics/create", form={"name": "alice-csrf", "csrf_token": "forged"}
    )
    assert answer.status == 403
    assert "CSRF" in answer.text()

    page.click("header form.logout button")
    page.wait_for_url(url + "/login")
    page.goto(url + "/cluster")
    assert page.url.startswith(url + "/login")

    records = [r for r in audit_records(secured.bootstrap) if r["user"] == "alice"]
    assert [(r["action"], r["detail"]["topic"]) for r in records] == [("topic.create", "alice-new")]
    assert records[0]["result"].startswith("TOPIC_AUTHORIZATION_FAILED")


def test_admin_creates_acl_checked_with_kafka_acls(
    secured: ConsoleBroker, page: Any, kafka_tools: KafkaTools
) -> None:
    url = secured.console_url
    page.goto(url + "/security")
    log_in(page, url, "admin", USERS["admin"])
    page.wait_for_url(url + "/security")
    users = [r.get_attribute("data-user") for r in page.locator("#scram-users tr[data-user]").all()]
    assert users == ["admin", "alice"]
    assert page.locator("#acl-count").inner_text() == "1"

    form = page.locator("#create-acl")
    form.locator("select[name=resource_type]").select_option("TOPIC")
    form.locator("input[name=name]").fill("alice-t")
    form.locator("input[name=principal]").fill("User:alice")
    form.locator("select[name=operation]").select_option("READ")
    form.locator("button").click()
    page.wait_for_url(url + "/security?done=acl")
    assert page.locator("#acl-count").inner_text() == "2"
    screenshot(page, "security")

    listed = kafka_tools.run(
        KafkaTools.ACLS, "--bootstrap-server", secured.bootstrap, "--list", "--topic", "alice-t"
    )
    assert listed.returncode == 0, listed.stderr
    assert "principal=User:alice, host=*, operation=READ, permissionType=ALLOW" in listed.stdout

    records = [r for r in audit_records(secured.bootstrap) if r["action"] == "acl.create"]
    assert len(records) == 1 and records[0]["user"] == "admin" and records[0]["result"] == "ok"
    assert records[0]["detail"]["name"] == "alice-t"


def test_read_only_console_process(secured: ConsoleBroker, page: Any) -> None:
    """`kafkacore console --read-only` against the broker's PLAINTEXT listener: no form
    to change anything, and a change POSTed anyway (with a good CSRF token) is refused."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "kafkacore.cli", "console", "--bootstrap-server",
         secured.bootstrap, "--listen", url, "--read-only"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        wait_http(url + "/static/console.css")
        page.goto(url + "/topics/alice-t")
        assert page.locator("header .badge.ro").inner_text() == "read-only"
        assert page.locator("form[method=post]").count() == 0  # no way to change anything
        assert "inside a kafkacore broker" in page.locator("main").inner_text()
        page.goto(url + "/topics")
        assert page.locator("#create-topic").count() == 0
        token = page.locator("body").get_attribute("hx-headers")
        assert token is not None
        answer = page.request.post(
            url + "/topics/alice-t/delete",
            form={"confirm": "alice-t", "csrf_token": token.split('"')[3]},
        )
        assert answer.status == 403
        assert "read-only" in answer.text()
        screenshot(page, "topics-read-only")
    finally:
        proc.terminate()
        _out, err = proc.communicate(timeout=20)
        assert proc.returncode == 0, err.decode()
