"""``kafkacore balancer``: the partition balancer of the controller (a kafkacore
extension; Kafka has no such tool) - what it is doing and would do, and the switches an
operator needs:

    kafkacore balancer --bootstrap-server HOST:PORT status          # settings, moves, skew
    kafkacore balancer --bootstrap-server HOST:PORT plan            # + the planned moves
    kafkacore balancer --bootstrap-server HOST:PORT pause|resume
    kafkacore balancer --bootstrap-server HOST:PORT decommission --broker-ids 4,5
    kafkacore balancer --bootstrap-server HOST:PORT recommission --broker-ids 4

``--json`` prints ``status``/``plan`` as one JSON document. Option parsing and printing
over :mod:`kafkacore.admin.balancer`; ``pause``, ``resume`` and the decommission list are
cluster-wide dynamic broker configs, so they hold when the controller moves.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from kafkacore.admin import Admin, AdminError
from kafkacore.admin import balancer as ops
from kafkacore.cli.topics import BrokerError, add_common, admin_client, wire_sender

__all__ = ["register", "run"]

PROG = "kafkacore balancer"
CLIENT_ID = "balancer-tool"
_ACTIONS = ("status", "plan", "pause", "resume", "decommission", "recommission")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "balancer",
        prog=PROG,
        help="The controller's partition balancer: status, plan, pause, resume, drain.",
    )
    add_common(parser)
    parser.add_argument("action", choices=_ACTIONS)
    parser.add_argument("--broker-ids", metavar="IDS", help="for (re)commission: 4,5")
    parser.add_argument("--json", action="store_true", help="status/plan as JSON")
    parser.set_defaults(run=run, prog=PROG)


def _broker_ids(args: argparse.Namespace) -> list[int]:
    from kafkacore.cli import UsageError

    if not args.broker_ids:
        raise UsageError(PROG, f"{args.action} needs --broker-ids")
    try:
        return [int(b) for b in args.broker_ids.split(",") if b.strip()]
    except ValueError:
        raise UsageError(PROG, f"not a list of broker ids: {args.broker_ids}") from None


def _json(status: ops.BalancerStatus) -> dict[str, Any]:
    s = status.settings
    return {
        "state": status.state,
        "controller": status.controller,
        "settings": {
            "enabled": s.enabled,
            "paused": s.paused,
            "goals": list(s.goals),
            "max_moves_in_flight": s.max_moves_in_flight,
            "throttle_bytes_per_second": s.throttle_bytes_per_second,
            "cooldown_ms": s.cooldown_ms,
            "decommissioned": sorted(s.decommissioned),
        },
        "in_flight": [
            {
                "topic": m.tp[0],
                "partition": m.tp[1],
                "replicas": m.replicas,
                "adding": m.adding,
                "removing": m.removing,
                "copied_bytes": m.copied_bytes,
                "total_bytes": m.total_bytes,
            }
            for m in status.in_flight
        ],
        "plan": [m.as_dict() for m in status.plan.moves],
        "skew_before": status.plan.before.as_dict(),
        "skew_after": status.plan.after.as_dict(),
        "unmet": list(status.plan.unmet),
    }


def run(args: argparse.Namespace) -> int:
    from kafkacore.cli import UsageError

    if not args.bootstrap_server:
        raise UsageError(PROG, "Please specify --bootstrap-server")
    admin = Admin(admin_client(args), wire_sender(CLIENT_ID))
    try:
        if args.action in ("status", "plan"):
            status = ops.balancer_status(admin)
            if args.json:
                print(json.dumps(_json(status), indent=2, sort_keys=True))
            else:
                print("\n".join(ops.status_text(status, with_plan=args.action == "plan")))
        elif args.action in ("pause", "resume"):
            ops.set_paused(admin, args.action == "pause")
            print(f"The balancer is {'paused' if args.action == 'pause' else 'resumed'}.")
        else:
            wanted = set(_broker_ids(args))
            current = set(ops.balancer_settings(admin).decommissioned)
            new = current | wanted if args.action == "decommission" else current - wanted
            ops.set_decommissioned(admin, new)
            print("Decommissioned brokers: " + (", ".join(map(str, sorted(new))) or "none"))
    except (AdminError, BrokerError) as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    sys.stdout.flush()
    return 0
