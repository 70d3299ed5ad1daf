"""Messages and Storage read the broker's files directly, so with a login they apply the
cluster's ACLs themselves: on core's SASL/SCRAM broker with an authorizer (alice may
DESCRIBE ``alice-*`` topics and nothing else), alice sees the Storage facts of ``alice-t``
only, and neither its records nor its dump-log with records (READ)."""

from __future__ import annotations

from typing import Any

from console.conftest import ConsoleBroker
from console.test_core_auth import USERS, log_in, secured  # noqa: F401  (the fixture)


def test_storage_and_messages_apply_the_users_acls(
    secured: ConsoleBroker,  # noqa: F811
    page: Any,
) -> None:
    url = secured.console_url
    page.goto(url + "/storage")
    log_in(page, url, "alice", USERS["alice"])
    page.wait_for_url(url + "/storage")
    listed = [r.get_attribute("data-tp") for r in page.locator("#storage-partitions tr").all()]
    assert [t for t in listed if t] == ["alice-t-0", "alice-t-1"]
    assert page.goto(url + "/storage/alice-t/0").status == 200
    assert page.locator("#record-count").inner_text() == "0"
    assert page.goto(url + "/storage/alice-t/0/dump?segment=0").status == 200
    for path in (
        "/storage/secret-t/0",
        "/messages/alice-t",
        "/messages/alice-t/tail?partition=0",
        "/storage/alice-t/0/dump?segment=0&deep=1",
    ):
        response = page.goto(url + path)
        assert response.status == 403, path
        assert "not authorized" in page.locator("main").inner_text(), path
    page.errors[:] = [e for e in page.errors if "403" not in e]
