"""The Moodle XML and Canvas QTI exports of both banks, fixed by their SHA-256 digests.

The LMS writers are rebuilt on one model of a question (`attnquiz.engine.export.lms.model`); these
digests, recorded before that change, prove it changed no byte. A deliberate change of what an
export writes updates them (QUIZ_UPDATE_GOLDEN=1 rewrites the file) in a commit that says why.
The warnings each export prints are hashed too. The QTI package is hashed member by member (name
and uncompressed bytes), so the digest does not depend on the zlib that compressed it.

Numbers written with every significant digit (a Moodle answer's value, ``repr`` of a float) are
hashed at 9 significant digits: numpy's exp, log and tanh may differ in the last bit between CPUs
(its SIMD code is chosen at run time, AVX-512 or not), and such a bit is no change of the export.
The recorded Moodle digests of week 1's random variants, made on one machine, failed on an AMD EPYC
without AVX-512 at the very commit that recorded them, while every shorter text agreed.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import zipfile
from functools import cache

import pytest

from attnquiz.engine.bank import finding as banks
from attnquiz.engine.export.lms import moodle, qti
from attnquiz.engine.plan.class_plan import plan_class

from .golden import GOLDEN

DIGESTS = GOLDEN / "lms-exports.sha256.json"
CASES = [
    (bank, students, seed)
    for bank in ("week1", "week2")
    for students, seed in ((1, None), (1, 2026), (3, 2026), (5, 7))
]


# A decimal with ten or more digits after the point: only full-precision values are that long.
_FULL_PRECISION = re.compile(r"(?<![\w.])-?\d+\.\d{10,}(?:[eE][-+]?\d+)?")


def _stable(text: str) -> bytes:
    """The text with every full-precision number at 9 significant digits, as bytes to hash."""
    return _FULL_PRECISION.sub(lambda m: f"{float(m.group()):.9g}", text).encode("utf-8")


def _member(name: str, data: bytes) -> bytes:
    """A package member to hash: text members (XML, HTML, SVG) made `_stable`, others as they are."""
    if name.endswith((".xml", ".html", ".svg", ".qti")):
        return _stable(data.decode("utf-8"))
    return data


def test_stable_rounds_only_full_precision_numbers() -> None:
    assert _stable("0.2689414213699951 and 0.2689414213699952") == b"0.268941421 and 0.268941421"
    assert _stable("2.5 12 0.0051 1e-05 3.14159 x1.25") == b"2.5 12 0.0051 1e-05 3.14159 x1.25"
    assert _stable("-1.0000000000000002e-05") == b"-1e-05"


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
            canvas.update(name.encode("utf-8") + b"\0" + _member(name, archive.read(name)) + b"\0")
    return {
        "moodle": hashlib.sha256(_stable(built.text)).hexdigest(),
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
