"""``kafkacore features``: Kafka's ``kafka-features.sh`` (``FeatureCommand``, Kafka 4.3.1):
the same subcommands, options, output lines and exit statuses.

    kafkacore features --bootstrap-server localhost:9092 describe
    kafkacore features --bootstrap-server localhost:9092 upgrade --feature group.version=1
    kafkacore features --bootstrap-server localhost:9092 downgrade \
        --feature transaction.version=1 --dry-run
    kafkacore features --bootstrap-server localhost:9092 disable --feature group.version
    kafkacore features version-mapping --release-version 3.9
    kafkacore features feature-dependencies --feature eligible.leader.replicas.version=1

Option parsing and printing over :mod:`kafkacore.admin.features` (ApiVersions to a broker,
UpdateFeatures to the controller) and :mod:`kafkacore.features` (the levels of a release,
the dependencies). Errors go to stderr with exit status 1, as Kafka's ``TerseException``s.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from kafkacore.admin import Admin, AdminError
from kafkacore.admin.features import describe_features, update_features
from kafkacore.cli.topics import BrokerError, admin_client, wire_sender
from kafkacore.features import (
    FEATURES,
    LATEST_PRODUCTION,
    METADATA_VERSION,
    METADATA_VERSIONS,
    FeatureUpdate,
    FeatureVersionError,
    UpgradeType,
    feature,
    metadata_version_from_string,
)

__all__ = ["register", "run"]

PROG = "kafkacore features"
_SHORT = range(-(2**15), 2**15)


class _Failed(Exception):
    """Kafka's ``TerseException``: the message on stderr, exit status 1."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "features", prog=PROG, help="Manage finalized feature flags (kafka-features)."
    )
    parser.add_argument("--bootstrap-server", metavar="BOOTSTRAP_SERVER")
    parser.add_argument("--bootstrap-controller", metavar="BOOTSTRAP_CONTROLLER")
    parser.add_argument("--command-config", metavar="COMMAND_CONFIG")
    commands = parser.add_subparsers(dest="features_command", metavar="COMMAND")
    describe = commands.add_parser("describe", help="Describes the current active feature flags.")
    describe.add_argument("--node-id", type=int, metavar="NODE_ID")
    for op, verb in (("upgrade", "Upgrade"), ("downgrade", "Downgrade")):
        sub = commands.add_parser(op, help=f"{verb} one or more feature flags.")
        sub.add_argument("--metadata", metavar="METADATA")
        sub.add_argument("--release-version", metavar="RELEASE_VERSION")
        sub.add_argument("--feature", action="append", metavar="FEATURE")
        if op == "downgrade":
            sub.add_argument("--unsafe", action="store_true")
        sub.add_argument("--dry-run", action="store_true")
    disable = commands.add_parser(
        "disable",
        help="Disable one or more feature flags. This is the same as downgrading the version "
        "to zero.",
    )
    disable.add_argument("--feature", action="append", metavar="FEATURE")
    disable.add_argument("--unsafe", action="store_true")
    disable.add_argument("--dry-run", action="store_true")
    mapping = commands.add_parser(
        "version-mapping", help="Look up the corresponding features for a given metadata version."
    )
    mapping.add_argument("--release-version", metavar="RELEASE_VERSION")
    deps = commands.add_parser(
        "feature-dependencies", help="Look up dependencies for a given feature version."
    )
    deps.add_argument("--feature", action="append", required=True, metavar="FEATURE")
    parser.set_defaults(run=run, prog=PROG)


def run(args: argparse.Namespace) -> int:
    try:
        _run(args)
    except (_Failed, AdminError, BrokerError) as exc:
        sys.stderr.write(f"{exc}\n")
        return 1
    return 0


def _run(args: argparse.Namespace) -> None:
    command = args.features_command
    if command is None:
        raise _Failed(
            "Command line error: too few arguments. Type --help for help."  # argparse4j's
        )
    if command == "version-mapping":
        _version_mapping(args.release_version)
        return
    if command == "feature-dependencies":
        _feature_dependencies(args.feature)
        return
    bootstrap = args.bootstrap_server or args.bootstrap_controller
    if bootstrap is None:
        raise _Failed(
            "Command line error: You must specify either --bootstrap-controller or "
            "--bootstrap-server.. Type --help for help."
        )
    args.bootstrap_server = bootstrap
    admin = Admin(admin_client(args), wire_sender("kafka-features"))
    if command == "describe":
        _describe(admin, bootstrap, args.node_id)
    elif command == "disable":
        kind = UpgradeType.UNSAFE_DOWNGRADE if args.unsafe else UpgradeType.SAFE_DOWNGRADE
        updates: dict[str, FeatureUpdate] = {}
        for name in args.feature or ():
            if name in updates:
                raise _Failed(f"Feature {name} was specified more than once.")
            updates[name] = FeatureUpdate(name, 0, kind)
        _update(admin, "disable", updates, args.dry_run)
    else:
        if command == "upgrade":
            kind = UpgradeType.UPGRADE
        else:
            kind = UpgradeType.UNSAFE_DOWNGRADE if args.unsafe else UpgradeType.SAFE_DOWNGRADE
        _update(admin, command, _upgrade_or_downgrade(args, kind), args.dry_run)


def _level_text(name: str, level: int) -> str:
    """``levelToString``: a metadata.version level by its name."""
    if name == METADATA_VERSION:
        mv = METADATA_VERSIONS.get(level)
        return mv.version if mv is not None else f"UNKNOWN {level}"
    return str(level)


def _describe(admin: Admin, bootstrap: str, node_id: int | None) -> None:
    if node_id is not None and node_id < 0:
        raise _Failed(f"Invalid node id {node_id}: must be non-negative.")
    host, _, port = bootstrap.split(",")[0].strip().rpartition(":")
    found = describe_features(admin, (host, int(port)), node_id)
    epoch = "-" if found.epoch is None else str(found.epoch)
    for name in sorted(found.supported):
        levels = found.supported[name]
        print(
            f"Feature: {name:<40}  SupportedMinVersion: {_level_text(name, levels.min):<15}  "
            f"SupportedMaxVersion: {_level_text(name, levels.max):<15}  "
            f"FinalizedVersionLevel: {_level_text(name, found.finalized.get(name, 0)):<15}  "
            f"Epoch: {epoch}"
        )


def _parse_level(text: str) -> tuple[str, int]:
    """``parseNameAndLevel``: ``feature=level``, both trimmed."""
    name, equals, level = text.partition("=")
    if not equals:
        raise _Failed(f"Can't parse feature=level string {text}: equals sign not found.")
    level = level.strip()
    try:
        value = int(level)
        if value not in _SHORT or not level.lstrip("+-").isdigit():
            raise ValueError(level)
    except ValueError:
        raise _Failed(
            f"Can't parse feature=level string {text}: unable to parse {level} as a short."
        ) from None
    return name.strip(), value


def _upgrade_or_downgrade(args: argparse.Namespace, kind: UpgradeType) -> dict[str, FeatureUpdate]:
    if args.release_version is not None and (args.metadata is not None or args.feature is not None):
        raise _Failed("Can not specify `release-version` with other feature flags.")
    updates: dict[str, FeatureUpdate] = {}
    if args.release_version is not None:
        try:
            mv = metadata_version_from_string(args.release_version, unstable=True)
        except FeatureVersionError as exc:
            raise _Failed(str(exc)) from None
        updates[METADATA_VERSION] = FeatureUpdate(METADATA_VERSION, mv.level, kind)
        for f in FEATURES.values():
            level = f.default_level(mv)
            if kind is not UpgradeType.UPGRADE or level > 0:  # never "upgrade" to 0
                updates[f.name] = FeatureUpdate(f.name, level, kind)
        return updates
    if args.metadata is not None:
        print(" `metadata` flag is deprecated and may be removed in a future release.")
        try:
            mv = metadata_version_from_string(args.metadata, unstable=True)
        except FeatureVersionError as exc:
            raise _Failed(str(exc)) from None
        updates[METADATA_VERSION] = FeatureUpdate(METADATA_VERSION, mv.level, kind)
    for text in args.feature or ():
        name, level = _parse_level(text)
        if name in updates:
            raise _Failed(f"Feature {name} was specified more than once.")
        updates[name] = FeatureUpdate(name, level, kind)
    return updates


def _update(admin: Admin, op: str, updates: dict[str, FeatureUpdate], dry_run: bool) -> None:
    """Kafka's ``update``: one line per feature, sorted by name; then the count of
    failures (exit status 1) if any."""
    if not updates:
        raise _Failed(f"You must specify at least one feature to {op}")
    outcome = update_features(admin, updates, dry_run)
    failures = 0
    for name in sorted(outcome):
        level = updates[name].level
        message = outcome[name]
        if message is not None:
            target = f"disable {name}" if op == "disable" else f"{op} {name} to {level}"
            print(f"{'Can not' if dry_run else 'Could not'} {target}. {message}")
            failures += 1
        else:
            done = "disabled." if op == "disable" else f"{op}d to {level}."
            print(f"{name}{' can be ' if dry_run else ' was '}{done}")
    if failures:
        raise _Failed(f"{failures} out of {len(updates)} operation(s) failed.")


def _version_mapping(release: str | None) -> None:
    text = release if release is not None else LATEST_PRODUCTION.version
    try:
        mv = metadata_version_from_string(text, unstable=True)
    except FeatureVersionError as exc:
        raise _Failed(str(exc)) from None
    print(f"metadata.version={mv.level} ({text})")
    for f in FEATURES.values():
        print(f"{f.name}={f.default_level(mv)}")


def _feature_dependencies(wanted: list[str]) -> None:
    for text in wanted:
        name, level = _parse_level(text)
        if name == METADATA_VERSION:
            mv = METADATA_VERSIONS.get(level)
            if mv is None:
                raise _Failed(f"Unknown metadata.version {level}")
            print(f"{name}={level} ({mv.version}) has no dependencies.")
            continue
        if name not in FEATURES:
            raise _Failed(f"Unknown feature: {name}")
        try:
            dependencies = feature(name).level(level).dependencies
        except FeatureVersionError as exc:
            raise _Failed(str(exc)) from None
        if not dependencies:
            print(f"{name}={level} has no dependencies.")
            continue
        print(f"{name}={level} requires:")
        for dependency, needed in dependencies.items():
            if dependency == METADATA_VERSION:
                print(f"    {dependency}={needed} ({METADATA_VERSIONS[needed].version})")
            else:
                print(f"    {dependency}={needed}")
