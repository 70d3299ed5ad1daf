"""The typed stubs of the message classes (``protocol/messages/*.pyi``, ``api_table.pyi``)
stay what :mod:`kafkacore.protocol.stubgen` generates from the declarations, agree with the
runtime classes (``mypy.stubtest``, as for ``_native``), and type what they promise."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from mypy import api as mypy_api

import kafkacore.protocol
from kafkacore.protocol import APIS, messages, stubgen

PROTOCOL_DIR = Path(kafkacore.protocol.__file__).parent


def test_committed_stubs_are_the_generated_ones(tmp_path: Path) -> None:
    written = stubgen.write(tmp_path)
    assert len(written) == len(messages.__all__) + 1
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


def test_check_mode_reports_a_stale_stub(tmp_path: Path) -> None:
    stubgen.write(tmp_path)
    assert stubgen.main(["--check", "--out", str(tmp_path)]) == 0
    stub = tmp_path / "messages" / "produce.pyi"
    stub.write_text(stub.read_text().replace("    acks: int\n", "    acks: str\n"))
    assert stubgen.main(["--check", "--out", str(tmp_path)]) == 1


def test_stubs_agree_with_the_runtime_classes() -> None:
    modules = [f"{messages.__name__}.{name}" for name in messages.__all__]
    result = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", *modules],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_struct_has_a_class_in_the_stub() -> None:
    """Each nested struct of a message is reachable at runtime as the stub names it
    (``ProduceRequest.TopicProduceData``), and its fields are the declaration's."""
    for api in APIS.values():
        for schema in (api.request, api.response):
            module = next(
                getattr(messages, name)
                for name in messages.__all__
                if getattr(messages, name).REQUEST is schema
                or getattr(messages, name).RESPONSE is schema
            )
            top = getattr(module, schema.name)
            assert top is schema.cls
            text = (
                PROTOCOL_DIR / "messages" / (module.__name__.rsplit(".", 1)[1] + ".pyi")
            ).read_text()
            for sub in stubgen._structs(schema.struct):
                assert getattr(top, sub.name) is sub.cls
                assert f"    class {sub.name}(KafkaStruct):" in text
                for f in sub.fields:
                    assert f" {f.attr}: " in text


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
            from collections.abc import Iterator
            from typing import Any

            from typing_extensions import assert_type

            from kafkacore.protocol import APIS, Api, ApiKey
            from kafkacore.protocol.messages.leader_and_isr import LeaderAndIsrRequest
            from kafkacore.protocol.messages.produce import ProduceRequest, ProduceResponse
            from kafkacore.protocol.requests import (
                LeaderAndIsrPartition,
                leader_and_isr_partition_states,
            )
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
