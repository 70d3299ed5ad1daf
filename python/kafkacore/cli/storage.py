"""``kafkacore storage info|format|version-mapping|random-uuid`` (Kafka's
``kafka-storage``): a KRaft node's directories, formatted before its first start.

    kafkacore storage random-uuid
    kafkacore storage format -t <cluster id> -c server.properties [--standalone |
        --initial-controllers 1@host:9093:<dir id>,... | --no-initial-controllers]
        [--release-version 4.3 | --feature name=level ...] [--add-scram ...]
        [--ignore-formatted]
    kafkacore storage info -c server.properties
    kafkacore storage version-mapping [--release-version 4.3]

The work is :mod:`kafkacore.metadata.storage`'s; this module parses the options and
prints what Kafka's tool prints. Exit status 1 with Kafka's message on a refusal.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["register", "run"]

PROG = "kafkacore storage"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("storage", prog=PROG, help="Format and inspect KRaft storage.")
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    info = actions.add_parser(
        "info", prog=f"{PROG} info", help="Show the log directories' metadata."
    )
    info.add_argument("--config", "-c", required=True)
    fmt = actions.add_parser("format", prog=f"{PROG} format", help="Format the log directories.")
    fmt.add_argument("--config", "-c", required=True)
    fmt.add_argument("--cluster-id", "-t", required=True)
    fmt.add_argument("--add-scram", "-S", action="append", default=[])
    fmt.add_argument("--ignore-formatted", "-g", action="store_true")
    fmt.add_argument("--release-version", "-r")
    fmt.add_argument("--feature", "-f", action="append", default=[])
    group = fmt.add_mutually_exclusive_group()
    group.add_argument("--standalone", "-s", action="store_true")
    group.add_argument("--no-initial-controllers", "-N", action="store_true")
    group.add_argument("--initial-controllers", "-I")
    mapping = actions.add_parser("version-mapping", prog=f"{PROG} version-mapping")
    mapping.add_argument("--release-version", "-r")
    actions.add_parser("random-uuid", prog=f"{PROG} random-uuid", help="Print a random UUID.")
    parser.set_defaults(run=run, prog=PROG)


def _config(path: str) -> Any:
    from kafkacore.cli import UsageError
    from kafkacore.config import BrokerConfig, ConfigError, load_properties

    try:
        return BrokerConfig(load_properties(path))
    except OSError as exc:
        raise UsageError(PROG, f"cannot read {path}: {exc.strerror}") from None
    except ConfigError as exc:
        raise UsageError(PROG, str(exc)) from None


def _features(items: list[str]) -> dict[str, int]:
    from kafkacore.cli import UsageError

    out = {}
    for item in items:
        name, sep, level = item.partition("=")
        try:
            out[name.strip()] = int(level)
        except ValueError:
            raise UsageError(
                PROG, f"Can't parse feature={item}. Must be of the form FEATURE=LEVEL."
            ) from None
        if not sep:
            raise UsageError(
                PROG, f"Can't parse feature={item}. Must be of the form FEATURE=LEVEL."
            )
    return out


def run(args: argparse.Namespace) -> int:
    from kafkacore.log.checkpoints import random_uuid, uuid_to_base64
    from kafkacore.metadata import storage
    from kafkacore.metadata.versions import (
        LATEST_PRODUCTION,
        FeatureVersionError,
        default_feature_levels,
        metadata_version_from_string,
    )

    if args.action == "random-uuid":
        print(uuid_to_base64(random_uuid()))
        return 0
    if args.action == "info":
        status, lines = storage.storage_info(_config(args.config))
        print("\n".join(lines))
        return status
    if args.action == "version-mapping":
        try:
            mv = (
                metadata_version_from_string(args.release_version)
                if args.release_version
                else LATEST_PRODUCTION
            )
        except FeatureVersionError as exc:
            sys.stderr.write(f"{exc}\n")
            return 1
        levels = default_feature_levels(mv)
        print(f"metadata.version={mv.level} ({args.release_version or mv})")
        for name, level in levels.items():  # Kafka's Feature order
            if name != "metadata.version":
                print(f"{name}={level}")
        return 0
    if args.action == "format":
        config = _config(args.config)
        options = storage.FormatOptions(
            cluster_id=args.cluster_id,
            release_version=args.release_version,
            features=_features(args.feature),
            scram_records=[_scram_record(item) for item in args.add_scram],
            ignore_formatted=args.ignore_formatted,
            standalone=args.standalone,
            initial_controllers=args.initial_controllers,
            no_initial_controllers=args.no_initial_controllers,
        )
        try:
            lines = storage.format_storage(config, options)
        except storage.FormatterError as exc:
            sys.stderr.write(f"{exc}\n")
            return 1
        print("\n".join(lines))
        return 0
    sys.stderr.write(f"{PROG}: error: an action is required\n")
    return 1


def _scram_record(item: str) -> Any:
    """``--add-scram 'SCRAM-SHA-256=[name=alice,password=alice-secret]'``."""
    import hashlib
    import os

    from kafkacore.cli import UsageError
    from kafkacore.metadata.image.security import ScramCredentialData
    from kafkacore.security.scram import ScramMechanism, credential_from_salted_password

    mechanism_name, sep, rest = item.partition("=")
    mechanisms = {
        "SCRAM-SHA-256": ScramMechanism.SCRAM_SHA_256,
        "SCRAM-SHA-512": ScramMechanism.SCRAM_SHA_512,
    }
    mechanism = mechanisms.get(mechanism_name.strip().upper())
    if not sep or mechanism is None or not rest.startswith("[") or not rest.endswith("]"):
        raise UsageError(PROG, f"Invalid --add-scram value: {item}")
    fields = dict(part.split("=", 1) for part in rest[1:-1].split(",") if "=" in part)
    name, password = fields.get("name", "").strip('"'), fields.get("password", "").strip('"')
    if not name or not password:
        raise UsageError(PROG, f"Invalid --add-scram value: {item}")
    iterations = int(fields.get("iterations", mechanism.min_iterations))
    salt = bytes.fromhex(fields["salt"]) if "salt" in fields else os.urandom(16)
    salted = hashlib.pbkdf2_hmac(mechanism.hash_name, password.encode(), salt, iterations)
    credential = credential_from_salted_password(mechanism, salt, salted, iterations)
    data = ScramCredentialData(
        credential.salt, credential.stored_key, credential.server_key, credential.iterations
    )
    return data.to_record(name, mechanism.type_id)
