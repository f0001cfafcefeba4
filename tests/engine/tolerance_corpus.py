"""Typed values at and around the edges of every numeric item's tolerance, and their grades.

``python -m tests.engine.tolerance_corpus build FILE`` writes the corpus (the responses, as text);
``python -m tests.engine.tolerance_corpus grade FILE`` grades it in this process, with whatever
numpy/BLAS settings its environment has, and prints the grades' digest as JSON. The corpus is built
once and graded under each setting, so that the same text meets every build of the reference
numerics.
"""

from __future__ import annotations

import hashlib
import json
import sys
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path
from typing import Any

from attnquiz.engine.answers.kinds import MatrixAnswer, NumericAnswer, PartsAnswer, SingleAnswer, VectorAnswer
from attnquiz.engine.answers.tolerance import Tolerance
from attnquiz.engine.bank.finding import load
from attnquiz.engine.grading.grade import grade_answer

SEEDS = range(30)
BANKS = ("week1", "week2")
Response = tuple[str, str, int, int, str, str]
"""(bank, item, seed, part index (-1 for a question of one part), response, kind of offset)."""


def _numeric_parts(answer: Any) -> list[tuple[int, SingleAnswer]]:
    if isinstance(answer, PartsAnswer):
        found = [(i, p.answer) for i, p in enumerate(answer.parts)]
    else:
        found = [(-1, answer)]
    return [
        (i, a)
        for i, a in found
        if isinstance(a, NumericAnswer | VectorAnswer | MatrixAnswer)
        and a.tolerance.mode in {"decimals", "sigfigs"}
    ]


def _width(tolerance: Tolerance, settled: Decimal) -> Decimal:
    """The stated half width, 0.51 units of the last place asked for, at the settled target."""
    if tolerance.mode == "sigfigs" and settled != 0:
        return Decimal("0.51").scaleb(settled.adjusted() - tolerance.places + 1)
    return Decimal("0.51").scaleb(-tolerance.places)


def _settled(value: float) -> Decimal:
    """The target to 12 significant digits, as a key printed on one machine carries it."""
    exact = Decimal(repr(float(value)))
    if value == 0:
        return exact
    return exact.quantize(Decimal(1).scaleb(exact.adjusted() - 11), rounding=ROUND_HALF_EVEN)


def _entry_texts(tolerance: Tolerance, value: float) -> dict[str, str]:
    """One entry typed at each kind of offset from the target."""
    settled = _settled(value)
    key = Decimal(tolerance.format(value))
    width = _width(tolerance, settled)
    sliver = width.scaleb(-4)
    out: dict[str, str] = {}
    for sign, name in ((1, "+"), (-1, "-")):
        out[f"edge{name}"] = f"{settled + sign * width:f}"  # exactly at the stated edge: right
        out[f"beyond{name}"] = f"{settled + sign * (width + sliver):f}"  # just outside: wrong
        out[f"within{name}"] = f"{settled + sign * (width - sliver):f}"
        out[f"key-edge{name}"] = f"{key + sign * width:f}"  # the key's digits at the edge (1.5749)
    return out


def _joined(answer: SingleAnswer, entries: list[str]) -> str:
    if isinstance(answer, NumericAnswer):
        return entries[0]
    if isinstance(answer, VectorAnswer):
        return "[" + ", ".join(entries) + "]"
    assert isinstance(answer, MatrixAnswer)
    _, columns = answer.shape
    rows = [entries[i : i + columns] for i in range(0, len(entries), columns)]
    return "; ".join(" ".join(row) for row in rows)


def _values(answer: SingleAnswer) -> list[float]:
    if isinstance(answer, NumericAnswer):
        return [answer.value]
    if isinstance(answer, VectorAnswer):
        return list(answer.values)
    assert isinstance(answer, MatrixAnswer)
    return [v for row in answer.rows for v in row]


def build() -> list[Response]:
    """Every numeric answer (or part) of both banks, over `SEEDS`, typed at each kind of offset
    (every entry of a vector or matrix at the same offset)."""
    corpus: list[Response] = []
    for name in BANKS:
        bank = load(name)
        for entry in bank.items:
            for seed in SEEDS:
                answer = entry.question(seed).answer
                targets = _numeric_parts(answer)
                if not targets:
                    break
                for index, single in targets:
                    per_entry = [_entry_texts(single.tolerance, v) for v in _values(single)]
                    for kind in per_entry[0]:
                        text = _joined(single, [texts[kind] for texts in per_entry])
                        corpus.append((name, entry.id, seed, index, text, kind))
    return corpus


def grade(corpus: list[Response]) -> dict[str, Any]:
    """The grades of the corpus: a digest of every (status, score, mistake), and counts per offset."""
    digest = hashlib.sha256()
    counts: dict[str, dict[str, int]] = {}
    loaded = {name: load(name) for name in BANKS}
    questions: dict[tuple[str, str, int], Any] = {}
    for name, item, seed, index, text, kind in corpus:
        key = (name, item, seed)
        if key not in questions:
            questions[key] = loaded[name].get(item).question(seed)
        question = questions[key]
        answer = question.answer
        if isinstance(answer, PartsAnswer):
            part = answer.parts[index]
            result = grade_answer(part.answer, text, part.mistakes)
        else:
            result = grade_answer(answer, text, question.variant.mistakes)
        tag = result.mistake.tag if result.mistake is not None else ""
        digest.update(f"{name}|{item}|{seed}|{index}|{text}|{result.status}|{result.score}|{tag}\n".encode())
        counted = counts.setdefault(kind, {})
        counted[result.status] = counted.get(result.status, 0) + 1
    return {"digest": digest.hexdigest(), "counts": counts, "size": len(corpus)}


def main(argv: list[str]) -> None:
    command, file = argv
    path = Path(file)
    if command == "build":
        path.write_text(json.dumps(build()), encoding="utf-8")
    else:
        corpus: list[Response] = [
            (str(b), str(i), int(s), int(p), str(t), str(k))
            for b, i, s, p, t, k in json.loads(path.read_text(encoding="utf-8"))
        ]
        print(json.dumps(grade(corpus)))


if __name__ == "__main__":
    main(sys.argv[1:])
