"""The balancer's decisions at each look at the cluster (:func:`step`), pure: which of its
moves finished or were abandoned, which start now, which partitions need a preferred
election, which replication throttles must be in force, and the state to keep - the
state a new controller takes over after a failover (:class:`BalancerState`, as JSON).

Rules:

* **One move per partition.** A partition being reassigned - by the balancer or by
  anyone - is never planned nor started again (the planner's :func:`movable`), and a
  move is remembered (:attr:`BalancerState.in_flight`) from before its reassignment is
  asked for until the controller no longer lists the partition as moving.
* **Bounded.** At most ``max.moves.in.flight`` of the balancer's moves run at once; the
  balancer's throttle (``leader/follower.replication.throttled.rate`` on the brokers of
  its moves, the moving replicas named in the topics' ``*.replication.throttled.replicas``,
  as ``kafka-reassign-partitions --throttle`` sets them) is in force while they run and
  removed when none does.
* **Cool-down.** No new move starts within ``cooldown.ms`` of a broker joining or
  leaving, of the controller taking over, or of a round (the moves from balanced to
  balanced again) ending.
* **Degraded clusters wait.** While a replica of some partition is on a broker that is
  down and not being decommissioned, nothing new starts (a restarting broker is not a
  reason to move data).
* **Failover.** The moves in flight are the controller's reassignments: a new
  controller resumes them (Kafka's failover does), this state tells its balancer they
  are its own (so their throttles are removed when they end), the rest of the old plan is
  abandoned, and after the cool-down it plans afresh from the cluster as it is.

Thread-safety: pure functions over immutable inputs (the state is copied).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from kafkacore.balancer.config import BalancerConfig
from kafkacore.balancer.model import LEADER_MOVE, ClusterModel, Move
from kafkacore.balancer.planner import Plan, plan
from kafkacore.log import TopicPartition

__all__ = [
    "HISTORY_SIZE",
    "BalancerState",
    "Decision",
    "Throttles",
    "step",
    "throttles_for",
]

HISTORY_SIZE = 100
"""The balancer's finished moves it remembers (for ``kafkacore balancer status``)."""

LEADER_THROTTLED_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_THROTTLED_REPLICAS = "follower.replication.throttled.replicas"
LEADER_THROTTLED_RATE = "leader.replication.throttled.rate"
FOLLOWER_THROTTLED_RATE = "follower.replication.throttled.rate"


@dataclass(frozen=True, slots=True)
class Throttles:
    """Replication throttles in force for the balancer's moves: per topic the
    ``leader.replication.throttled.replicas`` and ``follower.replication.throttled.replicas``
    values (``p:b`` entries, sorted as Kafka's tool sorts them), and the brokers whose
    ``leader/follower.replication.throttled.rate`` is ``rate``."""

    topics: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    brokers: frozenset[int] = frozenset()
    rate: int = 0

    def to_json(self) -> dict[str, object]:
        return {
            "topics": {t: list(v) for t, v in sorted(self.topics.items())},
            "brokers": sorted(self.brokers),
            "rate": self.rate,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Throttles:
        topics = data.get("topics") or {}
        assert isinstance(topics, dict)
        brokers = data.get("brokers") or []
        assert isinstance(brokers, list)
        rate = data.get("rate", 0)
        return cls(
            {str(t): (str(v[0]), str(v[1])) for t, v in topics.items()},
            frozenset(int(b) for b in brokers),
            int(rate) if isinstance(rate, int | str) else 0,
        )


def throttles_for(moves: Iterable[Move], rate: int) -> Throttles:
    """The throttles of ``moves`` (Kafka's ``calculateLeaderThrottles`` /
    ``calculateFollowerThrottles``): every current replica of a moving partition as a
    leader throttle, every added one as a follower throttle, the rate on every broker
    involved. Leader-only moves copy nothing and are not throttled."""
    leader: dict[str, set[str]] = {}
    follower: dict[str, set[str]] = {}
    brokers: set[int] = set()
    for m in moves:
        if m.kind == LEADER_MOVE:
            continue
        topic, p = m.tp
        leader.setdefault(topic, set()).update(f"{p}:{b}" for b in m.before)
        follower.setdefault(topic, set()).update(f"{p}:{b}" for b in m.destinations)
        brokers.update(m.before)
        brokers.update(m.after)
    topics = {
        t: (",".join(sorted(leader[t])), ",".join(sorted(follower.get(t, set())))) for t in leader
    }
    return Throttles(topics, frozenset(brokers), rate if brokers else 0)


@dataclass(frozen=True, slots=True)
class InFlight:
    """A move of the balancer's that was started, and when (ms)."""

    move: Move
    started_ms: int


@dataclass(frozen=True, slots=True)
class BalancerState:
    """What the balancer keeps between looks, and a new controller takes over (stored as
    JSON by the controller): its moves in flight, the throttles it set, the partitions
    awaiting a preferred election, its counters, the live brokers it saw last, the
    cool-down's end, the current round's start and skew, and its last finished moves."""

    in_flight: Mapping[TopicPartition, InFlight] = field(default_factory=dict)
    throttles: Throttles = field(default_factory=Throttles)
    to_elect: frozenset[TopicPartition] = frozenset()
    completed: int = 0
    abandoned: int = 0
    bytes_moved: int = 0
    live: tuple[int, ...] = ()
    cooldown_until_ms: int = 0
    round_started_ms: int | None = None
    round_skew_before: Mapping[str, object] | None = None
    history: tuple[Mapping[str, object], ...] = ()

    def to_json(self) -> bytes:
        data = {
            "version": 1,
            "in_flight": [
                {**f.move.as_dict(), "started_ms": f.started_ms}
                for _tp, f in sorted(self.in_flight.items())
            ],
            "throttles": self.throttles.to_json(),
            "to_elect": [[tp.topic, tp.partition] for tp in sorted(self.to_elect)],
            "completed": self.completed,
            "abandoned": self.abandoned,
            "bytes_moved": self.bytes_moved,
            "live": list(self.live),
            "cooldown_until_ms": self.cooldown_until_ms,
            "round_started_ms": self.round_started_ms,
            "round_skew_before": self.round_skew_before,
            "history": list(self.history),
        }
        return json.dumps(data, separators=(",", ":"), sort_keys=True).encode()

    @classmethod
    def from_json(cls, raw: bytes | None) -> BalancerState:
        """The stored state; a fresh one for nothing stored or for a version this code
        does not know (the moves in flight then finish as plain reassignments)."""
        if not raw:
            return cls()
        data = json.loads(raw)
        if not isinstance(data, dict) or data.get("version") != 1:
            return cls()
        in_flight = {}
        for entry in data.get("in_flight", []):
            move = _move_from_json(entry)
            in_flight[move.tp] = InFlight(move, int(entry.get("started_ms", 0)))
        return cls(
            in_flight=in_flight,
            throttles=Throttles.from_json(data.get("throttles") or {}),
            to_elect=frozenset(TopicPartition(t, int(p)) for t, p in data.get("to_elect", [])),
            completed=int(data.get("completed", 0)),
            abandoned=int(data.get("abandoned", 0)),
            bytes_moved=int(data.get("bytes_moved", 0)),
            live=tuple(int(b) for b in data.get("live", [])),
            cooldown_until_ms=int(data.get("cooldown_until_ms", 0)),
            round_started_ms=data.get("round_started_ms"),
            round_skew_before=data.get("round_skew_before"),
            history=tuple(data.get("history", [])),
        )


def _move_from_json(entry: Mapping[str, object]) -> Move:
    before = entry["before"]
    after = entry["after"]
    assert isinstance(before, list) and isinstance(after, list)
    return Move(
        TopicPartition(str(entry["topic"]), int(str(entry["partition"]))),
        tuple(int(b) for b in before),
        tuple(int(b) for b in after),
        str(entry["kind"]),
        str(entry["goal"]),
        int(str(entry.get("bytes", 0))),
    )


@dataclass(frozen=True, slots=True)
class Decision:
    """What to do now: the moves to start (after the state is stored and the throttles
    are in force), the partitions to elect their preferred leader in, the throttles that
    must be in force, the new state, what the balancer is doing (one line) and the plan
    it looked at (``None`` when it did not plan)."""

    start: tuple[Move, ...]
    elect: tuple[TopicPartition, ...]
    throttles: Throttles
    state: BalancerState
    status: str
    plan: Plan | None = None


def _finish(
    state: BalancerState, model: ClusterModel, now_ms: int
) -> tuple[dict[TopicPartition, InFlight], set[TopicPartition], BalancerState]:
    """The moves in flight that ended since the last look: counted as completed (the
    partition has the planned replicas) or abandoned (it has others: cancelled, replaced
    by another reassignment, deleted); their partitions may need a preferred election."""
    in_flight = dict(state.in_flight)
    to_elect = set(state.to_elect)
    completed, abandoned, moved = state.completed, state.abandoned, state.bytes_moved
    history = list(state.history)
    for tp, flight in sorted(state.in_flight.items()):
        p = model.partitions.get(tp)
        if p is not None and p.reassigning:
            continue
        del in_flight[tp]
        done = p is not None and tuple(p.replicas) == flight.move.after
        if done:
            completed += 1
            moved += flight.move.bytes
            to_elect.add(tp)
        else:
            abandoned += 1
        history.append(
            {
                **flight.move.as_dict(),
                "started_ms": flight.started_ms,
                "finished_ms": now_ms,
                "outcome": "completed" if done else "abandoned",
            }
        )
    # an election is only needed where the preferred leader does not lead (yet)
    to_elect = {
        tp
        for tp in to_elect
        if (p := model.partitions.get(tp)) is not None
        and p.replicas
        and not p.reassigning
        and p.leader != p.preferred_leader
    }
    return (
        in_flight,
        to_elect,
        replace(
            state,
            completed=completed,
            abandoned=abandoned,
            bytes_moved=moved,
            history=tuple(history[-HISTORY_SIZE:]),
        ),
    )


def _degraded(model: ClusterModel) -> list[int]:
    """Brokers holding replicas that are down and not being drained."""
    down = set()
    for p in model.partitions.values():
        for r in p.replicas:
            b = model.brokers.get(r)
            if b is None or (not b.alive and not b.decommissioned):
                down.add(r)
    return sorted(down)


def step(
    state: BalancerState,
    model: ClusterModel,
    config: BalancerConfig,
    now_ms: int,
    *,
    activated: bool = False,
) -> Decision:
    """The balancer's decision for ``model`` at ``now_ms`` (see the module documentation).
    ``activated``: the first look of a controller that just took over (a cool-down
    starts). ``model`` must show a partition being reassigned with its target replicas and
    ``reassigning`` set."""
    in_flight, to_elect, state = _finish(state, model, now_ms)
    live = tuple(sorted(b.id for b in model.brokers.values() if b.alive))
    cooldown_until = state.cooldown_until_ms
    if activated or (state.live and live != state.live):
        cooldown_until = max(cooldown_until, now_ms + config.cooldown_ms)
    state = replace(state, live=live, cooldown_until_ms=cooldown_until)
    running = [f.move for f in in_flight.values()]
    # the preferred leaders that can lead now (the others wait to rejoin the ISR)
    elect = tuple(
        sorted(
            tp
            for tp in to_elect
            if model.partitions[tp].preferred_leader in model.partitions[tp].isr
        )
    )

    def decided(status: str, start: tuple[Move, ...] = (), found: Plan | None = None) -> Decision:
        moves = [*running, *start]
        throttles = throttles_for(moves, config.throttle_bytes_per_second)
        new_state = replace(
            state,
            in_flight={
                **in_flight,
                **{m.tp: InFlight(m, now_ms) for m in start},
            },
            throttles=throttles,
            to_elect=frozenset(to_elect),
        )
        return Decision(start, elect, throttles, new_state, status, found)

    if not config.enabled:
        if running:
            return decided(f"disabled: {len(running)} move(s) in flight finish")
        return decided("disabled")
    if config.paused:
        return decided(f"paused ({len(running)} move(s) in flight)")
    down = _degraded(model)
    if down:
        return decided(f"waiting: broker(s) {down} down")
    found = plan(model, config)
    if not found.moves and not running:
        if state.round_started_ms is not None:
            state = replace(
                state,
                round_started_ms=None,
                round_skew_before=None,
                cooldown_until_ms=max(cooldown_until, now_ms + config.cooldown_ms),
            )
        return decided("balanced", found=found)
    if now_ms < state.cooldown_until_ms:
        wait = (state.cooldown_until_ms - now_ms) / 1000
        return decided(
            f"cooling down {wait:.1f} s ({len(found.moves)} move(s) planned, "
            f"{len(running)} in flight)",
            found=found,
        )
    room = config.max_moves_in_flight - len(running)
    busy = set(in_flight)
    start = tuple(m for m in found.moves if m.tp not in busy)[: max(0, room)]
    if start and state.round_started_ms is None:
        state = replace(state, round_started_ms=now_ms, round_skew_before=found.before.as_dict())
    return decided(
        f"moving: {len(running) + len(start)} move(s) in flight, "
        f"{len(found.moves) - len(start)} more planned",
        start,
        found,
    )
