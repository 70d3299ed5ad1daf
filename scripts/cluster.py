"""``make cluster``: a local kafkacore cluster in the foreground — Apache ZooKeeper on
127.0.0.1:2181 and three brokers on localhost:9092-9094 (node ids 1-3), data under
``./cluster-data``; Ctrl-C stops the brokers (controlled shutdowns) and then ZooKeeper.

It reuses the processes the tests start (``tests/support``): the same ZooKeeper launcher
and the same ``kafkacore server-start`` command lines.

``make cluster TIERED=1`` (``--tiered``) adds tiered storage: an S3-compatible store
(S3Proxy, ``tests/support/object_store.py``) on 127.0.0.1:9000 over ``./cluster-data/s3``,
bucket ``kafkacore-tiered``, and every broker with ``remote.log.storage.system.enable``;
create a topic with ``--config remote.storage.enable=true`` to tier it.
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support.cluster import Cluster  # noqa: E402
from support.object_store import ObjectStoreServer  # noqa: E402
from support.zookeeper import ZooKeeperServer  # noqa: E402

PORTS = (9092, 9093, 9094)


S3_PORT = 9000
BUCKET = "kafkacore-tiered"


def main() -> int:
    parser = argparse.ArgumentParser(description="a local kafkacore cluster")
    parser.add_argument("--tiered", action="store_true", help="with tiered storage on S3Proxy")
    args = parser.parse_args()
    data = Path("cluster-data").resolve()
    data.mkdir(exist_ok=True)
    tiered: list[str] = []
    store: ObjectStoreServer | None = None
    if args.tiered:
        store = ObjectStoreServer(data / "s3", port=S3_PORT).start()
        store.create_bucket(BUCKET)
        tiered = [
            *store.broker_overrides(BUCKET),
            "remote.log.manager.task.interval.ms=5000",
        ]
    zookeeper = ZooKeeperServer(data / "zookeeper", port=2181).start()
    cluster = Cluster(
        f"{zookeeper.connect_string}/kafkacore",
        data,
        size=len(PORTS),
        ports=PORTS,
        fast_failure=False,
        overrides=[
            "offsets.topic.replication.factor=3",
            "default.replication.factor=3",
            "min.insync.replicas=2",
            *tiered,
        ],
    )
    stopping = False

    def stop(*_: object) -> None:
        nonlocal stopping
        stopping = True

    try:
        cluster.start()
        bootstrap = cluster.bootstrap
        print(
            f"kafkacore cluster up: brokers {sorted(cluster.brokers)} at {bootstrap}\n"
            f"  ZooKeeper:   {zookeeper.connect_string}/kafkacore\n"
            f"  controller:  broker {cluster.controller_id()}\n"
            f"  data:        {data}  (broker logs: {data}/broker-N-broker.log)\n"
            f"  try:         kcat -b {bootstrap} -L\n"
            "Ctrl-C stops the brokers, then ZooKeeper.",
            flush=True,
        )
        if store is not None:
            print(
                f"  tiered:      bucket {BUCKET} at {store.endpoint} (S3Proxy, data in {data}/s3)\n"
                f"  try:         kafkacore topics --bootstrap-server {bootstrap} --create "
                "--topic t --config remote.storage.enable=true",
                flush=True,
            )
        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        while not stopping:
            signal.pause()
    finally:
        print("stopping the brokers ...", flush=True)
        cluster.stop()
        zookeeper.stop()
        if store is not None:
            store.stop()
        print("stopped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
