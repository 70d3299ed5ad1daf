"""``kafkacore storage`` (Kafka's ``kafka-storage``): what ``format`` writes
(meta.properties v1, bootstrap.checkpoint, the 0-0 voters snapshot of a dynamic quorum),
its refusals in Kafka's words, ``info``, and a node refusing an unformatted directory.
``tests/interop/test_kraft_storage_vs_kafka.py`` checks the same against Kafka's tool and
starts each side on the other's directories."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkacore.cli import main
from kafkacore.config import BrokerConfig
from kafkacore.log.checkpoints import MetaProperties
from kafkacore.metadata.storage import (
    BootstrapMetadata,
    FormatOptions,
    FormatterError,
    StorageError,
    format_storage,
    read_formatted_directories,
)
from kafkacore.raft.snapshots import read_snapshot
from kafkacore.server.assembly import kraft_controller

CLUSTER = "MkU3OEVBNTcwNTJENDM2Qk"


def _config(tmp_path: Path, **extra: str) -> BrokerConfig:
    props = {
        "process.roles": "controller",
        "node.id": "1",
        "listeners": "CONTROLLER://127.0.0.1:19093",
        "controller.listener.names": "CONTROLLER",
        "controller.quorum.bootstrap.servers": "127.0.0.1:19093",
        "log.dirs": f"{tmp_path}/a,{tmp_path}/b",
        "metadata.log.dir": f"{tmp_path}/m",
    }
    props.update(extra)
    return BrokerConfig({k: v for k, v in props.items() if v})


def test_format_writes_what_kafka_storage_writes(tmp_path: Path) -> None:
    config = _config(tmp_path)
    lines = format_storage(config, FormatOptions(cluster_id=CLUSTER, standalone=True))
    assert lines[0].startswith(
        "Bootstrap metadata: BootstrapMetadata(records=[ApiMessageAndVersion("
        "FeatureLevelRecord(name='metadata.version', featureLevel=30) at version 0)"
    )
    assert sorted(lines[1:]) == sorted(
        [
            f"Formatting data directory {tmp_path}/a with metadata.version 4.3-IV0.",
            f"Formatting data directory {tmp_path}/b with metadata.version 4.3-IV0.",
            f"Formatting dynamic metadata voter directory {tmp_path}/m with metadata.version "
            "4.3-IV0.",
        ]
    )
    ids = set()
    for name in ("a", "b", "m"):
        props = MetaProperties.read(MetaProperties.path_in(str(tmp_path / name)))
        assert (props.version, props.cluster_id, props.node_id) == (1, CLUSTER, 1)
        ids.add(props.directory_id)
        bootstrap = BootstrapMetadata.read(tmp_path / name)
        levels = {r.value.name: r.value.feature_level for r in bootstrap.records}
        assert levels == {
            "metadata.version": 30,
            "eligible.leader.replicas.version": 1,
            "group.version": 1,
            "share.version": 1,
            "streams.version": 1,
            "transaction.version": 2,
        }
    assert len(ids) == 3
    snapshot_file = (
        tmp_path / "m" / "__cluster_metadata-0" / "00000000000000000000-0000000000.checkpoint"
    )
    snapshot = read_snapshot(snapshot_file.read_bytes())
    assert snapshot.kraft_version == 1 and snapshot.voters is not None
    (voter,) = snapshot.voters.voters.values()
    metadata_id = MetaProperties.read(MetaProperties.path_in(str(tmp_path / "m"))).directory_id
    assert (voter.key.id, voter.key.directory_id) == (1, metadata_id)
    assert read_formatted_directories(config, str(tmp_path / "m")) == (CLUSTER, metadata_id)


def test_release_version_and_features(tmp_path: Path) -> None:
    config = _config(
        tmp_path,
        **{
            "controller.quorum.bootstrap.servers": "",
            "controller.quorum.voters": "1@127.0.0.1:19093",
        },
    )
    format_storage(
        config,
        FormatOptions(cluster_id=CLUSTER, release_version="3.9", features={"group.version": 1}),
    )
    records = BootstrapMetadata.read(tmp_path / "m").records
    assert [(r.value.name, r.value.feature_level) for r in records] == [
        ("metadata.version", 21),
        ("group.version", 1),
    ]
    assert not (tmp_path / "m" / "__cluster_metadata-0").exists()  # static voters


@pytest.mark.parametrize(
    ("extra", "options", "message"),
    [
        (
            {
                "controller.quorum.bootstrap.servers": "",
                "controller.quorum.voters": "1@127.0.0.1:19093",
            },
            {"standalone": True},
            "You cannot specify controller.quorum.voters and format the node with "
            "--initial-controllers or --standalone. If you want to use dynamic quorum, please "
            "remove controller.quorum.voters and specify controller.quorum.bootstrap.servers "
            "instead.",
        ),
        (
            {
                "controller.quorum.bootstrap.servers": "",
                "controller.quorum.voters": "1@127.0.0.1:19093",
            },
            {"features": {"kraft.version": 1}},
            "Cannot set kraft.version to 1 unless controller.quorum.voters is empty and one of the "
            "flags --standalone, --initial-controllers, or --no-initial-controllers is used. For "
            "dynamic controllers support, try using one of --standalone, --initial-controllers, or "
            "--no-initial-controllers and removing controller.quorum.voters.",
        ),
        (
            {},
            {"features": {"foo.version": 1}},
            "Unsupported feature: foo.version. Supported features are: "
            "eligible.leader.replicas.version, group.version, kraft.version, share.version, "
            "streams.version, transaction.version",
        ),
        (
            {},
            {"release_version": "3.9", "features": {"eligible.leader.replicas.version": 1}},
            "eligible.leader.replicas.version could not be set to 1 because it depends on "
            "metadata.version level 23",
        ),
        (
            {},
            {"release_version": "4.4"},
            "Unknown metadata.version '4.4'. Supported metadata.version are: 3.3-IV3, 3.4-IV0, "
            "3.5-IV0, 3.5-IV1, 3.5-IV2, 3.6-IV0, 3.6-IV1, 3.6-IV2, 3.7-IV0, 3.7-IV1, 3.7-IV2, "
            "3.7-IV3, 3.7-IV4, 3.8-IV0, 3.9-IV0, 4.0-IV0, 4.0-IV1, 4.0-IV2, 4.0-IV3, 4.1-IV0, "
            "4.1-IV1, 4.2-IV0, 4.2-IV1, 4.3-IV0",
        ),
    ],
)
def test_refusals_are_kafkas(
    tmp_path: Path, extra: dict[str, str], options: dict, message: str
) -> None:
    with pytest.raises(FormatterError) as info:
        format_storage(_config(tmp_path, **extra), FormatOptions(cluster_id=CLUSTER, **options))
    assert str(info.value) == message
    assert not (tmp_path / "m" / "meta.properties").exists()


def test_formatted_directories_are_kept_unless_ignored(tmp_path: Path) -> None:
    config = _config(tmp_path)
    format_storage(config, FormatOptions(cluster_id=CLUSTER, standalone=True))
    with pytest.raises(FormatterError, match=r"is already formatted. Use --ignore-formatted"):
        format_storage(config, FormatOptions(cluster_id=CLUSTER, standalone=True))
    again = format_storage(
        config, FormatOptions(cluster_id="other", standalone=True, ignore_formatted=True)
    )
    assert again[-1] == "All of the log directories are already formatted."
    assert MetaProperties.read(MetaProperties.path_in(str(tmp_path / "a"))).cluster_id == CLUSTER


def test_a_node_refuses_an_unformatted_directory(tmp_path: Path) -> None:
    with pytest.raises(StorageError) as info:
        kraft_controller(_config(tmp_path))
    assert str(info.value).startswith("No `meta.properties` found in ")
    assert str(info.value).endswith("(have you run `kafka-storage.sh` to format the directory?)")


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    properties = tmp_path / "server.properties"
    properties.write_text(
        "process.roles=controller\nnode.id=1\nlisteners=CONTROLLER://127.0.0.1:19093\n"
        "controller.listener.names=CONTROLLER\ncontroller.quorum.bootstrap.servers=127.0.0.1:19093\n"
        f"log.dirs={tmp_path}/d\n"
    )
    assert main(["storage", "random-uuid"]) == 0
    cluster = capsys.readouterr().out.strip()
    assert len(cluster) == 22
    assert main(["storage", "format", "-t", cluster, "-c", str(properties), "--standalone"]) == 0
    assert "Formatting dynamic metadata voter directory" in capsys.readouterr().out
    assert main(["storage", "info", "-c", str(properties)]) == 0
    out = capsys.readouterr().out
    assert f"Found log directory:\n  {tmp_path}/d\n" in out and f"cluster.id={cluster}" in out
    assert main(["storage", "format", "-t", cluster, "-c", str(properties)]) == 1
    assert "already formatted" in capsys.readouterr().err
    assert main(["storage", "version-mapping", "--release-version", "4.3"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "metadata.version=30 (4.3)",
        "kraft.version=1",
        "transaction.version=2",
        "group.version=1",
        "eligible.leader.replicas.version=1",
        "share.version=1",
        "streams.version=1",
    ]
