"""The house's rule, where import-linter cannot see it (docs/architecture.md): no private
name (``_x``) is imported from another of kafkacore's packages, and the faces stay small
rooms. ``scripts/house.py`` is the reading; these tests fail on a new private import or an
oversized console file or function."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def _house() -> ModuleType:
    spec = importlib.util.spec_from_file_location("house", ROOT / "scripts" / "house.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_private_name_is_imported_across_packages() -> None:
    assert _house().private_cross_imports() == []


def test_the_private_import_check_sees_one(tmp_path: Path) -> None:
    """A tree of two packages where one imports the other's private name, and one where
    a package imports its own."""
    package = tmp_path / "python" / "kafkacore"
    for name in ("cli", "console"):
        (package / name).mkdir(parents=True)
        (package / name / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "cli" / "own.py").write_text("from kafkacore.cli import _ours\n")
    (package / "console" / "probe.py").write_text(
        "from kafkacore.cli.topics import _theirs\nfrom . import _mine\n"
    )
    assert _house().private_cross_imports(package) == [
        "python/kafkacore/console/probe.py:1 kafkacore.cli.topics._theirs"
    ]


def test_console_rooms_stay_small() -> None:
    house = _house()
    assert house.big_files(house.PKG_DIR / "console", 800) == []
    assert house.long_functions(house.PKG_DIR / "console", 120) == []


def test_handlers_authorize_call_and_shape() -> None:
    """A handler that grows past 120 lines is doing the replica manager's or the
    partition's work (Kafka's ``KafkaApis`` keeps to authorize, call, shape); and the
    handlers stay typed by their message classes rather than ``Any``."""
    house = _house()
    assert house.long_functions(house.PKG_DIR / "server" / "handlers", 120) == []
    assert house.any_count(house.PKG_DIR / "server") < 100


def test_the_size_checks_see_a_long_function(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i}: Any = {i}" for i in range(121))
    (tmp_path / "h.py").write_text(f"from typing import Any\n\n\ndef handle() -> None:\n{body}\n")
    house = _house()
    assert [length for _, length in house.long_functions(tmp_path, 120)] == [122]
    assert house.any_count(tmp_path) == 121  # the import line is not counted


def test_readme_is_a_front_door() -> None:
    assert len((ROOT / "README.md").read_text().splitlines()) <= 300
