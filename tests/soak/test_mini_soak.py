"""The mini-soak of ``make test``: :mod:`soak.soak`'s mixed load (acks=1 and acks=all
produce, a consumer group, a compacted and a retention topic, topic churn, TLS connection
churn) on one broker for 15 s, then leak checks that do not depend on timing: once the
load has stopped and ``log.segment.delete.delay.ms`` has passed, the broker holds as many
sockets as before the load, no file descriptor on a deleted file (segments of deleted
topics and of retention), only files under its log directory, and a bounded RSS; its
threads stay within its pools (thread pools start workers lazily, up to their size, so
a count that still rises late in a short run is not a leak; a bound is what can be
asserted here: the baseline plus ``num.io.threads`` plus a few).
The 30-minute soak with its plot and verdict is ``make soak``."""

from __future__ import annotations

from pathlib import Path

import pytest

from soak.soak import Soak, verdict

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

IO_THREADS = 8  # num.io.threads, Kafka's default


def test_mini_soak(tmp_path: Path) -> None:
    soak = Soak(tmp_path, seconds=15, interval=1.5)
    samples = soak.run(settle_s=2.0)
    before, after = soak.before, soak.after
    assert before is not None and after is not None
    print(f"before {before}\nafter {after}\n{verdict(samples)}")
    assert samples[-1].produced > 1000, samples[-1]
    assert samples[-1].consumed > 0 and samples[-1].tls_connections > 10, samples[-1]
    assert samples[-1].topics_churned >= 2, samples[-1]
    assert samples[-1].errors == 0, samples[-1]
    assert after.deleted == [], f"descriptors on deleted files: {after.deleted}"
    data = str(tmp_path / "data")
    assert all(
        f.startswith(data) or "/site-packages/" in f or f.startswith("/dev/") for f in after.files
    ), after.files
    assert after.sockets <= before.sockets + 1, (before.sockets, after.sockets)
    threads = [s.threads for s in samples]
    assert max(threads) <= before.threads + IO_THREADS + 4, (before.threads, threads)
    assert after.threads <= max(threads), (after.threads, threads)
    assert after.rss_mib < 400, after.rss_mib
