"""The cache of validated banks: used only for the very same file and code, and never breaks loading."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from attnquiz.engine.answers.kinds import ChoiceAnswer
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.bank.loaded import Bank
from attnquiz.engine.errors import BankError

BANK = """bank: cached
title: Cached
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
    """A private QUIZ_HOME, and an empty in-process cache (so every load goes to the disk cache)."""
    folder = tmp_path / "home"
    monkeypatch.setenv("QUIZ_HOME", str(folder))
    monkeypatch.delenv("QUIZ_NO_CACHE", raising=False)
    monkeypatch.setattr(banks, "_cache", {})
    return folder


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files the loader validated (a cache hit validates none)."""
    import attnquiz.engine.bank.loader

    seen: list[str] = []
    real = attnquiz.engine.bank.loader.load_bank_text

    def counting(text: str, file: str, *args: object, **kwargs: object) -> Bank:
        seen.append(file)
        return real(text, file, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(attnquiz.engine.bank.loader, "load_bank_text", counting)
    return seen


def bank_file(tmp_path: Path, text: str = BANK) -> Path:
    path = tmp_path / "cached.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def entries(home: Path) -> list[Path]:
    folder = home / "cache" / "banks"
    return sorted(folder.glob("*.pickle")) if folder.is_dir() else []


def fresh_load(path: Path) -> Bank:
    """A load as a new process does it: nothing in memory."""
    banks._cache.clear()
    return banks.load(str(path))


def questions(bank: Bank) -> list[dict[str, object]]:
    return [entry.question(seed).to_json() for entry in bank.items for seed in range(5)] + [
        bank.get("score").original().to_json()
    ]


def test_a_second_load_comes_from_the_cache_and_gives_the_same_questions(
    tmp_path: Path, home: Path, reads: list[str]
) -> None:
    path = bank_file(tmp_path)
    first = fresh_load(path)
    assert len(reads) == 1
    assert len(entries(home)) == 1
    again = fresh_load(path)
    assert len(reads) == 1  # not validated again
    assert again == first
    assert questions(again) == questions(first)
    assert [e.spec for e in again.items] == [e.spec for e in first.items]


def test_an_edited_file_is_read_again_even_with_the_same_size_and_mtime(
    tmp_path: Path, home: Path, reads: list[str]
) -> None:
    path = bank_file(tmp_path)
    fresh_load(path)
    stat = path.stat()
    edited = BANK.replace("{dim: 2}", "{dim: 3}")
    assert len(edited) == len(BANK)
    path.write_text(edited, encoding="utf-8")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    bank = fresh_load(path)
    assert len(reads) == 2
    assert bank.get("score").kwargs["dim"] == 3
    assert len(entries(home)) == 1  # the new version replaced the old entry


def test_a_change_of_code_makes_the_entry_stale(
    tmp_path: Path, home: Path, reads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = bank_file(tmp_path)
    fresh_load(path)
    monkeypatch.setattr(banks, "code_fingerprint", lambda: (("engine/new.py", 1, 2),))
    fresh_load(path)
    assert len(reads) == 2


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: b"",
        lambda data: b"not a pickle at all",
        lambda data: pickle.dumps({"format": 1}),
        lambda data: data[: len(data) // 2],  # the stamp matches, the bank is cut short
        lambda data: data[:-40] + b"\xff" * 40,
        # Inside an item's parameters, pickled apart and read only when the item is used: the digest
        # of the whole bank finds it at once.
        lambda data: data.replace(b"be negative", b"be NEGATIVE"),
    ],
    ids=["empty", "garbage", "another stamp", "cut short", "overwritten end", "a parameter changed"],
)
def test_a_corrupt_entry_is_ignored_and_rewritten(
    tmp_path: Path, home: Path, reads: list[str], damage: Callable[[bytes], bytes]
) -> None:
    path = bank_file(tmp_path)
    expected = questions(fresh_load(path))
    [entry] = entries(home)
    entry.write_bytes(damage(entry.read_bytes()))
    entry.chmod(0o600)
    assert questions(fresh_load(path)) == expected
    assert len(reads) == 2
    fresh_load(path)
    assert len(reads) == 2  # the rewritten entry serves the next load


def test_an_entry_naming_a_generator_that_no_longer_exists_is_ignored(
    tmp_path: Path, home: Path, reads: list[str]
) -> None:
    path = bank_file(tmp_path)
    fresh_load(path)
    [entry] = entries(home)
    data = entry.read_bytes().replace(b"additive_score", b"additive_scorX")
    entry.write_bytes(data)
    assert fresh_load(path).get("score").spec.name == "additive_score"
    assert len(reads) == 2


def test_an_entry_others_may_write_is_not_trusted(tmp_path: Path, home: Path, reads: list[str]) -> None:
    path = bank_file(tmp_path)
    fresh_load(path)
    [entry] = entries(home)
    entry.chmod(0o666)
    fresh_load(path)
    assert len(reads) == 2


def test_an_unwritable_cache_never_breaks_loading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reads: list[str]
) -> None:
    blocker = tmp_path / "home"
    blocker.write_text("a file where the cache folder would go", encoding="utf-8")
    monkeypatch.setenv("QUIZ_HOME", str(blocker))
    monkeypatch.setattr(banks, "_cache", {})
    path = bank_file(tmp_path)
    assert fresh_load(path).get("score").question(1).answer.kind == "numeric"
    assert fresh_load(path).name == "cached"
    assert len(reads) == 2


def test_no_cache_when_turned_off(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QUIZ_NO_CACHE", "1")
    fresh_load(bank_file(tmp_path))
    assert entries(home) == []
    assert banks.cache_dir() is None


def test_a_bank_with_plugins_is_never_cached(tmp_path: Path, home: Path, reads: list[str]) -> None:
    (tmp_path / "gens.py").write_text(
        '"""My generators."""\n'
        "import numpy as np\n"
        "from attnquiz.engine.answers.kinds import IntegerAnswer\n"
        "from attnquiz.engine.registry import generator\n"
        "from attnquiz.engine.variant import Variant\n\n\n"
        "@generator\n"
        "def cache_test_entries(rng: np.random.Generator, /, *, t: int = 3) -> Variant:\n"
        '    """Count entries."""\n'
        '    return Variant(prompt="How many?", answer=IntegerAnswer(t * t), solution=["t squared"])\n',
        encoding="utf-8",
    )
    text = BANK.replace("items:\n", "plugins: [gens.py]\nitems:\n", 1)
    path = bank_file(tmp_path, text)
    fresh_load(path)
    fresh_load(path)
    assert entries(home) == []
    assert len(reads) == 2


def test_errors_are_reported_as_before_and_nothing_is_cached(tmp_path: Path, home: Path) -> None:
    path = bank_file(tmp_path, BANK.replace("generator: additive_score", "generator: additive_scor"))
    for _ in range(2):
        with pytest.raises(BankError, match="unknown generator 'additive_scor'"):
            fresh_load(path)
    assert entries(home) == []


def test_a_new_process_loads_the_shipped_bank_from_the_cache(tmp_path: Path) -> None:
    env = {**os.environ, "QUIZ_HOME": str(tmp_path)}
    env.pop("QUIZ_NO_CACHE", None)
    code = (
        "import json, sys\n"
        "from attnquiz.engine.bank import finding as banks\n"
        "bank = banks.load('week1')\n"
        "print(json.dumps({'loader': 'attnquiz.engine.bank.loader' in sys.modules,"
        " 'yaml': 'yaml' in sys.modules,"
        " 'question': bank.items[0].question(7).to_json()}))\n"
    )

    def run() -> dict[str, object]:
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        result: dict[str, object] = json.loads(done.stdout)
        return result

    cold, warm = run(), run()
    assert cold["loader"] is True
    assert warm["loader"] is False  # neither the loader nor yaml is imported on a hit
    assert warm["yaml"] is False
    assert warm["question"] == cold["question"]


def test_only_the_latest_entries_are_kept(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(banks, "CACHE_ENTRIES", 2)
    names: list[str] = []
    for number in range(3):
        folder = tmp_path / f"bank{number}"
        folder.mkdir()
        before = {path.name for path in entries(home)}
        fresh_load(bank_file(folder))
        [new] = {path.name for path in entries(home)} - before
        names.append(new)
        # Distinct, increasing times (a file system's clock may give three writes the same one).
        os.utime(home / "cache" / "banks" / new, ns=(10**9 * (number + 1), 10**9 * (number + 1)))
    assert {path.name for path in entries(home)} == set(names[1:])


# ---------------------------------------------------------------------------------------------
# Entries another user could have placed are never unpickled (unpickling runs code)
# ---------------------------------------------------------------------------------------------


class _Payload:
    """Unpickled, creates ``marker``: proof that a planted entry ran code."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, ...]:
        return (open, (str(self.marker), "w"))


def plant(tmp_path: Path, name: str = "planted.pickle") -> tuple[Path, Path]:
    """A pickle that runs code when loaded, and the file that running it creates."""
    marker = tmp_path / "code-ran"
    payload = tmp_path / name
    payload.write_bytes(pickle.dumps(_Payload(marker)))
    payload.chmod(0o600)
    return payload, marker


def test_a_symlink_planted_as_an_entry_is_not_followed(tmp_path: Path, home: Path, reads: list[str]) -> None:
    path = bank_file(tmp_path)
    fresh_load(path)
    [entry] = entries(home)
    payload, marker = plant(tmp_path)  # the user's own file (a pickle they keep elsewhere)
    entry.unlink()
    entry.symlink_to(payload)
    assert fresh_load(path).name == "cached"
    assert not marker.exists()
    assert len(reads) == 2


@pytest.mark.parametrize("mode", [0o770, 0o777, 0o707], ids=["group", "world", "others"])
def test_a_cache_folder_others_can_write_is_neither_read_nor_written(
    tmp_path: Path, home: Path, reads: list[str], mode: int
) -> None:
    path = bank_file(tmp_path)
    fresh_load(path)
    [entry] = entries(home)
    payload, marker = plant(tmp_path)
    entry.write_bytes(payload.read_bytes())  # what another member of the group could put there
    entry.chmod(0o600)
    entry.parent.chmod(mode)
    try:
        assert fresh_load(path).name == "cached"
        assert not marker.exists()
        assert len(reads) == 2
        assert entry.read_bytes() == payload.read_bytes()  # not rewritten either
    finally:
        entry.parent.chmod(0o700)


def test_a_writable_folder_above_the_cache_makes_it_untrusted(tmp_path: Path, home: Path) -> None:
    path = bank_file(tmp_path)
    fresh_load(path)
    folder = home / "cache" / "banks"
    assert banks._private_folder(folder)
    home.chmod(0o777)  # another user could rename cache/ and put their own folder there
    try:
        assert not banks._private_folder(folder)
    finally:
        home.chmod(0o700)
    sticky = tmp_path / "sticky"
    sticky.mkdir(mode=0o700)
    sticky.chmod(0o1777)  # as /tmp: others may add files but not move the user's folder
    (sticky / "banks").mkdir(mode=0o700)
    assert banks._private_folder(sticky / "banks")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to chown")
def test_a_foreign_file_with_the_entrys_name_is_not_unpickled(
    tmp_path: Path, home: Path, reads: list[str]
) -> None:
    path = bank_file(tmp_path)
    fresh_load(path)
    [entry] = entries(home)
    payload, marker = plant(tmp_path)
    entry.write_bytes(payload.read_bytes())
    entry.chmod(0o600)
    os.chown(entry, 65534, 65534)
    assert fresh_load(path).name == "cached"
    assert not marker.exists()
    assert len(reads) == 2


def test_a_hard_link_as_an_entry_is_not_trusted(tmp_path: Path, home: Path, reads: list[str]) -> None:
    path = bank_file(tmp_path)
    fresh_load(path)
    [entry] = entries(home)
    payload, marker = plant(tmp_path)
    entry.unlink()
    os.link(payload, entry)
    assert fresh_load(path).name == "cached"
    assert not marker.exists()


def test_pruning_deletes_only_quizs_own_entries(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fresh_load(bank_file(tmp_path))
    folder = home / "cache" / "banks"
    keep = [folder / "notes.pickle", folder / "README", folder / ("a" * 31 + ".pickle")]
    for other in keep:
        other.write_text("not quiz's", encoding="utf-8")
        os.utime(other, ns=(1, 1))  # the oldest of all: pruned first, if pruning took it
    monkeypatch.setattr(banks, "CACHE_ENTRIES", 1)
    for number in range(3):
        (tmp_path / f"b{number}").mkdir()
        fresh_load(bank_file(tmp_path / f"b{number}"))
    assert all(other.exists() for other in keep)
    assert len(entries(home)) - 2 == 1  # notes.pickle and the 31-digit name are not entries


IMAGE_BANK = """bank: pictured
title: Pictured
items:
  - kind: explain
    id: look
    source: "Notes, a figure"
    topic: facts
    prompt: |
      What does the map show?

      ![the map](figures/map.svg)
    answer: "Attention weights."
    points: ["rows are queries", "columns are keys"]
"""
SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><rect width="4" height="4"/></svg>'


def test_a_cached_bank_whose_image_changed_is_read_and_checked_again(
    tmp_path: Path, home: Path, reads: list[str]
) -> None:
    """The cache holds the bank's YAML; its image files are checked when it is read. An image
    removed or spoilt since is a located error, as on the first load (it was an error text
    inside the worksheets), and an image edited is read again."""
    (tmp_path / "figures").mkdir()
    image = tmp_path / "figures" / "map.svg"
    image.write_text(SVG, encoding="utf-8")
    path = bank_file(tmp_path, IMAGE_BANK)
    fresh_load(path)
    fresh_load(path)
    assert len(reads) == 1  # the second came from the cache: the image had not changed
    image.unlink()
    with pytest.raises(BankError) as gone:
        fresh_load(path)
    assert "cached.yaml:11:" in str(gone.value)
    assert "no such file" in str(gone.value)
    image.write_text("not an image at all", encoding="utf-8")
    with pytest.raises(BankError, match=r"cached\.yaml:11:"):
        fresh_load(path)
    image.write_text(SVG.replace('width="4" height="4"/>', 'width="3" height="4"/>'), encoding="utf-8")
    assert fresh_load(path).images[0][0] == "figures/map.svg"
    assert len(reads) == 4


OVERRIDES = """bank: facts
title: Facts
items:
  - id: score
    source: "Notes, worked problem 1"
    topic: additive-attention
    generator: additive_score
    params: {dim: 2}
    original: {h: [1, 0], s_proj: [1, 2], v: [1, 1]}
    tolerance: {sigfigs: 2}
    tags: [kept]
    note:
      - {text: "Said to students on variants.", for: students, on: variants}
      - {text: "Said to students on the original.", for: students, on: original}
      - "Said to instructors on every instance."
  - id: pick
    source: "Notes, worked problem 2"
    topic: facts
    generator: statements
    scoring: all-or-nothing
    params:
      options: 2
      multiple: true
      pool:
        - {text: "Softmax weights sum to one.", true: true, why: "They are normalised."}
        - {text: "Softmax weights can be negative.", true: false, why: "exp is positive."}
        - {text: "A weight is at most one.", true: true, why: "They sum to one."}
  - id: ffn
    kind: formula
    source: "Notes, worked problem 3"
    topic: parameter-count
    params:
      d: {choice: [256, 512]}
    prompt: "An FFN has $d = {{d}}$ and $4d$ hidden units."
    answer: {kind: integer, value: "8*d*d + 5*d"}
    solution: ["$8 \\\\cdot {{d}}^2 + 5 \\\\cdot {{d}}$"]
    original: {d: 512}
    note: {text: "Only the original's numbers are the paper's.", on: original}
  - id: why-scale
    kind: explain
    source: "Notes, interview 1"
    topic: scaling
    prompt: "Why divide by $\\\\sqrt{d_k}$?"
    answer: "So the scores' variance stays near one."
    points: ["the variance of a dot product grows with d_k", "softmax saturates otherwise"]
"""
# Builds every question of a bank (five seeds, and each original) and prints them with whether
# pydantic and the bank format were imported; then reads a field only the validated model has.
BUILD_ALL = (
    "import json, sys\n"
    "from attnquiz.engine.bank import finding as banks\n"
    "bank = banks.load(sys.argv[1])\n"
    "shown = [e.question(s).to_json() for e in bank.items for s in range(5)]\n"
    "shown += [e.original().to_json() for e in bank.items if e.has_original]\n"
    "facts = [(e.id, e.topic, e.source, e.unavailable) for e in bank.items]\n"
    "before = sorted({'pydantic', 'attnquiz.engine.schema'} & set(sys.modules))\n"
    "tags = [e.item.tags for e in bank.items]\n"
    "print(json.dumps({'questions': shown, 'facts': facts, 'imported': before, 'tags': tags,"
    " 'loader': 'attnquiz.engine.bank.loader' in sys.modules}))\n"
)


@pytest.mark.parametrize("bank", ["week1", "week2", "code", "overrides"])
def test_a_bank_from_the_cache_builds_every_question_without_pydantic(tmp_path: Path, bank: str) -> None:
    """Issue 43: the cache holds what questions need as plain data; the validated models (pydantic)
    are read back only when a field that is not among those is asked for. Tolerance and scoring
    overrides, notes for each audience and instance, formula and explain items come out the same."""
    if bank == "overrides":
        bank = str(bank_file(tmp_path, OVERRIDES))
    env = {**os.environ, "QUIZ_HOME": str(tmp_path / "home")}
    env.pop("QUIZ_NO_CACHE", None)

    def run(**extra: str) -> dict[str, object]:
        done = subprocess.run(
            [sys.executable, "-c", BUILD_ALL, bank],
            env={**env, **extra},
            capture_output=True,
            text=True,
            check=True,
        )
        result: dict[str, object] = json.loads(done.stdout)
        return result

    cold, warm, uncached = run(), run(), run(QUIZ_NO_CACHE="1")
    assert cold["loader"] is True
    assert warm["loader"] is False
    assert cold["imported"] == ["attnquiz.engine.schema", "pydantic"]
    assert warm["imported"] == []  # no pydantic model read back, none validated
    for key in ("questions", "facts", "tags"):
        assert warm[key] == cold[key] == uncached[key], key


def test_an_overridden_tolerance_and_scoring_and_the_notes_reach_the_question(
    tmp_path: Path, home: Path
) -> None:
    path = bank_file(tmp_path, OVERRIDES)
    for bank in (fresh_load(path), fresh_load(path)):  # read from the file, then from the cache
        score, pick = bank.get("score"), bank.get("pick")
        assert score.question(3).variant.answer.tolerance.describe() == "to 2 significant figures"
        choice = pick.question(3).variant.answer
        assert isinstance(choice, ChoiceAnswer)
        assert choice.scoring == "all-or-nothing"
        original, variant = score.original(), score.question(3)
        assert original.student_note == "Said to students on the original."
        assert variant.student_note == "Said to students on variants."
        assert original.instructor_note == variant.instructor_note == "Said to instructors on every instance."
        assert bank.get("ffn").original().instructor_note == "Only the original's numbers are the paper's."
        assert bank.get("ffn").question(1).instructor_note == ""


def test_the_stamp_follows_a_librarys_installed_version_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache's stamp names pydantic by its version file where Python would import it from
    (without importing it): an upgrade rewrites the file, and the stamp changes with it."""
    first, second = tmp_path / "first", tmp_path / "second"
    for folder, version in ((first, "1.0"), (second, "2.0.0")):
        (folder / "fakelib").mkdir(parents=True)
        (folder / "fakelib" / "__init__.py").write_text(f"__version__ = {version!r}\n", encoding="utf-8")
        (folder / "fakelib" / "version.py").write_text(f"VERSION = {version!r}\n", encoding="utf-8")
    monkeypatch.setattr(sys, "path", [str(tmp_path / "empty"), str(first), str(second), *sys.path])
    found = banks.installed_version_file("fakelib")
    assert isinstance(found, tuple)
    assert found[0] == str((first / "fakelib").resolve())  # the first on the path, as import finds it
    assert "fakelib" not in sys.modules
    (first / "fakelib" / "version.py").write_text("VERSION = '1.0.1'\n", encoding="utf-8")
    assert banks.installed_version_file("fakelib") != found
    # Without a version file, the package is imported to ask its version.
    (first / "fakelib" / "version.py").unlink()
    try:
        assert banks.installed_version_file("fakelib") == "1.0"
    finally:
        sys.modules.pop("fakelib", None)
