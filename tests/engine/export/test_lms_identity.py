"""The Moodle XML and Canvas QTI exports of both banks, fixed by their SHA-256 digests.

The LMS writers are rebuilt on one model of a question (`attnquiz.engine.export.lms_model`); these
digests, recorded before that change, prove it changed no byte. A deliberate change of what an
export writes updates them (QUIZ_UPDATE_GOLDEN=1 rewrites the file) in a commit that says why.
The warnings each export prints are hashed too. The QTI package is hashed member by member (name
and uncompressed bytes), so the digest does not depend on the zlib that compressed it.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import zipfile
from functools import cache

import pytest

from attnquiz.engine import banks
from attnquiz.engine.export import moodle, qti
from attnquiz.engine.export.worksheet import plan_class

from .golden import GOLDEN

DIGESTS = GOLDEN / "lms-exports.sha256.json"
CASES = [
    (bank, students, seed)
    for bank in ("week1", "week2")
    for students, seed in ((1, None), (1, 2026), (3, 2026), (5, 7))
]


def _case_name(bank: str, students: int, seed: int | None) -> str:
    return f"{bank}-{'original' if seed is None else f'seed{seed}'}-x{students}"


def _digests(bank: str, students: int, seed: int | None) -> dict[str, str]:
    plan = plan_class(banks.load(bank), students=students, master_seed=seed)
    built = moodle.build(plan)
    packed = qti.package(plan)
    package = packed.data
    canvas = hashlib.sha256()
    with zipfile.ZipFile(io.BytesIO(package)) as archive:
        for name in archive.namelist():
            canvas.update(name.encode("utf-8") + b"\0" + archive.read(name) + b"\0")
    return {
        "moodle": hashlib.sha256(built.text.encode("utf-8")).hexdigest(),
        "canvas": canvas.hexdigest(),
        "warnings": hashlib.sha256("\n".join(built.warnings + packed.warnings).encode("utf-8")).hexdigest(),
    }


@cache
def _recorded() -> dict[str, dict[str, str]]:
    if not DIGESTS.exists():
        return {}
    recorded: dict[str, dict[str, str]] = json.loads(DIGESTS.read_text(encoding="utf-8"))
    return recorded


@pytest.mark.parametrize(("bank", "students", "seed"), CASES, ids=[_case_name(*c) for c in CASES])
def test_lms_exports_are_the_recorded_bytes(bank: str, students: int, seed: int | None) -> None:
    name = _case_name(bank, students, seed)
    actual = _digests(bank, students, seed)
    if os.environ.get("QUIZ_UPDATE_GOLDEN") == "1":
        recorded = dict(_recorded())
        recorded[name] = actual
        DIGESTS.write_text(json.dumps(dict(sorted(recorded.items())), indent=2) + "\n", encoding="utf-8")
        _recorded.cache_clear()
    assert _recorded().get(name) == actual, (
        f"the {name} LMS exports changed; if on purpose, QUIZ_UPDATE_GOLDEN=1 rewrites {DIGESTS.name}"
    )
