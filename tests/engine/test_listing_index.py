"""The listing index of `quiz list`: used only for the very same bank bytes and code, only when it is
the user's own, and listing exactly what the bank itself lists."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from attnquiz.engine.bank import finding as banks
from attnquiz.engine.bank.loaded import Bank

BANK = """bank: listed
title: Listed
items:
  - id: score
    source: "Notes, worked problem 1"
    topic: additive-attention
    generator: additive_score
    params: {dim: 2}
    original: {h: [1, 0], s_proj: [1, 2], v: [1, 1]}
    tolerance: {decimals: 2}
  - id: pick
    source: "Notes, worked problem 2"
    topic: facts
    generator: statements
    params:
      options: 2
      pool:
        - {text: "Softmax weights sum to one.", true: true, why: "They are normalised."}
        - {text: "Softmax weights can be negative.", true: false, why: "exp is positive."}
"""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private QUIZ_HOME and an empty in-process cache."""
    folder = tmp_path / "home"
    monkeypatch.setenv("QUIZ_HOME", str(folder))
    monkeypatch.delenv("QUIZ_NO_CACHE", raising=False)
    monkeypatch.setattr(banks, "_cache", {})
    return folder


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The banks whose listing was built from the bank (an index hit builds none)."""
    seen: list[str] = []
    real = banks.bank_listing

    def counting(bank: Bank) -> banks.BankListing:
        seen.append(bank.name)
        return real(bank)

    monkeypatch.setattr(banks, "bank_listing", counting)
    return seen


def bank_file(tmp_path: Path, text: str = BANK) -> Path:
    path = tmp_path / "listed.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def index_files(home: Path) -> list[Path]:
    folder = home / "cache" / "banks"
    return sorted(folder.glob("*.listing.json")) if folder.is_dir() else []


def forge(index: Path, title: str) -> None:
    """Rewrite an index in place with another title, keeping its stamp (as an attacker could)."""
    stored = json.loads(index.read_bytes())
    stored["listing"]["title"] = title
    index.write_text(json.dumps(stored), encoding="utf-8")


def test_the_index_lists_what_the_bank_lists_and_is_used_the_second_time(
    tmp_path: Path, home: Path, builds: list[str]
) -> None:
    path = bank_file(tmp_path)
    first = banks.listing(str(path))
    assert builds == ["listed"]
    assert first == banks.bank_listing(banks.load(str(path)))
    assert [(i.id, i.kind, i.multiple, i.original) for i in first.items] == [
        ("score", "numeric", False, True),
        ("pick", "choice", True, False),  # statements: select all that are true
    ]
    [index] = index_files(home)
    assert index.stat().st_mode & 0o777 == 0o600
    builds.clear()
    assert banks.listing(str(path)) == first
    assert builds == []
    forge(index, "Forged")  # the user's own file: proof that the index, not the bank, is read
    assert banks.listing(str(path)).title == "Forged"


def test_the_shipped_banks_list_the_same_from_the_index_and_from_the_bank(home: Path) -> None:
    for name in ("week1", "week2"):
        built = banks.bank_listing(banks.load(name))
        assert banks.listing(name) == built  # builds and writes the index
        assert banks.listing(name) == built  # reads it


def test_an_edited_bank_is_listed_again_even_with_the_same_size_and_mtime(
    tmp_path: Path, home: Path, builds: list[str]
) -> None:
    path = bank_file(tmp_path)
    banks.listing(str(path))
    stat = path.stat()
    edited = BANK.replace("worked problem 1", "worked problem 7")
    assert len(edited) == len(BANK)
    path.write_text(edited, encoding="utf-8")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert banks.listing(str(path)).items[0].source == "Notes, worked problem 7"
    assert len(builds) == 2
    assert len(index_files(home)) == 1  # the new version replaced the old index


def test_an_upgrade_of_quiz_makes_the_index_stale(
    tmp_path: Path, home: Path, builds: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = bank_file(tmp_path)
    banks.listing(str(path))
    forge(index_files(home)[0], "Forged")
    monkeypatch.setattr(banks, "code_fingerprint", lambda: (("engine/new.py", 1, 2),))
    assert banks.listing(str(path)).title == "Listed"
    assert len(builds) == 2


def test_the_same_bank_shown_by_another_name_has_its_own_index(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = bank_file(tmp_path)
    banks.listing(str(path))
    monkeypatch.chdir(tmp_path)
    banks.listing("./listed.yaml")
    assert len(index_files(home)) == 2


@pytest.mark.parametrize(
    "damage",
    [
        b"",
        b"not json",
        b"[]",
        b'{"stamp": 1}',
        b"[" * 100_000,  # nested beyond the parser's depth
        b"\xff\xfe",
    ],
    ids=["empty", "text", "list", "no-stamp", "deep", "not-utf8"],
)
def test_a_damaged_index_is_ignored_and_rewritten(
    tmp_path: Path, home: Path, builds: list[str], damage: bytes
) -> None:
    path = bank_file(tmp_path)
    expected = banks.listing(str(path))
    [index] = index_files(home)
    index.write_bytes(damage)
    assert banks.listing(str(path)) == expected
    assert len(builds) == 2
    assert json.loads(index.read_bytes())["listing"]["title"] == "Listed"  # rewritten


@pytest.mark.parametrize(
    "reshape",
    [
        lambda listing: listing["items"][0].pop("kind"),
        lambda listing: listing["items"][0].update(kind=3),
        lambda listing: listing["items"][0].update(original="yes"),
        lambda listing: listing["items"][0].update(extra="x"),
        lambda listing: listing.update(items={"a": 1}),
        lambda listing: listing.update(title=None),
        lambda listing: listing.update(more=1),
    ],
    ids=[
        "missing-field",
        "kind-not-text",
        "original-not-bool",
        "extra-field",
        "items-not-list",
        "no-title",
        "extra-key",
    ],
)
def test_an_index_of_the_wrong_shape_is_ignored(
    tmp_path: Path, home: Path, builds: list[str], reshape: object
) -> None:
    path = bank_file(tmp_path)
    expected = banks.listing(str(path))
    [index] = index_files(home)
    stored = json.loads(index.read_bytes())
    reshape(stored["listing"])  # type: ignore[operator]
    index.write_text(json.dumps(stored), encoding="utf-8")
    assert banks.listing(str(path)) == expected
    assert len(builds) == 2


def test_an_index_larger_than_the_cap_is_not_read(
    tmp_path: Path, home: Path, builds: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = bank_file(tmp_path)
    banks.listing(str(path))
    forge(index_files(home)[0], "x" * 2000)
    monkeypatch.setattr(banks, "MAX_LISTING_BYTES", 1000)
    assert banks.listing(str(path)).title == "Listed"


@pytest.mark.parametrize("mode", [0o620, 0o602, 0o666], ids=["group", "others", "world"])
def test_an_index_others_may_write_is_not_used(
    tmp_path: Path, home: Path, builds: list[str], mode: int
) -> None:
    path = bank_file(tmp_path)
    banks.listing(str(path))
    [index] = index_files(home)
    forge(index, "Forged")
    index.chmod(mode)
    assert banks.listing(str(path)).title == "Listed"
    assert len(builds) == 2


def test_a_symlink_or_hard_link_planted_as_the_index_is_not_used(
    tmp_path: Path, home: Path, builds: list[str]
) -> None:
    path = bank_file(tmp_path)
    banks.listing(str(path))
    [index] = index_files(home)
    planted = tmp_path / "planted.json"
    planted.write_bytes(index.read_bytes())
    forge(planted, "Forged")
    planted.chmod(0o600)
    index.unlink()
    index.symlink_to(planted)
    assert banks.listing(str(path)).title == "Listed"
    index.unlink()
    os.link(planted, index)
    assert banks.listing(str(path)).title == "Listed"


@pytest.mark.parametrize("mode", [0o770, 0o777], ids=["group", "world"])
def test_a_cache_folder_others_can_write_is_neither_read_nor_written(
    tmp_path: Path, home: Path, builds: list[str], mode: int
) -> None:
    path = bank_file(tmp_path)
    banks.listing(str(path))
    [index] = index_files(home)
    forge(index, "Forged")
    index.parent.chmod(mode)
    try:
        assert banks.listing(str(path)).title == "Listed"
        index.unlink()
        banks.listing(str(path))
        assert index_files(home) == []
    finally:
        index.parent.chmod(0o700)


def test_no_index_when_the_cache_is_off(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QUIZ_NO_CACHE", "1")
    assert banks.listing(str(bank_file(tmp_path))).title == "Listed"
    assert index_files(home) == []


def test_a_bank_with_plugins_is_listed_without_running_them_and_gets_no_index(
    tmp_path: Path, home: Path
) -> None:
    marker = tmp_path / "plugin-ran"
    (tmp_path / "gens.py").write_text(
        f"open({str(marker)!r}, 'w').close()\n"
        "import numpy as np\n"
        "from attnquiz.engine.answers.kinds import IntegerAnswer\n"
        "from attnquiz.engine.registry import generator\n"
        "from attnquiz.engine.variant import Variant\n\n\n"
        "@generator\n"
        "def listing_test_entries(rng: np.random.Generator, /, *, t: int = 3) -> Variant:\n"
        '    """Count entries."""\n'
        '    return Variant(prompt="How many?", answer=IntegerAnswer(t * t), solution=["t squared"])\n',
        encoding="utf-8",
    )
    text = BANK.replace("items:\n", "plugins: [gens.py]\nitems:\n", 1) + (
        "  - id: mine\n    source: Mine\n    topic: own\n    generator: listing_test_entries\n"
    )
    path = bank_file(tmp_path, text)
    for _ in range(2):
        listed = banks.listing(str(path))
        assert [(i.id, i.kind) for i in listed.items][-1] == ("mine", "plugin")
    assert not marker.exists()
    assert index_files(home) == []


def test_pruning_keeps_indexes_and_entries_apart(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(banks, "CACHE_ENTRIES", 2)
    for number in range(3):
        folder = tmp_path / f"bank{number}"
        folder.mkdir()
        banks.listing(str(bank_file(folder)))
    folder = home / "cache" / "banks"
    assert len(list(folder.glob("*.listing.json"))) == 2
    assert len(list(folder.glob("*.pickle"))) == 2
