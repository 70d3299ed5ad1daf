"""Formatting a KRaft node's directories (Kafka 4.3's ``Formatter``,
``BootstrapDirectory``, ``BootstrapMetadata`` and ``kafka-storage info``).

``kafka-storage format`` writes, in each of ``log.dirs`` and ``metadata.log.dir``:

* ``meta.properties`` v1 (``cluster.id``, ``node.id``, a random ``directory.id`` - for
  the metadata directory of a voter listed by ``--initial-controllers``, the one given);
* ``bootstrap.checkpoint``: the FeatureLevelRecords the first active controller writes
  into an empty log (``metadata.version`` from ``--release-version``, every other
  feature at its default for that version unless ``--feature`` sets it; features at
  level 0 are left out), plus UserScramCredentialRecords (``--add-scram``), framed as a
  snapshot;
* for a dynamic quorum (``--standalone`` or ``--initial-controllers``, kraft.version 1),
  the metadata directory of a controller also gets the bootstrap snapshot
  ``__cluster_metadata-0/00000000000000000000-0000000000.checkpoint`` holding the
  initial VotersRecord.

Refusals use Kafka's messages (:class:`FormatterError`); a directory already formatted
is an error unless ``--ignore-formatted``.

Pure functions over files; not thread-safe for one directory.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kafkacore._java import java_hash_set_order, java_string_hash
from kafkacore.config import BrokerConfig
from kafkacore.log.checkpoints import (
    MetaProperties,
    random_uuid,
    uuid_from_base64,
    write_atomically,
)
from kafkacore.metadata.image.features import feature_level_record
from kafkacore.metadata.records import (
    MetadataRecord,
    MetadataRecordType,
    decode_record,
    encode_record,
)
from kafkacore.metadata.versions import (
    FEATURES,
    KRAFT_VERSION,
    LATEST_PRODUCTION,
    METADATA_VERSION,
    FeatureVersionError,
    MetadataVersion,
    metadata_version,
    metadata_version_from_string,
    validate_dependencies,
)
from kafkacore.raft.metadata_log import METADATA_LOG_DIR_NAME
from kafkacore.raft.snapshots import build_snapshot, read_snapshot, snapshot_file_name
from kafkacore.raft.types import Endpoints, OffsetAndEpoch, ReplicaKey
from kafkacore.raft.voters import VoterNode, VoterSet

__all__ = [
    "BOOTSTRAP_FILE",
    "BootstrapMetadata",
    "FormatterError",
    "InitialController",
    "StorageError",
    "format_storage",
    "parse_initial_controllers",
    "read_formatted_directories",
    "storage_info",
]

BOOTSTRAP_FILE = "bootstrap.checkpoint"
_SUPPORTED_KRAFT_VERSIONS = (0, 1)


class FormatterError(Exception):
    """Kafka's ``FormatterException``: the format is refused (the message is Kafka's)."""


class StorageError(Exception):
    """A node cannot start on its directories (Kafka's ``KafkaRaftServer`` and
    ``MetaPropertiesEnsemble`` messages)."""


def read_formatted_directories(config: BrokerConfig, metadata_dir: str) -> tuple[str, uuid.UUID]:
    """``(cluster id, metadata directory id)`` of a formatted KRaft node (Kafka's
    ``KafkaRaftServer.initializeLogDirs``): every directory must have a
    ``meta.properties`` agreeing on the cluster and node ids with the config."""
    directories = list(dict.fromkeys([*config.log_dirs, metadata_dir]))
    cluster_id: str | None = None
    seen: dict[uuid.UUID, str] = {}
    metadata_id: uuid.UUID | None = None
    for directory in directories:
        path = MetaProperties.path_in(directory)
        try:
            props = MetaProperties.read(path)
        except FileNotFoundError:
            raise StorageError(
                f"No `meta.properties` found in {directory} (have you run `kafka-storage.sh` "
                "to format the directory?)"
            ) from None
        if props.version != 1 or props.cluster_id is None:
            raise StorageError(f"Error: cluster ID not found in {directory}")
        if props.node_id is None:
            raise StorageError(f"Error: node ID not found in {directory}")
        if cluster_id is None:
            cluster_id = props.cluster_id
        elif props.cluster_id != cluster_id:
            raise StorageError(
                f"Invalid cluster.id in: {path}. Expected {cluster_id}, but read {props.cluster_id}"
            )
        if props.node_id != config.node_id:
            raise StorageError(
                f"Stored node id {props.node_id} doesn't match previous node id "
                f"{config.node_id} in {path}. If you moved your data, make sure your "
                "configured node id matches. If you intend to create a new node, you should "
                "remove all data in your data directories."
            )
        if props.directory_id is not None:
            if props.directory_id in seen:
                raise StorageError(
                    f"Duplicate directory ID {props.directory_id} found. It was the ID of "
                    f"{seen[props.directory_id]}, but also of {directory}"
                )
            seen[props.directory_id] = directory
        if directory == metadata_dir:
            metadata_id = props.directory_id
    assert cluster_id is not None
    if metadata_id is None:
        metadata_id = random_uuid()  # a v1 file without directory.id (written before 3.7)
    return cluster_id, metadata_id


@dataclass(frozen=True)
class BootstrapMetadata:
    """The records an empty metadata log starts with (Kafka's ``BootstrapMetadata``)."""

    records: tuple[MetadataRecord, ...]
    source: str

    @property
    def metadata_version(self) -> MetadataVersion:
        for record in self.records:
            if record.type == MetadataRecordType.FEATURE_LEVEL_RECORD and (
                record.value.name == METADATA_VERSION
            ):
                return metadata_version(record.value.feature_level)
        raise FormatterError(
            "No FeatureLevelRecord for metadata.version was found in the bootstrap metadata "
            f"from {self.source}"
        )

    def describe(self) -> str:
        """Kafka's ``BootstrapMetadata.toString`` (what ``kafka-storage format`` prints)."""
        records = ", ".join(
            f"ApiMessageAndVersion({_java_record_text(r)} at version {r.version})"
            for r in self.records
        )
        return (
            f"BootstrapMetadata(records=[{records}], metadataVersionLevel="
            f"{self.metadata_version.level}, source={self.source})"
        )

    @classmethod
    def default(cls) -> BootstrapMetadata:
        """``BootstrapDirectory.read`` without a file: the latest production features."""
        levels = {METADATA_VERSION: LATEST_PRODUCTION.level}
        for name, feature in FEATURES.items():
            if name != KRAFT_VERSION:
                levels[name] = feature.default_level(LATEST_PRODUCTION)
        return cls(_feature_records(levels), "the default bootstrap")

    @classmethod
    def read(cls, directory: str | os.PathLike[str]) -> BootstrapMetadata:
        """``BootstrapDirectory.read``: ``bootstrap.checkpoint`` in ``directory``, else the
        default."""
        path = Path(directory) / BOOTSTRAP_FILE
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return cls.default()
        snapshot = read_snapshot(data)
        records = tuple(decode_record(v) for v in snapshot.values)
        return cls(records, f"the binary bootstrap metadata file: {path}")

    def write(self, directory: str | os.PathLike[str], now_ms: int) -> None:
        """``BootstrapDirectory.writeBinaryFile``: the records as a snapshot file."""
        data = build_snapshot(
            OffsetAndEpoch(0, 0),
            [encode_record(r) for r in self.records],
            timestamp_ms=now_ms,
            last_contained_log_timestamp=0,
        )
        write_atomically(str(Path(directory) / BOOTSTRAP_FILE), data)


def _java_record_text(record: MetadataRecord) -> str:
    """A record as its generated Java class prints itself (FeatureLevelRecords exactly;
    others by name)."""
    value = record.value
    if record.type == MetadataRecordType.FEATURE_LEVEL_RECORD:
        return f"FeatureLevelRecord(name='{value.name}', featureLevel={value.feature_level})"
    return type(value).__name__


def _feature_records(levels: Mapping[str, int]) -> tuple[MetadataRecord, ...]:
    """metadata.version first, then the other features at a non-zero level, by name."""
    records = [feature_level_record(METADATA_VERSION, levels[METADATA_VERSION])]
    for name in sorted(levels):
        if name not in (METADATA_VERSION, KRAFT_VERSION) and levels[name] > 0:
            records.append(feature_level_record(name, levels[name]))
    return tuple(records)


@dataclass(frozen=True)
class InitialController:
    """One entry of ``--initial-controllers``: ``id@host:port:directoryId``."""

    node_id: int
    host: str
    port: int
    directory_id: uuid.UUID


def parse_initial_controllers(text: str) -> list[InitialController]:
    """``--initial-controllers`` (Kafka's ``DynamicVoters.parse``)."""
    out = []
    for entry in (e.strip() for e in text.split(",") if e.strip()):
        ident, at, rest = entry.partition("@")
        host_port, colon, directory = rest.rpartition(":")
        host, colon2, port = host_port.rpartition(":")
        try:
            node_id = int(ident)
            port_number = int(port)
            directory_id = uuid_from_base64(directory)
        except ValueError:
            raise FormatterError(f"Unable to parse dynamic voter: {entry}") from None
        if not at or not colon or not colon2 or not host:
            raise FormatterError(f"Unable to parse dynamic voter: {entry}")
        out.append(InitialController(node_id, host.strip("[]"), port_number, directory_id))
    return out


@dataclass
class FormatOptions:
    """``kafka-storage format``'s options."""

    cluster_id: str
    release_version: str | None = None
    features: dict[str, int] = field(default_factory=dict)
    scram_records: Sequence[MetadataRecord] = ()
    ignore_formatted: bool = False
    standalone: bool = False
    initial_controllers: str | None = None
    no_initial_controllers: bool = False
    unstable_feature_versions: bool = False


def _bootstrap(config: BrokerConfig, options: FormatOptions, dynamic: bool) -> BootstrapMetadata:
    if METADATA_VERSION in options.features and options.release_version is not None:
        raise FormatterError(
            "Use --release-version instead of --feature metadata.version=X to avoid ambiguity."
        )
    text = options.release_version
    unstable = options.unstable_feature_versions or bool(
        config.get("unstable.feature.versions.enable")
    )
    try:
        if METADATA_VERSION in options.features:
            mv = metadata_version(options.features[METADATA_VERSION])
        elif text is None:
            mv = LATEST_PRODUCTION
        else:
            mv = metadata_version_from_string(text, unstable=unstable)
    except FeatureVersionError as exc:
        raise FormatterError(str(exc)) from None
    if not mv.production and not unstable:
        raise FormatterError(f"metadata.version {mv} is not yet stable.")
    levels: dict[str, int] = {METADATA_VERSION: mv.level}
    for name, feature in FEATURES.items():
        levels[name] = feature.default_level(mv)
    for name, level in options.features.items():
        if name == METADATA_VERSION:
            continue
        if name not in FEATURES:
            supported = ", ".join(sorted(FEATURES))
            raise FormatterError(
                f"Unsupported feature: {name}. Supported features are: {supported}"
            )
        levels[name] = level
    kraft = options.features.get(KRAFT_VERSION)
    if kraft is not None:
        if kraft >= 1 and not dynamic:
            raise FormatterError(
                f"Cannot set kraft.version to {kraft} unless controller.quorum.voters is empty "
                "and one of the flags --standalone, --initial-controllers, or "
                "--no-initial-controllers is used. For dynamic controllers support, try using "
                "one of --standalone, --initial-controllers, or --no-initial-controllers and "
                "removing controller.quorum.voters."
            )
        if kraft == 0 and dynamic:
            raise FormatterError(
                "Cannot set kraft.version to 0 if controller.quorum.voters is empty and one of "
                "the flags --standalone, --initial-controllers, or --no-initial-controllers is "
                "used. For dynamic controllers support, try removing the --feature flag for "
                "kraft.version."
            )
    for name in options.features:
        if name in (METADATA_VERSION, KRAFT_VERSION):
            continue
        feature = FEATURES[name]
        try:
            validate_dependencies(name, feature.level(levels[name]), levels)
        except FeatureVersionError as exc:
            raise FormatterError(str(exc)) from None
    if options.scram_records and not mv.is_scram_supported:
        raise FormatterError(
            f"SCRAM is only supported in metadata.version {metadata_version(11)} or later."
        )
    records = _feature_records(levels) + tuple(options.scram_records)
    return BootstrapMetadata(records, "format command")


def format_storage(
    config: BrokerConfig, options: FormatOptions, *, now_ms: int | None = None
) -> list[str]:
    """Format the node's directories (Kafka's ``Formatter.run``); the lines it prints.
    :class:`FormatterError` when refused."""
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    node_id = config.node_id
    if node_id < 0:
        raise FormatterError("You must specify a valid non-negative node ID.")
    if not options.cluster_id:
        raise FormatterError("You must specify the cluster id.")
    roles = config.process_roles or []
    static_voters = [v for v in config.controller_quorum_voters if v]
    wants_dynamic = options.standalone or options.initial_controllers is not None
    if static_voters and (wants_dynamic or options.no_initial_controllers):
        raise FormatterError(
            "You cannot specify controller.quorum.voters and format the node with "
            "--initial-controllers or --standalone. If you want to use dynamic quorum, please "
            "remove controller.quorum.voters and specify controller.quorum.bootstrap.servers "
            "instead."
        )
    dynamic = wants_dynamic or options.no_initial_controllers
    bootstrap = _bootstrap(config, options, dynamic)
    metadata_dir = config.metadata_log_dir or config.log_dirs[0]
    directories = list(dict.fromkeys([*config.log_dirs, metadata_dir]))
    if not directories:
        raise FormatterError("You must specify at least one directory to format")
    initial = _initial_voters(config, options) if "controller" in roles and wants_dynamic else None
    lines = [f"Bootstrap metadata: {bootstrap.describe()}"]
    todo = []
    for directory in directories:
        if os.path.exists(MetaProperties.path_in(directory)):
            if not options.ignore_formatted:
                raise FormatterError(
                    f"Log directory {directory} is already formatted. Use --ignore-formatted to "
                    "ignore this directory and format the others."
                )
            continue
        todo.append(directory)
    if not todo:
        if options.ignore_formatted:
            lines.append("All of the log directories are already formatted.")
            return lines
        raise FormatterError("No available log directories to format.")
    mv = bootstrap.metadata_version
    for directory in java_hash_set_order(todo, java_string_hash):
        os.makedirs(directory, exist_ok=True)
        directory_id = random_uuid()
        is_metadata = directory == metadata_dir
        if is_metadata and initial is not None:
            own = initial.voters.get(node_id)
            if own is not None and own.key.directory_id is not None:
                directory_id = own.key.directory_id
        MetaProperties(
            version=1, cluster_id=options.cluster_id, node_id=node_id, directory_id=directory_id
        ).write(MetaProperties.path_in(directory))
        bootstrap.write(directory, now_ms)
        if is_metadata and initial is not None:
            what = "dynamic metadata voter directory"
            snapshot_dir = Path(directory) / METADATA_LOG_DIR_NAME
            snapshot_dir.mkdir(parents=True, exist_ok=True)
            data = build_snapshot(
                OffsetAndEpoch(0, 0),
                [],
                timestamp_ms=now_ms,
                last_contained_log_timestamp=now_ms,
                kraft_version=1,
                voters=initial,
            )
            write_atomically(str(snapshot_dir / snapshot_file_name(OffsetAndEpoch(0, 0))), data)
        elif is_metadata:
            what = "metadata directory"
        else:
            what = "data directory"
        lines.append(f"Formatting {what} {directory} with metadata.version {mv}.")
    return lines


def _initial_voters(config: BrokerConfig, options: FormatOptions) -> VoterSet:
    listener = (config.controller_listener_names or ["CONTROLLER"])[0]
    if options.standalone:
        endpoint = next(
            (e for e in config.listener_endpoints() if e.listener_name == listener), None
        )
        if endpoint is None:
            raise FormatterError("You must specify the name of the initial controller listener.")
        host = endpoint.host or "localhost"
        nodes = [InitialController(config.node_id, host, endpoint.port, random_uuid())]
    else:
        nodes = parse_initial_controllers(options.initial_controllers or "")
    low, high = _SUPPORTED_KRAFT_VERSIONS
    return VoterSet(
        {
            n.node_id: VoterNode(
                ReplicaKey(n.node_id, n.directory_id),
                Endpoints.single(listener, n.host, n.port),
                low,
                high,
            )
            for n in nodes
        }
    )


def storage_info(config: BrokerConfig) -> tuple[int, list[str]]:
    """``kafka-storage info``: ``(exit status, lines)``."""
    metadata_dir = config.metadata_log_dir or config.log_dirs[0]
    directories = list(dict.fromkeys([*config.log_dirs, metadata_dir]))
    lines = ["Found log directories:" if len(directories) > 1 else "Found log directory:"]
    lines += [f"  {d}" for d in directories]
    lines.append("")
    problems: list[str] = []
    found: dict[str, str] = {}
    for directory in directories:
        path = MetaProperties.path_in(directory)
        if not os.path.isdir(directory):
            problems.append(f"{directory} does not exist")
            continue
        try:
            props = MetaProperties.read(path)
        except FileNotFoundError:
            problems.append(f"{directory} is not formatted.")
            continue
        except Exception as exc:
            problems.append(f"Error loading {path}: {exc}")
            continue
        found = dict(sorted(props.to_properties().items()))
    if found:
        text = ", ".join(f"{k}={v}" for k, v in found.items())
        lines.append(f"Found metadata: {{{text}}}")
        lines.append("")
    if problems:
        lines.append(f"Found problem{'s' if len(problems) > 1 else ''}:")
        lines += [f"  {p}" for p in problems]
        lines.append("")
    return (1 if problems else 0), lines
