"""``kafkacore acls``: Kafka's ``kafka-acls.sh`` (``org.apache.kafka.tools.AclCommand``
of Kafka 4.3) over confluent-kafka's AdminClient, with its options and its output.

    kafkacore acls --bootstrap-server localhost:9092 --add --allow-principal User:alice \\
        --operation Read --topic orders
    kafkacore acls --bootstrap-server localhost:9092 --add --allow-principal User:jane \\
        --producer --topic Test- --resource-pattern-type prefixed
    kafkacore acls --bootstrap-server localhost:9092 --list --topic orders

* Resources: ``--topic``, ``--group``, ``--cluster``, ``--transactional-id`` (each
  repeatable), with ``--resource-pattern-type`` LITERAL (default), PREFIXED, ANY or MATCH
  (ANY and MATCH only to list or remove). ``--delegation-token`` and ``--user-principal``
  are Kafka's too, but librdkafka has no such resource types: they are refused.
* Entries: ``--allow-principal`` / ``--deny-principal`` (``Type:name``), ``--allow-host``
  / ``--deny-host`` (default ``*`` once a principal is given), ``--operation``
  (repeatable, default ``All``).
* ``--producer``: WRITE, DESCRIBE and CREATE on the topics, WRITE and DESCRIBE on the
  transactional ids, and with ``--idempotent`` IDEMPOTENT_WRITE on the cluster.
  ``--consumer``: READ and DESCRIBE on the topics, READ on the groups.
* ``--add`` prints ``Adding ACLs for resource `<pattern>`: `` and the entries (an ACL that
  exists already: ``Acl <binding> already exists.``); ``--remove`` asks
  ``Are you sure ...? (y/n)`` unless ``--force``; ``--list`` prints
  ``Current ACLs for resource `<pattern>`:`` blocks (``--principal`` narrows them, each
  under ``ACLs for principal `<p>```).

Kafka prints resources and entries in ``HashMap``/``HashSet`` order, which hashes enums by
identity and so differs from one run to the next; kafkacore prints them sorted.
Broker errors: ``Error while executing ACL command: <message>``, exit status 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from typing import Any

from kafkacore.security.acl import (
    CLUSTER_NAME,
    SUPPORTED_OPERATIONS,
    AccessControlEntry,
    AclOperation,
    AclPermissionType,
    InvalidAclError,
    PatternType,
    ResourcePattern,
    ResourceType,
)

__all__ = ["format_entry", "format_pattern", "register", "run"]

PROG = "kafkacore acls"
NL = "\n"

# (resource type, name, pattern type): Kafka's ResourcePatternFilter
Filter = tuple[ResourceType, str, PatternType]


class _Failed(Exception):
    """Printed as ``Error while executing ACL command: <message>``, exit status 1."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("acls", prog=PROG, help="Add, remove and list ACLs.")
    parser.add_argument("--bootstrap-server")
    parser.add_argument("--bootstrap-controller")
    parser.add_argument("--command-config", metavar="FILE")
    for action in ("add", "remove", "list"):
        parser.add_argument(f"--{action}", action="store_true")
    for many in (
        "topic",
        "group",
        "transactional-id",
        "delegation-token",
        "user-principal",
        "operation",
        "allow-principal",
        "deny-principal",
        "allow-host",
        "deny-host",
    ):
        parser.add_argument(f"--{many}", action="append", default=None)
    parser.add_argument("--principal", action="append", nargs="?", const=None, default=None)
    parser.add_argument("--cluster", action="store_true")
    parser.add_argument("--resource-pattern-type", default="LITERAL")
    for flag in ("producer", "consumer", "idempotent", "force"):
        parser.add_argument(f"--{flag}", action="store_true")
    parser.set_defaults(run=run, prog=PROG)


# -- Kafka's toString forms ------------------------------------------------------------------


def format_pattern(resource_type: ResourceType, name: str | None, pattern: PatternType) -> str:
    """``ResourcePattern.toString`` (a filter prints the same, ``<any>`` for no name)."""
    shown = "<any>" if name is None else name
    return (
        f"ResourcePattern(resourceType={resource_type.name}, name={shown}, "
        f"patternType={pattern.name})"
    )


def format_entry(entry: AccessControlEntry) -> str:
    """``AccessControlEntry.toString``."""
    return (
        f"(principal={entry.principal}, host={entry.host}, "
        f"operation={entry.operation.name}, permissionType={entry.permission_type.name})"
    )


def _binding_text(pattern: ResourcePattern, entry: AccessControlEntry) -> str:
    p = format_pattern(pattern.resource_type, pattern.name, pattern.pattern_type)
    return f"(pattern={p}, entry={format_entry(entry)})"


# -- arguments -> resources and entries (AclCommand.getResourceFilter / getAcl) --------------


def _check_args(args: argparse.Namespace) -> None:
    from kafkacore.cli import UsageError

    def fail(message: str) -> None:
        raise UsageError(PROG, message)

    if args.bootstrap_server and args.bootstrap_controller:
        fail("Only one of --bootstrap-server or --bootstrap-controller must be specified")
    if not args.bootstrap_server and not args.bootstrap_controller:
        fail("One of --bootstrap-server or --bootstrap-controller must be specified")
    if args.bootstrap_controller:
        fail("--bootstrap-controller is not supported: kafkacore has no KRaft controllers")
    if sum(map(bool, (args.add, args.remove, args.list))) != 1:
        fail("Command must include exactly one action: --list, --add, --remove. ")
    given = {name: getattr(args, name.replace("-", "_")) for name in _CHECKED}
    if args.list:
        for other in ("producer", "consumer", "allow-host", "allow-principal"):
            if given[other]:
                fail(f'Option "[list]" can\'t be used with option "[{other}]"')
        for other in ("deny-host", "deny-principal"):
            if given[other]:
                fail(f'Option "[list]" can\'t be used with option "[{other}]"')
    for role in ("producer", "consumer"):
        if given[role]:
            for other in ("operation", "deny-principal", "deny-host"):
                if given[other]:
                    fail(f'Option "[{role}]" can\'t be used with option "[{other}]"')
    if args.principal is not None and not args.list:
        fail("The --principal option is only available if --list is set")
    if args.producer and not args.topic:
        fail("With --producer you must specify a --topic")
    if args.idempotent and not args.producer:
        fail("The --idempotent option is only available if --producer is set")
    if args.consumer and (
        not args.topic
        or not args.group
        or (not args.producer and (args.cluster or args.transactional_id))
    ):
        fail(
            "With --consumer you must specify a --topic and a --group and no --cluster or "
            "--transactional-id option should be specified."
        )


_CHECKED = (
    "producer",
    "consumer",
    "allow-host",
    "allow-principal",
    "deny-host",
    "deny-principal",
    "operation",
)


def _pattern_type(args: argparse.Namespace) -> PatternType:
    from kafkacore.cli import UsageError

    try:
        found = PatternType.parse(args.resource_pattern_type)
    except InvalidAclError:
        found = PatternType.UNKNOWN
    if found is PatternType.UNKNOWN:
        raise UsageError(PROG, f"Unknown resource-pattern-type: {args.resource_pattern_type}")
    return found


def _resource_filters(args: argparse.Namespace, *, die_if_none: bool = True) -> list[Filter]:
    from kafkacore.cli import UsageError

    pattern_type = _pattern_type(args)
    out: list[Filter] = []

    def add(kind: ResourceType, names: Iterable[str] | None, trim: bool = True) -> None:
        for name in names or ():
            item = (kind, name.strip() if trim else name, pattern_type)
            if item not in out:
                out.append(item)

    add(ResourceType.TOPIC, args.topic)
    if pattern_type is PatternType.LITERAL and (args.cluster or args.idempotent):
        add(ResourceType.CLUSTER, [CLUSTER_NAME])
    add(ResourceType.GROUP, args.group)
    add(ResourceType.TRANSACTIONAL_ID, args.transactional_id, trim=False)
    add(ResourceType.DELEGATION_TOKEN, args.delegation_token)
    add(ResourceType.USER, args.user_principal)
    if not out and die_if_none:
        raise UsageError(
            PROG,
            "You must provide at least one resource: --topic <topic> or --cluster or "
            "--group <group> or --delegation-token <Delegation Token ID>",
        )
    return out


def _principals(values: list[str] | None) -> list[str]:
    out = []
    for value in values or ():
        text = value.strip()
        kind, sep, name = text.partition(":")
        if not sep:
            raise _Failed(f"expected a string in format principalType:principalName but got {text}")
        out.append(f"{kind}:{name}")
    return out


def _entries(
    args: argparse.Namespace, operations: Iterable[AclOperation]
) -> set[AccessControlEntry]:
    """``AclCommand.getAcl``: every principal x operation x host, ALLOW then DENY."""
    out: set[AccessControlEntry] = set()
    for principals_opt, hosts_opt, permission in (
        (args.allow_principal, args.allow_host, AclPermissionType.ALLOW),
        (args.deny_principal, args.deny_host, AclPermissionType.DENY),
    ):
        principals = _principals(principals_opt)
        hosts = {"*"} if principals_opt else set()
        if hosts_opt:
            hosts = {h.strip() for h in hosts_opt}
        for principal in principals:
            for operation in operations:
                for host in hosts:
                    out.add(AccessControlEntry(principal, host, operation, permission))
    return out


def _operations(args: argparse.Namespace) -> set[AclOperation]:
    out: set[AclOperation] = set()
    for text in args.operation or ["All"]:
        try:
            operation = AclOperation.parse(text.strip())
        except InvalidAclError:
            operation = AclOperation.UNKNOWN
        if operation in (AclOperation.UNKNOWN, AclOperation.ANY):
            raise _Failed(f"Invalid operation: {text.strip()}")
        out.add(operation)
    return out


def _filters_to_entries(args: argparse.Namespace) -> dict[Filter, set[AccessControlEntry]]:
    """``AclCommand.getResourceFilterToAcls``."""
    out: dict[Filter, set[AccessControlEntry]] = {}
    if not args.producer and not args.consumer:
        entries = _entries(args, _operations(args))
        for f in _resource_filters(args):
            out[f] = set(entries)
    if args.producer:
        filters = _resource_filters(args)
        topic_entries = _entries(
            args, {AclOperation.WRITE, AclOperation.DESCRIBE, AclOperation.CREATE}
        )
        txn_entries = _entries(args, {AclOperation.WRITE, AclOperation.DESCRIBE})
        for f in filters:
            if f[0] is ResourceType.TOPIC:
                out[f] = set(topic_entries)
            elif f[0] is ResourceType.TRANSACTIONAL_ID:
                out[f] = set(txn_entries)
        if args.idempotent:
            cluster = (ResourceType.CLUSTER, CLUSTER_NAME, PatternType.LITERAL)
            out[cluster] = _entries(args, {AclOperation.IDEMPOTENT_WRITE})
    if args.consumer:
        filters = _resource_filters(args)
        for f in filters:
            if f[0] is ResourceType.TOPIC:
                wanted = _entries(args, {AclOperation.READ, AclOperation.DESCRIBE})
            elif f[0] is ResourceType.GROUP:
                wanted = _entries(args, {AclOperation.READ})
            else:
                continue
            out[f] = out.get(f, set()) | wanted
    _validate_operations(out)
    return out


def _validate_operations(resource_to_entries: dict[Filter, set[AccessControlEntry]]) -> None:
    from kafkacore.cli import UsageError

    for (kind, _, _), entries in resource_to_entries.items():
        valid = SUPPORTED_OPERATIONS.get(kind, frozenset()) | {AclOperation.ALL}
        if any(e.operation not in valid for e in entries):
            names = ", ".join(op.name for op in sorted(valid))
            raise UsageError(PROG, f"ResourceType {kind.name} only supports operations {names}")


# -- confluent-kafka ------------------------------------------------------------------------


def _client_config(args: argparse.Namespace) -> dict[str, Any]:
    from kafkacore.cli import UsageError
    from kafkacore.cli._client import librdkafka_config
    from kafkacore.config import load_properties

    conf: dict[str, Any] = {}
    if args.command_config:
        try:
            conf.update(librdkafka_config(load_properties(args.command_config)))
        except OSError as exc:
            raise UsageError(PROG, f"cannot read {args.command_config}: {exc.strerror}") from None
        except ValueError as exc:
            raise UsageError(PROG, str(exc)) from None
    conf["bootstrap.servers"] = args.bootstrap_server
    conf.setdefault("log_level", 3)  # librdkafka's informational lines are not Kafka's output
    return conf


def _ck(name: str) -> Any:
    import importlib

    return importlib.import_module(name)


def _ck_resource_type(kind: ResourceType) -> Any:
    ck = _ck("confluent_kafka.admin")
    if kind is ResourceType.CLUSTER:
        return ck.ResourceType.BROKER  # librdkafka's name for Kafka's CLUSTER (4)
    try:
        return ck.ResourceType[kind.name]
    except KeyError:
        raise _Failed(
            f"confluent-kafka (librdkafka) has no {kind.name} resource type; "
            "use Kafka's kafka-acls for these ACLs"
        ) from None


def _ck_enum(enum_name: str, member: Any) -> Any:
    ck = _ck("confluent_kafka.admin")
    try:
        return getattr(ck, enum_name)[member.name]
    except KeyError:
        raise _Failed(f"confluent-kafka (librdkafka) has no {member.name} operation") from None


def _from_ck(binding: Any) -> tuple[ResourcePattern, AccessControlEntry]:
    kind = ResourceType(int(binding.restype.value))
    pattern = ResourcePattern(
        kind, binding.name, PatternType(int(binding.resource_pattern_type.value))
    )
    entry = AccessControlEntry(
        binding.principal,
        binding.host,
        AclOperation(int(binding.operation.value)),
        AclPermissionType(int(binding.permission_type.value)),
    )
    return pattern, entry


def _ck_filter(f: Filter, entry: AccessControlEntry | None) -> Any:
    ck = _ck("confluent_kafka.admin")
    kind, name, pattern_type = f
    if entry is None:
        principal = host = None
        operation, permission = ck.AclOperation.ANY, ck.AclPermissionType.ANY
    else:
        principal, host = entry.principal, entry.host
        operation = _ck_enum("AclOperation", entry.operation)
        permission = _ck_enum("AclPermissionType", entry.permission_type)
    return ck.AclBindingFilter(
        _ck_resource_type(kind),
        name,
        _ck_enum("ResourcePatternType", pattern_type),
        principal,
        host,
        operation,
        permission,
    )


def _any_filter() -> Any:
    ck = _ck("confluent_kafka.admin")
    return ck.AclBindingFilter(
        ck.ResourceType.ANY,
        None,
        ck.ResourcePatternType.ANY,
        None,
        None,
        ck.AclOperation.ANY,
        ck.AclPermissionType.ANY,
    )


def _result(future: Any) -> Any:
    try:
        return future.result()
    except Exception as exc:  # KafkaException: its KafkaError's text
        err = exc.args[0] if exc.args else exc
        text = err.str() if hasattr(err, "str") else str(err)
        raise _Failed(text) from None


def _describe(admin: Any, flt: Any) -> list[tuple[ResourcePattern, AccessControlEntry]]:
    return [_from_ck(b) for b in _result(admin.describe_acls(flt, request_timeout=30))]


# -- the actions ----------------------------------------------------------------------------


def _add(admin: Any, args: argparse.Namespace) -> None:
    pattern_type = _pattern_type(args)
    if not pattern_type.is_specific:
        from kafkacore.cli import UsageError

        raise UsageError(
            PROG,
            f"A '--resource-pattern-type' value of '{pattern_type.name}' is not valid when "
            "adding acls.",
        )
    resource_to_entries = _filters_to_entries(args)
    if any(not entries for entries in resource_to_entries.values()):
        from kafkacore.cli import UsageError

        raise UsageError(
            PROG,
            "You must specify one of: --allow-principal, --deny-principal when trying to add ACLs.",
        )
    ck = _ck("confluent_kafka.admin")
    for f, entries in sorted(resource_to_entries.items()):
        pattern = ResourcePattern(*f)
        existing = {e for p, e in _describe(admin, _ck_filter(f, None)) if p == pattern}
        new = []
        for entry in sorted(entries):
            if entry in existing:
                print(f"Acl {_binding_text(pattern, entry)} already exists.")
            else:
                new.append(entry)
        if not new:
            continue
        shown = NL.join("\t" + format_entry(e) for e in new)
        print(f"Adding ACLs for resource `{format_pattern(*f)}`: {NL} {shown}{NL}")
        bindings = [
            ck.AclBinding(
                _ck_resource_type(pattern.resource_type),
                pattern.name,
                _ck_enum("ResourcePatternType", pattern.pattern_type),
                e.principal,
                e.host,
                _ck_enum("AclOperation", e.operation),
                _ck_enum("AclPermissionType", e.permission_type),
            )
            for e in new
        ]
        for future in admin.create_acls(bindings, request_timeout=30).values():
            _result(future)


def _confirm(args: argparse.Namespace, message: str) -> bool:
    if args.force:
        return True
    print(message, flush=True)
    return sys.stdin.readline().strip().lower() == "y"


def _remove(admin: Any, args: argparse.Namespace) -> None:
    for f, entries in sorted(_filters_to_entries(args).items()):
        shown_filter = format_pattern(*f)
        if not entries:
            message = (
                f"Are you sure you want to delete all ACLs for resource filter `{shown_filter}`? "
                "(y/n)"
            )
            filters = [_ck_filter(f, None)]
        else:
            shown = NL.join("\t" + format_entry(e) for e in sorted(entries))
            message = (
                f"Are you sure you want to remove ACLs: {NL} {shown}{NL} from resource filter "
                f"`{shown_filter}`? (y/n)"
            )
            filters = [_ck_filter(f, e) for e in sorted(entries)]
        if _confirm(args, message):
            for future in admin.delete_acls(filters, request_timeout=30).values():
                _result(future)


def _list(admin: Any, args: argparse.Namespace) -> None:
    filters = _resource_filters(args, die_if_none=False)
    found: list[tuple[ResourcePattern, AccessControlEntry]] = []
    if not filters:
        found = _describe(admin, _any_filter())
    for f in filters:
        found += _describe(admin, _ck_filter(f, None))
    if any(
        p.resource_type is ResourceType.UNKNOWN or e.operation is AclOperation.UNKNOWN
        for p, e in found
    ):
        sys.stderr.write(
            f"{PROG}: some ACLs have a resource type or an operation librdkafka does not "
            "know (USER, DELEGATION_TOKEN, CREATE_TOKENS, ...): they show as UNKNOWN; "
            "Kafka's kafka-acls shows them\n"
        )
    resource_to_entries: dict[ResourcePattern, set[AccessControlEntry]] = {}
    for pattern, entry in found:
        resource_to_entries.setdefault(pattern, set()).add(entry)
    if args.principal is None or all(p is None for p in args.principal):
        _print_resources(resource_to_entries)
        return
    for principal in _principals([p for p in args.principal if p is not None]):
        print(f"ACLs for principal `{principal}`")
        narrowed = {
            p: {e for e in entries if e.principal == principal}
            for p, entries in resource_to_entries.items()
        }
        _print_resources({p: e for p, e in narrowed.items() if e})


def _print_resources(resource_to_entries: dict[ResourcePattern, set[AccessControlEntry]]) -> None:
    for pattern, entries in sorted(resource_to_entries.items()):
        shown = NL.join("\t" + format_entry(e) for e in sorted(entries))
        head = format_pattern(pattern.resource_type, pattern.name, pattern.pattern_type)
        print(f"Current ACLs for resource `{head}`:{NL}{shown}{NL}")


def run(args: argparse.Namespace) -> int:
    _check_args(args)
    try:
        conf = _client_config(args)
        admin = _ck("confluent_kafka.admin").AdminClient(conf)
        if args.add:
            _add(admin, args)
        elif args.remove:
            _remove(admin, args)
        else:
            _list(admin, args)
    except _Failed as exc:
        print(f"Error while executing ACL command: {exc}")
        return 1
    return 0
