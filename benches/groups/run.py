"""The KIP-848 heartbeat and assignment path: how long a consumer group of the new
protocol takes to become stable, on kafkacore and (``--kafka``) on Apache Kafka 4.3.1.

    python benches/groups/run.py [--kafka] [--members 3,50] [--trials 3] [--out FILE]

Members are simulated on the wire, one asyncio connection each (kafkacore's NodeClient):
each sends ConsumerGroupHeartbeat v1 as Kafka's Java consumer does, at once after its
assignment changed (its acknowledgement: the owned partitions) and otherwise every
heartbeat interval the coordinator gives it; no records are fetched, so what is timed is
the coordinator: join, target assignment (the ``uniform`` assignor), revocation before
reassignment, reconciliation. A poller asks ConsumerGroupDescribe every 10 ms.

* **to stable**: from the first heartbeat of N members starting together to the first
  describe that answers Stable, N members, each at the group's assignment epoch with
  its current assignment equal to its target, and every partition assigned.
* **join pause**: one more member joining a stable group of N: from its first heartbeat
  to stable again.
* **heartbeat**: the median round trip of a steady member's heartbeat.

Both brokers run with ``group.consumer.heartbeat.interval.ms=500`` (and its minimum at
500): a revocation waits for the owner's next heartbeat, so the interval bounds the
times and this one keeps a run short; it is the same for both. The topic has 120
partitions. Figures in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import os
import platform
import statistics
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benches"))  # run as a script: benches/_common.py
sys.path.insert(0, str(REPO / "benches" / "broker"))
import run as broker_bench  # noqa: E402  (benches/broker/run.py: the brokers' start-up)

from _common import kafka_libs, log, run_main, write_report  # noqa: E402

TOPIC = "kip848-bench"
PARTITIONS = 120
INTERVAL_MS = 500
GROUP_CONFIGS = {
    "group.consumer.heartbeat.interval.ms": str(INTERVAL_MS),
    "group.consumer.min.heartbeat.interval.ms": str(INTERVAL_MS),
}


def _member_id() -> str:
    """A member id as Kafka's consumer makes one (``Uuid.randomUuid().toString()``)."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()


@dataclass
class Member:
    """One simulated member of the consumer protocol."""

    host: str
    port: int
    group: str
    topic_id: uuid.UUID
    member_id: str = field(default_factory=_member_id)
    epoch: int = 0
    owned: list[int] = field(default_factory=list)
    round_trips: list[float] = field(default_factory=list)

    async def run(self, stop: asyncio.Event) -> None:
        from kafkacore.net.connection import NodeClient
        from kafkacore.protocol import APIS_BY_NAME, ErrorCode

        api: Any = APIS_BY_NAME["ConsumerGroupHeartbeat"]
        cls = api.request.cls
        client = NodeClient(self.host, self.port, client_id=f"bench-{self.member_id[:6]}")
        try:
            joined = False
            while not stop.is_set():
                request = cls(
                    group_id=self.group,
                    member_id=self.member_id,
                    member_epoch=self.epoch,
                    rebalance_timeout_ms=30_000 if not joined else -1,
                    subscribed_topic_names=[TOPIC] if not joined else None,
                    server_assignor=None,
                    topic_partitions=[]
                    if not joined
                    else [cls.TopicPartitions(topic_id=self.topic_id, partitions=self.owned)],
                )
                start = time.perf_counter()
                response = await client.send(api, 1, request)
                self.round_trips.append(time.perf_counter() - start)
                if response.error_code != ErrorCode.NONE:
                    raise RuntimeError(f"heartbeat: {ErrorCode(response.error_code).name}")
                joined = True
                self.epoch = response.member_epoch
                if response.assignment is not None:
                    self.owned = sorted(
                        p
                        for tp in response.assignment.topic_partitions
                        if tp.topic_id == self.topic_id
                        for p in tp.partitions
                    )
                    continue  # acknowledge the new assignment at once, as Kafka's consumer
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), response.heartbeat_interval_ms / 1000)
        finally:
            await client.close()


async def _stable(host: str, port: int, group: str, members: int) -> bool:
    from kafkacore.net.connection import NodeClient
    from kafkacore.protocol import APIS_BY_NAME

    api: Any = APIS_BY_NAME["ConsumerGroupDescribe"]
    client = NodeClient(host, port, client_id="bench-describe")
    try:
        request = api.request.cls(group_ids=[group], include_authorized_operations=False)
        d = (await client.send(api, 1, request)).groups[0]
    finally:
        await client.close()
    if d.error_code or d.group_state != "Stable" or len(d.members) != members:
        _LAST[group] = f"{d.error_code} {d.group_state} {len(d.members)} members"
        return False
    assigned = 0
    for m in d.members:
        current = sorted((t.topic_id, sorted(t.partitions)) for t in m.assignment.topic_partitions)
        target = sorted(
            (t.topic_id, sorted(t.partitions)) for t in m.target_assignment.topic_partitions
        )
        if m.member_epoch != d.assignment_epoch or current != target:
            _LAST[group] = f"member {m.member_epoch}/{d.assignment_epoch} {current} -> {target}"
            return False
        assigned += sum(len(ps) for _, ps in current)
    _LAST[group] = f"{assigned} partitions assigned"
    return assigned == PARTITIONS


#: why each group was last found not stable (shown when it times out)
_LAST: dict[str, str] = {}


async def _wait_stable(
    host: str,
    port: int,
    group: str,
    members: int,
    timeout: float,
    tasks: list[asyncio.Task[None]],
) -> float:
    """Seconds until the group is stable (polled every 10 ms); a member's failure."""
    start = time.perf_counter()
    while not await _stable(host, port, group, members):
        for t in tasks:
            if t.done() and t.exception() is not None:
                raise RuntimeError(f"a member of {group} failed") from t.exception()
        if time.perf_counter() - start > timeout:
            raise TimeoutError(
                f"{group} not stable with {members} members in {timeout} s: {_LAST.get(group)}"
            )
        await asyncio.sleep(0.01)
    return time.perf_counter() - start


async def _find_coordinator(host: str, port: int, group: str) -> None:
    """FindCoordinator until the group's coordinator is there (Kafka creates
    ``__consumer_offsets`` on the first one; a single node coordinates every group)."""
    from kafkacore.net.connection import NodeClient
    from kafkacore.protocol import APIS_BY_NAME

    api: Any = APIS_BY_NAME["FindCoordinator"]
    client = NodeClient(host, port, client_id="bench-find")
    try:
        request = api.request.cls(key_type=0, coordinator_keys=[group])
        deadline = time.monotonic() + 60
        while (await client.send(api, 4, request)).coordinators[0].error_code:
            if time.monotonic() > deadline:
                raise TimeoutError(f"no coordinator for {group}")
            await asyncio.sleep(0.2)
        # and until it answers for the group (GROUP_ID_NOT_FOUND: not NOT_COORDINATOR)
        describe: Any = APIS_BY_NAME["ConsumerGroupDescribe"]
        asked = describe.request.cls(group_ids=[group], include_authorized_operations=False)
        while (await client.send(describe, 1, asked)).groups[0].error_code != 69:
            if time.monotonic() > deadline:
                raise TimeoutError(f"the coordinator of {group} does not answer")
            await asyncio.sleep(0.2)
    finally:
        await client.close()


async def _trial(host: str, port: int, topic_id: uuid.UUID, n: int) -> dict[str, float]:
    group = f"bench-{n}-{uuid.uuid4().hex[:8]}"
    await _find_coordinator(host, port, group)
    stop = asyncio.Event()
    members = [Member(host, port, group, topic_id) for _ in range(n)]
    tasks = [asyncio.create_task(m.run(stop)) for m in members]
    try:
        to_stable = await _wait_stable(host, port, group, n, 30, tasks)
        for m in members:
            m.round_trips.clear()
        await asyncio.sleep(2 * INTERVAL_MS / 1000)
        round_trips = [t for m in members for t in m.round_trips]
        joiner = Member(host, port, group, topic_id)
        tasks.append(asyncio.create_task(joiner.run(stop)))
        join_pause = await _wait_stable(host, port, group, n + 1, 30, tasks)
    finally:
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
    for t in tasks:
        failure = t.exception()
        if failure is not None:
            raise failure
    return {
        "to_stable_s": to_stable,
        "join_pause_s": join_pause,
        "heartbeat_p50_ms": statistics.median(round_trips) * 1000 if round_trips else -1,
    }


def measure(name: str, bootstrap: str, sizes: list[int], trials: int) -> dict[str, Any]:
    host, _, port = bootstrap.rpartition(":")
    topic_id = _topic_id_via_metadata(bootstrap)
    out: dict[str, Any] = {}
    for n in sizes:
        runs = []
        for i in range(trials):
            runs.append(asyncio.run(_trial(host, int(port), topic_id, n)))
            log(f"{name}: {n} members, trial {i + 1}: {runs[-1]}")
        out[str(n)] = {k: statistics.median(r[k] for r in runs) for k in runs[0]} | {"trials": runs}
    return out


def _topic_id_via_metadata(bootstrap: str) -> uuid.UUID:
    """The topic's id from a Metadata v12 request (created first)."""
    from confluent_kafka.admin import AdminClient, NewTopic

    from kafkacore.net.connection import NodeClient
    from kafkacore.protocol import APIS_BY_NAME

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1)])[TOPIC].result(60)
    host, _, port = bootstrap.rpartition(":")
    api: Any = APIS_BY_NAME["Metadata"]

    async def ask() -> tuple[uuid.UUID, int]:
        client = NodeClient(host, int(port), client_id="bench-metadata")
        try:
            request = api.request.cls(topics=[api.request.cls.MetadataRequestTopic(name=TOPIC)])
            t = (await client.send(api, 12, request)).topics[0]
            return t.topic_id, len(t.partitions)
        finally:
            await client.close()

    deadline = time.monotonic() + 30
    while True:
        topic_id, partitions = asyncio.run(ask())
        if partitions == PARTITIONS and topic_id.int:
            return topic_id
        if time.monotonic() > deadline:
            raise TimeoutError(f"{TOPIC} has {partitions} partitions")
        time.sleep(0.2)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kafka", action="store_true", help="also Apache Kafka 4.3.1")
    parser.add_argument("--only-kafka", action="store_true", help="Apache Kafka 4.3.1 alone")
    parser.add_argument("--members", default="3,50")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--out", type=Path, default=REPO / "benches/results/groups.json")
    args = parser.parse_args()
    sizes = [int(n) for n in args.members.split(",")]
    report: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}",
        "command": "python benches/groups/run.py " + " ".join(sys.argv[1:]),
        "configs": GROUP_CONFIGS,
        "brokers": {},
    }
    starts = []
    if not args.only_kafka:
        starts.append(("kafkacore", lambda: broker_bench.start_kafkacore(extra=GROUP_CONFIGS)))
    if args.kafka or args.only_kafka:
        libs = kafka_libs()
        starts.append(("kafka", lambda: broker_bench.start_kafka(libs, extra=GROUP_CONFIGS)))
    for name, start in starts:
        broker = start()
        try:
            report["brokers"][name] = measure(name, broker.bootstrap, sizes, args.trials)
        finally:
            broker_bench.stop(broker.proc)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_report(args.out, report)
    for name, figures in report["brokers"].items():
        for n, f in figures.items():
            print(
                f"{name:10} {n:>3} members: to stable {f['to_stable_s']:.2f} s, join pause "
                f"{f['join_pause_s']:.2f} s, heartbeat p50 {f['heartbeat_p50_ms']:.2f} ms"
            )
    return 0


if __name__ == "__main__":
    run_main(main)
