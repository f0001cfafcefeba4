"""A normal (not editable) install of this checkout in a virtual environment of its own, for start-up figures.

Start-up is what a user's interpreter pays before quiz prints anything, so it is measured where a
user runs quiz: ``pip install .`` into a fresh venv, the console script, bytecode compiled by pip.
An editable install answers every import through a finder hook (and the bench's own tree of links
puts a folder first on ``sys.path``): both slow the interpreter itself, bare ``python -c pass``
included, and a ratio to a slowed baseline flatters quiz. The venv is made once per state of the
sources (their digest names it) and kept in the temporary folder; an older one is removed.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# What `pip install .` puts in the wheel (pyproject.toml maps cli/, engine/ and questions/ to attnquiz).
SOURCES = ("pyproject.toml", "README.md", "cli", "engine", "questions")
PREFIX = "quiz-bench-install-"


def sources_digest(root: Path = ROOT) -> str:
    """A digest of every file a wheel of the checkout is built from, so a changed file makes a new venv."""
    digest = hashlib.sha256()
    for name in SOURCES:
        top = root / name
        files = sorted(p for p in top.rglob("*") if p.is_file()) if top.is_dir() else [top]
        for path in files:
            if "__pycache__" in path.parts or path.suffix == ".pyc":
                continue
            digest.update(str(path.relative_to(root)).encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def normal_install(cache: Path | None = None) -> Path:
    """The folder of a venv holding this checkout installed as a user installs it; made if missing.

    Raises ``RuntimeError`` (with pip's last words) if the install fails: the start-up figures cannot
    be measured honestly without it, and are then left out rather than measured another way.
    """
    cache = cache or Path(tempfile.gettempdir())
    venv = cache / f"{PREFIX}{sources_digest()}"
    complete = venv / "installed"  # written last: a venv without it was interrupted and is made again
    if complete.is_file():
        return venv
    for stale in cache.glob(f"{PREFIX}*"):
        shutil.rmtree(stale, ignore_errors=True)
    # The base interpreter: the one users' venvs are made from, whatever venv runs the bench.
    base = getattr(sys, "_base_executable", sys.executable)
    steps = [
        [base, "-m", "venv", str(venv)],
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            str(ROOT),
        ],
    ]
    for step in steps:
        result = subprocess.run(step, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            shutil.rmtree(venv, ignore_errors=True)
            words = (result.stderr or result.stdout).strip().splitlines()
            raise RuntimeError(f"a normal install of the checkout failed: {words[-1] if words else step}")
    complete.write_text(sources_digest() + "\n", encoding="utf-8")
    return venv
