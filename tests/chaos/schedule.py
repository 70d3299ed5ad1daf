"""The seeded fault schedule of a chaos run: which faults, in which order, for how long.

A schedule is data, drawn once from ``random.Random(seed)`` before the run starts, so one
seed always means the same sequence of faults (their targets are resolved when a fault
starts - "the leader of partition 3" - from the same seeded choices). Between two faults
the cluster gets a quiet gap to heal: faults never overlap, so a failure can be pinned on
one fault in the history.

Kinds (what :mod:`chaos.campaign` does for each):

* ``kill``            - SIGKILL a broker (the leader of a chosen partition), restart it later
* ``pause``           - SIGSTOP the leader of a chosen partition (a zombie leader), SIGCONT
* ``partition-leader-controller`` - cut the leader of a chosen partition from the
  controller, both ways, at both brokers' proxies
* ``partition-zookeeper`` - cut a broker from ZooKeeper (its ZooKeeper proxy stalls)
* ``kill-controller`` - SIGKILL the controller, restart it later
* ``disk-full``       - fill the tmpfs log dir of the broker that has one, free it later
* ``one-way``         - the leader of a chosen partition stops hearing from its followers'
  fetchers (requests stall, "in"), or its answers stall ("out")
* ``reset``           - abort every connection of a chosen broker's proxy
"""

from __future__ import annotations

import random
from dataclasses import dataclass

KINDS = (
    "kill",
    "pause",
    "partition-leader-controller",
    "partition-zookeeper",
    "kill-controller",
    "disk-full",
    "one-way",
    "reset",
)
# Kafka-level weights: the faults issue 11 names come first.
WEIGHTS = {
    "kill": 3,
    "pause": 2,
    "partition-leader-controller": 2,
    "partition-zookeeper": 2,
    "kill-controller": 2,
    "disk-full": 2,
    "one-way": 1,
    "reset": 1,
}


@dataclass(frozen=True)
class Fault:
    kind: str
    start_s: float  # since the workload started
    duration_s: float  # how long the fault holds before it is healed
    partition: int  # picks the target broker (that partition's leader) where one is needed
    pick: float  # a uniform [0, 1) draw for any other choice (a broker, a direction)


def make_schedule(
    seed: int,
    duration_s: float,
    *,
    partitions: int = 6,
    disk_fault: bool = True,
    first_s: float = 5.0,
    hold_s: tuple[float, float] = (3.0, 8.0),
    gap_s: tuple[float, float] = (6.0, 10.0),
    tail_s: float = 12.0,
) -> list[Fault]:
    """Faults from ``first_s`` until ``duration_s - tail_s`` (the tail is quiet, so the
    cluster ends healed). Each run starts with a leader kill, so every run measures a
    leadership recovery; no kind comes twice in a row."""
    rng = random.Random(seed)
    kinds = [k for k in KINDS if disk_fault or k != "disk-full"]
    faults: list[Fault] = []
    t = first_s
    while True:
        if faults:  # never the same kind twice in a row
            previous = faults[-1].kind
            others = [k for k in kinds if k != previous]
            kind = rng.choices(others, [WEIGHTS[k] for k in others])[0]
        else:
            kind = "kill"
        hold = round(rng.uniform(*hold_s), 2)
        if t + hold > duration_s - tail_s:
            break
        faults.append(Fault(kind, round(t, 2), hold, rng.randrange(partitions), rng.random()))
        t += hold + rng.uniform(*gap_s)
    return faults
