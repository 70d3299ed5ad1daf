"""The ZooKeeper server fixture (tests/support/zookeeper.py) itself."""

from __future__ import annotations

from pathlib import Path

from kazoo.client import KazooClient

from support.zookeeper import ZooKeeperServer, four_letter_word


def test_session_server_answers_and_chroots_are_fresh(
    zookeeper: ZooKeeperServer, zk_chroot: str
) -> None:
    assert four_letter_word(zookeeper.port, "ruok") == "imok"
    assert "Mode: standalone" in four_letter_word(zookeeper.port, "srvr")
    host, _, chroot = zk_chroot.partition("/")
    assert host == zookeeper.connect_string and chroot.startswith("test-")
    zk = KazooClient(hosts=zookeeper.connect_string)
    zk.start(timeout=15)
    try:
        assert not zk.exists("/" + chroot)
    finally:
        zk.stop()
        zk.close()


def test_kill_and_restart_keeps_data(tmp_path: Path) -> None:
    server = ZooKeeperServer(tmp_path).start()
    try:
        zk = KazooClient(hosts=server.connect_string)
        zk.start(timeout=15)
        zk.create("/kept", b"v1")
        zk.stop()
        zk.close()
        server.kill()
        assert not server.running
        server.start()
        zk = KazooClient(hosts=server.connect_string)
        zk.start(timeout=15)
        assert zk.get("/kept")[0] == b"v1"
        zk.stop()
        zk.close()
    finally:
        server.stop()
