"""``kafkacore pipeline demo``: the log-monitoring example pipeline in one command.

Starts a broker (unless ``--bootstrap-server`` is given), the log agent and the Spark job of
``examples/log_pipeline`` and prints the per-service aggregates as they arrive. The example
lives in the source tree, next to the ``python`` directory, and needs pyspark and
confluent-kafka.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["add_demo_arguments", "register", "run"]

PROG = "kafkacore pipeline"
RUNNER = "examples.log_pipeline.runner"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "pipeline", prog=PROG, help="The log-monitoring example pipeline (Spark)."
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    demo = actions.add_parser(
        "demo",
        prog=f"{PROG} demo",
        help="Broker, log agent and Spark job; print the aggregates as they arrive.",
    )
    add_demo_arguments(demo)
    demo.set_defaults(prog=f"{PROG} demo")
    parser.set_defaults(run=run, prog=PROG, action=None)


def add_demo_arguments(parser: argparse.ArgumentParser) -> None:
    """The demo's options (here, so that ``--help`` works without importing the example)."""
    parser.add_argument(
        "--bootstrap-server", metavar="HOST:PORT", help="use this broker instead of starting one"
    )
    parser.add_argument("--duration", type=float, default=120.0, help="seconds to run")
    parser.add_argument("--rate", type=float, default=200.0, help="generated events/s")
    parser.add_argument("--speed", type=float, default=6.0, help="event-time speed-up")
    parser.add_argument("--seed", type=int, help="random seed of the generated logs")
    parser.add_argument("--workdir", help="broker data, Parquet output and checkpoints")
    parser.add_argument("--keep", action="store_true", help="keep the temporary workdir")


def run(args: argparse.Namespace) -> int:
    from kafkacore.cli import UsageError

    if args.action is None:
        raise UsageError(PROG, "an action is required: demo")
    status: int = _runner(args.prog).run(args)
    return status


def _runner(prog: str) -> ModuleType:
    """The example's runner module, from the source tree this package sits in."""
    from kafkacore.cli import UsageError

    root = Path(__file__).resolve().parents[3]
    if (root / "examples" / "log_pipeline").is_dir() and str(root) not in sys.path:
        sys.path.insert(0, str(root))
    try:
        return importlib.import_module(RUNNER)
    except ModuleNotFoundError as exc:
        if exc.name is not None and RUNNER.startswith(exc.name):
            raise UsageError(
                prog, "examples/log_pipeline is not here: run it from a kafkacore checkout"
            ) from None
        raise UsageError(prog, f"the pipeline needs {exc.name} (pip install it)") from None
