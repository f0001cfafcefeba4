"""The engine's floor plan kept: every folder placed in the layers and on the map, no room too big.

The layers themselves are checked by import-linter (tests/test_layers.py); these tests check that a
new folder or module cannot arrive without a place: a sub-package of ``engine/`` missing from the
layer contract would be free of it, and one missing from ``docs/architecture.md`` is invisible to
the next reader.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ENGINE = ROOT / "engine"
MAX_LINES = 1000
MAX_TOP_LEVEL = 15


def _sub_packages(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if (p / "__init__.py").is_file())


def _top_level_modules() -> list[str]:
    return sorted(p.stem for p in ENGINE.glob("*.py") if p.stem != "__init__")


def _contract(name_start: str) -> dict[str, object]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    return next(c for c in contracts if c["name"].startswith(name_start))


def _layered(contract: dict[str, object]) -> set[str]:
    layers = contract["layers"]
    assert isinstance(layers, list)
    return {name.strip() for layer in layers for name in layer.replace(":", "|").split("|")}


def test_every_folder_and_top_level_module_of_the_engine_is_in_the_layers() -> None:
    layered = _layered(_contract("The engine's sub-packages"))
    unplaced = set(_sub_packages(ENGINE)) | set(_top_level_modules())
    assert sorted(unplaced - layered) == []
    assert sorted(layered - unplaced) == []  # no stale name either


def test_every_folder_of_the_exports_is_in_their_layers() -> None:
    layered = _layered(_contract("The exports:"))
    export = ENGINE / "export"
    present = set(_sub_packages(export)) | {p.stem for p in export.glob("*.py") if p.stem != "__init__"}
    assert sorted(present ^ layered) == []


def test_every_folder_of_the_engine_is_on_the_map() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    missing = [f"{name}/" for name in _sub_packages(ENGINE) if f"`{name}/`" not in page]
    missing += [f"export/{name}/" for name in _sub_packages(ENGINE / "export") if f"`{name}/`" not in page]
    assert missing == []


def test_the_engine_has_few_modules_at_its_top_level() -> None:
    assert len(_top_level_modules()) <= MAX_TOP_LEVEL, _top_level_modules()


@pytest.mark.parametrize("folder", ["engine", "cli"])
def test_no_module_is_a_room_nobody_can_hold_in_their_head(folder: str) -> None:
    big = {
        str(path.relative_to(ROOT)): lines
        for path in sorted((ROOT / folder).rglob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert big == {}


def test_every_module_the_map_names_exists() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`(engine/[\w/]+\.py)`", page))
    assert len(named) >= 10  # the examples of "Finding a behaviour" were read
    assert sorted(p for p in named if not (ROOT / p).is_file()) == []
