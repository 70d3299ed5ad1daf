"""The typed stubs of the message classes (``protocol/messages/*.pyi``, ``api_table.pyi``)
stay what :mod:`kafkacore.protocol.stubgen` generates from the declarations, agree with the
runtime classes (``mypy.stubtest``, as for ``_native``), and type what they promise."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest
from mypy import api as mypy_api

import kafkacore.protocol
from kafkacore.protocol import messages, stubgen
from kafkacore.protocol.schema import field, message

PROTOCOL_DIR = Path(kafkacore.protocol.__file__).parent


def test_committed_stubs_are_the_generated_ones(tmp_path: Path) -> None:
    written = stubgen.write(tmp_path)
    assert len(written) == len(stubgen.message_modules()) + 1
    stale = []
    for path in written:
        rel = path.relative_to(tmp_path)
        committed = PROTOCOL_DIR / rel
        if not committed.exists() or committed.read_text() != path.read_text():
            stale.append(str(rel))
    assert not stale, (
        f"stale stubs {stale}: run `python -m kafkacore.protocol.stubgen`\n"
        + "".join(stubgen.stale(PROTOCOL_DIR))
    )
    generated = {p.relative_to(tmp_path) for p in written}
    committed_stubs = {p.relative_to(PROTOCOL_DIR) for p in PROTOCOL_DIR.rglob("*.pyi")}
    assert committed_stubs == generated, "a stub without a declaration module"


def test_every_module_of_the_package_has_its_stub() -> None:
    """Every file of protocol/messages/ - an API served or only declared, the Raft APIs,
    the KRaft control records - is a declaration module with a stub beside it."""
    directory = PROTOCOL_DIR / "messages"
    modules = {p.stem for p in directory.glob("*.py")} - {"__init__"}
    assert {"vote", "fetch_snapshot", "share_fetch", "raft_records"} <= modules
    assert {m.__name__.rsplit(".", 1)[1] for m in stubgen.message_modules()} == modules
    assert {p.stem for p in directory.glob("*.pyi")} == modules


def test_check_mode_reports_a_stale_stub(tmp_path: Path) -> None:
    stubgen.write(tmp_path)
    assert stubgen.main(["--check", "--out", str(tmp_path)]) == 0
    stub = tmp_path / "messages" / "produce.pyi"
    stub.write_text(stub.read_text().replace("    acks: int\n", "    acks: str\n"))
    assert stubgen.main(["--check", "--out", str(tmp_path)]) == 1


def test_stubs_agree_with_the_runtime_classes() -> None:
    modules = [m.__name__ for m in stubgen.message_modules()]
    result = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", *modules],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_struct_has_a_class_in_the_stub() -> None:
    """Each nested struct of every declaration is reachable at runtime as the stub names
    it (``ProduceRequest.TopicProduceData``), and its fields are the declaration's."""
    for module in stubgen.message_modules():
        text = (
            PROTOCOL_DIR / "messages" / (module.__name__.rsplit(".", 1)[1] + ".pyi")
        ).read_text()
        for name, schema in stubgen.declarations(module):
            top = getattr(module, schema.name)
            assert top is schema.cls
            assert f"{name}: MessageSchema[{schema.name}]" in text
            assert f"class {schema.name}(KafkaStruct):" in text
            for sub in stubgen.nested_structs(schema.struct):
                assert getattr(top, sub.name) is sub.cls
                assert f"    class {sub.name}(KafkaStruct):" in text
                for f in sub.fields:
                    assert f" {f.attr}: " in text


def _declaring(name: str, *, alias: bool, exported: list[str]) -> ModuleType:
    module = ModuleType(f"{messages.__name__}.{name}")
    schema = message("ThingRequest", 9999, "request", "0", "none", [field("Id", "int32")])
    module.REQUEST = schema
    if alias:
        module.ThingRequest = schema.cls
    module.__all__ = exported
    return module


def test_a_module_the_stub_could_not_describe_is_refused() -> None:
    """A declaration without its class exported under the declared name, or an export
    of no declared type, fails the generation instead of giving a stub that lies."""
    fine = _declaring("thing", alias=True, exported=["REQUEST", "ThingRequest"])
    assert [n for n, _ in stubgen.declarations(fine)] == ["REQUEST"]
    with pytest.raises(TypeError, match=r"ThingRequest = REQUEST\.cls"):
        stubgen.declarations(_declaring("thing", alias=False, exported=["REQUEST"]))
    with pytest.raises(TypeError, match=r"ThingRequest = REQUEST\.cls"):
        stubgen.declarations(_declaring("thing", alias=True, exported=["REQUEST"]))
    untyped = _declaring("thing", alias=True, exported=["REQUEST", "ThingRequest", "EXTRA"])
    untyped.EXTRA = {1: 2}
    with pytest.raises(TypeError, match="annotate"):
        stubgen.declarations(untyped)


_TYPED = [
    ("APIS[ApiKey.PRODUCE].request.cls", "type[ProduceRequest]"),
    ("APIS[ApiKey.PRODUCE].response.decode(b'', 9)", "ProduceResponse"),
    ("APIS[ApiKey.PRODUCE].response.cls.TopicProduceResponse", "type[TopicResponse]"),
    ("APIS[1 + 0]", "Api[Any, Any]"),
    (
        "APIS[ApiKey.LEADER_AND_ISR].request.decode(b'', 7)"
        ".topic_states[0].partition_states[0].partition_epoch",
        "int",
    ),
    ("ProduceRequest().transactional_id", "str | None"),
    ("ProduceRequest.PartitionProduceData().records", "Records | None"),
    ("leader_and_isr_partition_states(LeaderAndIsrRequest())", "Iterator[LeaderAndIsrPartition]"),
    # declared, not served: the Raft APIs, the share groups, the Envelope's principal
    ("vote.REQUEST.decode(b'', 2).topics[0].partitions[0].replica_epoch", "int"),
    ("vote.VoteResponse().node_endpoints[0].port", "int"),
    ("share_fetch.REQUEST.cls", "type[share_fetch.ShareFetchRequest]"),
    ("envelope.PRINCIPAL.cls", "type[envelope.DefaultPrincipalData]"),
    # the KRaft control records
    ("raft_records.KRAFT_VOTERS.decode(b'', 0).voters[0].endpoints[0].host", "str"),
    ("raft_records.LeaderChangeMessage().granting_voters[0].voter_directory_id", "uuid.UUID"),
    (
        "raft_records.CONTROL_VALUES[raft_records.ControlRecordType.SNAPSHOT_HEADER]",
        "MessageSchema[Any]",
    ),
]


@pytest.fixture(scope="module")
def mypy_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache for this module's mypy runs: the second reuses the first's analysis."""
    return tmp_path_factory.mktemp("mypy-cache")


def _mypy(tmp_path: Path, cache: Path, source: str) -> tuple[int, str]:
    snippet = tmp_path / "snippet.py"
    snippet.write_text(source)
    stdout, stderr, status = mypy_api.run(["--strict", "--cache-dir", str(cache), str(snippet)])
    return status, stdout + stderr


def test_the_registry_and_the_classes_are_typed(tmp_path: Path, mypy_cache: Path) -> None:
    checks = "\n".join(f"assert_type({expr}, {expected})" for expr, expected in _TYPED)
    status, output = _mypy(
        tmp_path,
        mypy_cache,
        textwrap.dedent(
            """\
            import uuid
            from collections.abc import Iterator
            from typing import Any

            from typing_extensions import assert_type

            from kafkacore.protocol import APIS, Api, ApiKey
            from kafkacore.protocol.messages import envelope, raft_records, share_fetch, vote
            from kafkacore.protocol.messages.leader_and_isr import LeaderAndIsrRequest
            from kafkacore.protocol.messages.produce import ProduceRequest, ProduceResponse
            from kafkacore.protocol.requests import (
                LeaderAndIsrPartition,
                leader_and_isr_partition_states,
            )
            from kafkacore.protocol.schema import MessageSchema
            from kafkacore.protocol.types import Records

            TopicResponse = ProduceResponse.TopicProduceResponse
            """
        )
        + checks
        + "\n",
    )
    assert status == 0, output


def test_a_misspelled_field_is_a_type_error(tmp_path: Path, mypy_cache: Path) -> None:
    status, output = _mypy(
        tmp_path,
        mypy_cache,
        "from kafkacore.protocol.messages.produce import ProduceRequest\n"
        "print(ProduceRequest().akcs)\n",
    )
    assert status == 1
    assert '"ProduceRequest" has no attribute "akcs"' in output
