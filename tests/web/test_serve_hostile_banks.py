"""Banks that once took `quiz serve` and `quiz review` down, without any plugin (issue 25): a tower
of powers in an answer and a mistake, and TeX nested 300 deep. The home page, the preview and a
review answer with the located errors, and nothing hangs or shows a traceback."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.test_hostile_media import DEEP_BANK
from tests.web.conftest import Server, start_server

ROOT = Path(__file__).resolve().parents[2]
TOWERS = ROOT / "tests" / "data" / "bad_formula_banks" / "towers.yaml"
DEEP_TEX = "\\\\sqrt{" * 300 + "a" + "}" * 300
HANG = 60.0
"""Seconds that only a hang reaches (the tower took minutes before the cost model; the machine may be
loaded, so the test bounds nothing finer)."""


def _words(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


@pytest.fixture(scope="module")
def deep_bank(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("deep") / "deep.yaml"
    path.write_text(DEEP_BANK.format(tex=DEEP_TEX), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def served(deep_bank: Path) -> Iterator[Server]:
    server = start_server("week1", str(TOWERS), str(deep_bank), db=deep_bank.parent / "history.sqlite3")
    try:
        yield server
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("path", "located"),
    [
        ("/", ""),
        ("/preview", ""),
        ("/preview/towers", "towers.yaml:11: items[0]"),
        ("/preview/deep", "deep.yaml:10: items[0]"),
    ],
)
def test_serve_answers_with_hostile_banks_on_its_path(served: Server, path: str, located: str) -> None:
    began = time.monotonic()
    reply = served.request("GET", path)
    assert time.monotonic() - began < HANG
    assert reply.status == 200, reply.body[:500]
    assert "Traceback" not in reply.body
    assert located in _words(reply.body)
    # The good bank on the same path is still served.
    assert reply.status == served.request("GET", "/preview/week1").status == 200


@pytest.mark.parametrize("bank", ["towers", "deep"])
def test_review_of_a_hostile_bank_is_its_located_errors(deep_bank: Path, bank: str) -> None:
    path = TOWERS if bank == "towers" else deep_bank
    history = deep_bank.parent / "review.sqlite3"
    run = subprocess.run(
        [sys.executable, "-m", "attnquiz", "review", str(path), "--db", str(history)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=HANG,
        check=False,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    assert "nothing was run" in run.stderr
    assert f"{path.name}:" in run.stderr
