"""The class report of `quiz grade --report DIR`: what a marked class tells its instructor.

``index.html`` holds the score distribution, each question's facility (its mean score) and
discrimination (the point-biserial correlation of its score with the rest of the total, and the
facility of the top 27 % minus that of the bottom 27 %), for choice questions each option's share
(by the option's text: the letters are shuffled per variant), **each named mistake's frequency**
("38 % of the class divided by d_k instead of √d_k"), and each topic's mean. A page per student
(``students/N.html``) holds their answers, the right ones, the named mistakes explained, and the
worked solutions of their own variants, rebuilt from their variant codes. ``*.csv`` hold the same
tables for a spreadsheet. Charts are inline SVG; there is no JavaScript and nothing from the network.
Everything that comes from a bank or an answers file is escaped for HTML.

It reads `quiz grade`'s results through `attnquiz.engine.classwork.class_marks`'s public API
(`ClassMarks`, `Row`, `Cell`) only, as a `MarkedClass`: its rows are read a few times, in file
order, and never held together (a large class's rows are read back from disk), and its pages are
written as they are made.
"""

from __future__ import annotations

import csv
import io
import math
import re
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Protocol

from attnquiz.engine.answers.kinds import LETTERS, ChoiceAnswer, ExplainAnswer
from attnquiz.engine.bank.loaded import Bank
from attnquiz.engine.classwork.class_marks import AWAITS_REVIEW, Row, review_summary
from attnquiz.engine.errors import QuizError
from attnquiz.engine.seeding import ORIGINAL_CODE, seed_from_code
from attnquiz.engine.variant import Question

_PART = re.compile(r"(\d+)([a-z])\s+(\S.*)")


def column_item(column: str, ids: set[str]) -> tuple[str, str]:
    """(item id, part label or "") of a marks column: ``sdpa`` or ``3b params-chain``."""
    if column in ids:
        return column, ""
    part = _PART.fullmatch(column)
    if part is not None and part.group(3) in ids:
        return part.group(3), part.group(2)
    old = re.fullmatch(r"(.+?)\s*\(([a-z])\)", column)
    if old is not None and old.group(1) in ids:
        return old.group(1), old.group(2)
    return column, ""


@dataclass(slots=True)
class ItemStats:
    column: str
    item: str
    topic: str
    n: int
    facility: float
    point_biserial: float | None
    upper_lower: float | None
    counts: dict[str, int]
    mistakes: list[tuple[str, int, str]] = field(default_factory=list)  # tag, count, feedback
    options: list[tuple[str, bool, int]] = field(default_factory=list)  # option text, correct, chosen by


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """The correlation of two series (None when either is constant or there are fewer than 3)."""
    n = len(xs)
    if n < 3:
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sx = math.sqrt(sum((x - mx) ** 2 for x in xs))
    sy = math.sqrt(sum((y - my) ** 2 for y in ys))
    if sx == 0 or sy == 0:
        return None
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / (sx * sy)


def _question(bank: Bank, item: str, code: str) -> Question | None:
    try:
        entry = bank.get(item)
        if code.strip().lower() == ORIGINAL_CODE:
            return entry.original()
        return entry.question(seed_from_code(code))
    except QuizError:
        return None


class MarkedClass(Protocol):
    """What the report reads of a marked class: a `ClassMarks`, or a class graded as a stream whose
    rows are read back from disk (``rows`` is read several times, in file order each time)."""

    @property
    def file(self) -> str: ...

    @property
    def items(self) -> tuple[str, ...]: ...

    @property
    def rows(self) -> Iterable[Row]: ...


def _graded(marks: MarkedClass) -> Iterator[Row]:
    return (row for row in marks.rows if row.graded)


def item_stats(bank: Bank, marks: MarkedClass) -> list[ItemStats]:
    """Each column's facility, discrimination, status counts, named mistakes and option shares.

    One pass over the rows keeps, of each graded row, its total and each marked cell's score
    (numbers, not the rows); the rest is counted as the rows go."""
    ids = {entry.id for entry in bank.items}
    columns = [column_item(column, ids) for column in marks.items]
    totals: list[float] = []
    # Per column: the graded rows whose cell is marked (their index among the graded rows) and its score.
    marked: list[array[int]] = [array("l") for _ in columns]
    scores: list[array[float]] = [array("d") for _ in columns]
    counts: list[Counter[str]] = [Counter() for _ in columns]
    tags: list[Counter[str]] = [Counter() for _ in columns]
    feedback: list[dict[str, str]] = [{} for _ in columns]
    options = [_OptionShares(bank, item, label) for item, label in columns]
    for k, row in enumerate(_graded(marks)):
        totals.append(row.total)
        for index, cell in enumerate(row.cells):
            counts[index][cell.status] += 1
            if cell.status not in ("unmarked", "review"):
                marked[index].append(k)
                scores[index].append(cell.score)
            if cell.mistake:
                tags[index][cell.mistake] += 1
                feedback[index].setdefault(cell.mistake, cell.feedback)
            options[index].add(row.code, cell.response)
    ranked = sorted(range(len(totals)), key=lambda k: totals[k])
    group = max(1, round(0.27 * len(totals))) if len(totals) >= 4 else 0
    lower, upper = set(ranked[:group]), set(ranked[-group:]) if group else set()
    out: list[ItemStats] = []
    for index, (column, (item, _)) in enumerate(zip(marks.items, columns, strict=True)):
        try:
            topic = bank.get(item).topic
        except QuizError:
            topic = ""
        score_of = dict(zip(marked[index], scores[index], strict=True))
        column_scores = list(scores[index])
        facility = sum(column_scores) / len(column_scores) if column_scores else 0.0
        rest = [totals[k] - score for k, score in score_of.items()]
        pb = pearson(column_scores, rest)
        ul = None
        if group:
            up = [score_of[k] for k in upper if k in score_of]
            low = [score_of[k] for k in lower if k in score_of]
            if up and low:
                ul = sum(up) / len(up) - sum(low) / len(low)
        stats = ItemStats(column, item, topic, len(column_scores), facility, pb, ul, dict(counts[index]))
        stats.mistakes = [
            (tag, n, feedback[index][tag])
            for tag, n in sorted(tags[index].items(), key=lambda kv: (-kv[1], kv[0]))
        ]
        stats.options = options[index].shares()
        out.append(stats)
    return out


class _OptionShares:
    """How many chose each option of a choice question, by the option's text (letters are shuffled),
    counted a row at a time; none for a question that is not one for every row."""

    def __init__(self, bank: Bank, item: str, label: str) -> None:
        self.bank, self.item, self.label = bank, item, label
        self.chosen: Counter[str] = Counter()
        self.correct: dict[str, bool] = {}
        self.order: list[str] = []
        self.dead = False

    def add(self, code: str, response: str) -> None:
        """Count one graded row's answer (``code``: its variant code)."""
        if self.dead:
            return
        question = _question(self.bank, self.item, code)
        if question is None:
            self.dead = True
            return
        answer = question.answer
        if self.label:
            parts = [p for p in question.variant.parts if p.label == self.label]
            answer = parts[0].answer if parts else answer
        if not isinstance(answer, ChoiceAnswer):
            self.dead = True
            return
        for option in answer.options:
            if option.text not in self.correct:
                self.correct[option.text] = option.correct
                self.order.append(option.text)
        letters = {ch for ch in response.upper() if ch in LETTERS}
        for k, option in enumerate(answer.options):
            if LETTERS[k] in letters:
                self.chosen[option.text] += 1

    def shares(self) -> list[tuple[str, bool, int]]:
        """(option text, whether it is right, chosen by), in the order the options were first seen."""
        if self.dead:
            return []
        return [(text, self.correct[text], self.chosen[text]) for text in self.order]


# ---------------------------------------------------------------------------------------------
# HTML
# ---------------------------------------------------------------------------------------------

_STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;max-width:62rem;margin:2rem auto;
padding:0 1rem;color:#1a1a1a;line-height:1.45}
h1{font-size:1.6rem}h2{font-size:1.25rem;margin-top:2rem;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.6rem 0;font-size:.92rem}
th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f0f0f0}td.num{text-align:right;font-variant-numeric:tabular-nums}
.bar{display:inline-block;height:.7rem;background:#3465a4;vertical-align:middle}
.low{color:#a40000}.ok{color:#2e7d32}.muted{color:#555;font-size:.9rem}
.q{border:1px solid #ccc;border-radius:4px;padding:.5rem 1rem;margin:1rem 0;break-inside:avoid}
.status-correct{color:#2e7d32}.status-wrong,.status-invalid,.status-blank{color:#a40000}
.status-partial,.status-unmarked,.status-review{color:#8a5a00}
@media print{body{margin:0;max-width:none}a{color:inherit;text-decoration:none}}
"""


def _page(title: str, body: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1"><title>{escape(title)}</title>'
        f"<style>{_STYLE}</style></head><body>\n{body}\n</body></html>\n"
    )


def histogram_svg(totals: Sequence[float], out_of: float) -> str:
    """The score distribution as an inline SVG bar chart (one bar per mark band), with a text summary."""
    bins = max(1, min(20, math.ceil(out_of))) if out_of > 0 else 1
    counts = [0] * bins
    for total in totals:
        k = min(bins - 1, int(total / out_of * bins)) if out_of > 0 else 0
        counts[k] += 1
    width, height, pad = 560, 200, 30
    most = max([1, *counts])
    bar = (width - 2 * pad) / bins
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height + 30}" role="img" '
        f'aria-label="Score distribution: {escape(", ".join(str(c) for c in counts))} students per band">'
    ]
    out.append(f'<line x1="{pad}" y1="{height}" x2="{width - pad}" y2="{height}" stroke="#333"/>')
    for k, count in enumerate(counts):
        h = (height - 20) * count / most
        x = pad + k * bar
        out.append(
            f'<rect x="{x + 1:.1f}" y="{height - h:.1f}" width="{bar - 2:.1f}" height="{h:.1f}" '
            'fill="#3465a4">'
            f"<title>{count}</title></rect>"
        )
        if count:
            out.append(
                f'<text x="{x + bar / 2:.1f}" y="{height - h - 3:.1f}" font-size="11" '
                f'text-anchor="middle">{count}</text>'
            )
    for k in range(bins + 1):
        if bins <= 10 or k % 2 == 0:
            value = out_of * k / bins
            out.append(
                f'<text x="{pad + k * bar:.1f}" y="{height + 14}" font-size="11" '
                f'text-anchor="middle">{value:g}</text>'
            )
    out.append(
        f'<text x="{width / 2}" y="{height + 28}" font-size="11" text-anchor="middle">total mark</text></svg>'
    )
    return "".join(out)


def _bar(fraction: float) -> str:
    return f'<span class="bar" style="width:{max(0.0, min(1.0, fraction)) * 6:.2f}rem"></span>'


def _num(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f} %" if whole else "—"


def _student_file(row: Row) -> str:
    key = row.student or row.code or str(row.line)
    return "students/" + re.sub(r"[^A-Za-z0-9_-]", "_", key) + ".html"


def index_html(bank: Bank, marks: MarkedClass, stats: Sequence[ItemStats]) -> str:
    totals: list[float] = []
    problems = waiting = 0
    for row in marks.rows:
        if not row.graded:
            problems += 1
            continue
        totals.append(row.total)
        waiting += sum(cell.status == "review" for cell in row.cells)
    out_of = len(marks.items)
    mean = sum(totals) / len(totals) if totals else 0.0
    sd = math.sqrt(sum((t - mean) ** 2 for t in totals) / len(totals)) if totals else 0.0
    median = sorted(totals)[len(totals) // 2] if totals else 0.0
    body = [f"<h1>Class report: {escape(bank.title)}</h1>"]
    body.append(
        f"<p>{len(totals)} students graded from <code>{escape(marks.file)}</code>; "
        f"mean {mean:.2f} of {out_of} "
        f"(median {median:.2f}, standard deviation {sd:.2f}).</p>"
    )
    if problems:
        body.append(f'<p class="low">{problems} row(s) could not be graded (see the marks file).</p>')
    if waiting:
        columns = [s.column for s in stats if s.counts.get("review")]
        body.append(f'<p class="low">{escape(review_summary(waiting, columns))}</p>')
    body.append("<h2>Score distribution</h2>" + histogram_svg(totals, out_of))
    body.append("<h2>Questions</h2>")
    body.append(
        '<p class="muted">Facility: the mean score (1 = everyone right). Discrimination: the point-biserial '
        "correlation of the question's score with the rest of the total, and the facility of the top 27 % "
        "minus that of the bottom 27 %; below 0.2 the question tells strong from weak students apart "
        "poorly.</p>"
    )
    body.append(
        "<table><tr><th>question</th><th>topic</th><th>answers</th><th>facility</th><th></th>"
        "<th>point-biserial</th><th>upper − lower</th><th>right</th><th>partly</th><th>wrong</th>"
        "<th>unreadable</th><th>blank</th></tr>"
    )
    for s in stats:
        low = (
            ' class="num low"' if s.point_biserial is not None and s.point_biserial < 0.2 else ' class="num"'
        )
        c = s.counts
        body.append(
            f'<tr><td>{escape(s.column)}</td><td>{escape(s.topic)}</td><td class="num">{s.n}</td>'
            f'<td class="num">{s.facility:.2f}</td><td>{_bar(s.facility)}</td>'
            f'<td{low}>{_num(s.point_biserial)}</td><td class="num">{_num(s.upper_lower)}</td>'
            + "".join(
                f'<td class="num">{c.get(k, 0)}</td>'
                for k in ("correct", "partial", "wrong", "invalid", "blank")
            )
            + "</tr>"
        )
    body.append("</table>")
    body.append("<h2>Named mistakes</h2>")
    any_mistake = False
    for s in stats:
        if not s.mistakes:
            continue
        any_mistake = True
        body.append(f"<h3>{escape(s.column)}</h3><ul>")
        for tag, n, feedback in s.mistakes:
            body.append(
                f"<li><strong>{_pct(n, s.n)}</strong> of the class ({n} of {s.n}): "
                f"<code>{escape(tag)}</code> — "
                f"{_inline(feedback)}</li>"
            )
        body.append("</ul>")
    if not any_mistake:
        body.append("<p>No answer showed a named mistake.</p>")
    choice = [s for s in stats if s.options]
    if choice:
        body.append("<h2>Choice questions: each option's share</h2>")
        body.append('<p class="muted">By the option\'s text: each variant shuffles the letters.</p>')
        for s in choice:
            body.append(
                f"<h3>{escape(s.column)}</h3><table><tr><th>option</th><th>true?</th>"
                "<th>chosen by</th><th></th></tr>"
            )
            for text, correct, n in s.options:
                mark = '<span class="ok">true</span>' if correct else "false"
                body.append(
                    f'<tr><td>{_inline(text)}</td><td>{mark}</td><td class="num">{_pct(n, s.n)}</td>'
                    f"<td>{_bar(n / s.n if s.n else 0)}</td></tr>"
                )
            body.append("</table>")
    body.append(
        "<h2>Topics</h2><table><tr><th>topic</th><th>questions</th><th>mean facility</th><th></th></tr>"
    )
    for topic, facility, count in topic_rows(stats):
        body.append(
            f'<tr><td>{escape(topic)}</td><td class="num">{count}</td>'
            f'<td class="num">{facility:.2f}</td><td>{_bar(facility)}</td></tr>'
        )
    body.append("</table>")
    body.append("<h2>Students</h2><table><tr><th>student</th><th>name</th><th>code</th><th>total</th></tr>")
    for row in _graded(marks):
        body.append(
            f'<tr><td><a href="{escape(_student_file(row))}">{escape(row.student or "—")}</a></td>'
            f"<td>{escape(row.name)}</td><td><code>{escape(row.code)}</code></td>"
            f'<td class="num">{row.total:.2f} / {out_of}</td></tr>'
        )
    body.append("</table>")
    body.append(
        '<p class="muted">Tables as CSV: items.csv, mistakes.csv, options.csv, topics.csv, students.csv.</p>'
    )
    return _page(f"Class report: {bank.title}", "\n".join(body))


def topic_rows(stats: Sequence[ItemStats]) -> list[tuple[str, float, int]]:
    topics: dict[str, list[float]] = {}
    for s in stats:
        topics.setdefault(s.topic or "(none)", []).append(s.facility)
    return [(t, sum(v) / len(v), len(v)) for t, v in topics.items()]


def _inline(source: str) -> str:
    """Bank text (Markdown with TeX) as HTML; plain escaped text where it cannot be read as such."""
    from attnquiz.engine.export.text import html

    try:
        return html.inline_content(source)
    except (QuizError, ValueError):
        return escape(source)


def _content(source: str) -> str:
    from attnquiz.engine.export.text import html

    try:
        return html.content(source)
    except (QuizError, ValueError):
        return f"<p>{escape(source)}</p>"


def student_html(bank: Bank, marks: MarkedClass, row: Row) -> str:
    """One student's result page: each answer, the right one, the mistake explained, the worked solution."""
    ids = {entry.id for entry in bank.items}
    who = f"Student {row.student}" if row.student else f"Variant {row.code}"
    body = [f"<h1>{escape(who)}{' — ' + escape(row.name) if row.name else ''}</h1>"]
    body.append(
        f"<p>{escape(bank.title)} · variant <code>{escape(row.code)}</code> · "
        f"<strong>{row.total:.2f} of {len(marks.items)}</strong></p>"
    )
    shown: set[str] = set()
    for column, cell in zip(marks.items, row.cells, strict=True):
        item, label = column_item(column, ids)
        question = _question(bank, item, row.code)
        body.append(f'<section class="q"><h2>{escape(column)}</h2>')
        if question is not None and item not in shown:
            body.append(_content(question.variant.stem or question.variant.prompt))
        answer_text = ""
        explained = False
        solution: Sequence[str] = ()
        if question is not None:
            answer = question.answer
            solution = question.variant.solution
            if label:
                part = next((p for p in question.variant.parts if p.label == label), None)
                if part is not None:
                    body.append(_content(f"**({part.label})** {part.prompt}"))
                    answer, solution = part.answer, part.solution
            explained = isinstance(answer, ExplainAnswer)
            answer_text = answer.value if isinstance(answer, ExplainAnswer) else answer.format()
        # A model answer is Markdown; any other answer is shown as the grader writes it (``B*h*T^2`` is
        # a formula, not emphasis).
        right = (
            _inline(answer_text)
            if explained
            else f"<code>{escape(answer_text)}</code>"
            if answer_text
            else "—"
        )
        status = escape(cell.status)
        mark = f"{status}, {cell.score:.2f}"
        if cell.status == "review":  # not a mark yet, and never the scan's marker as "your answer"
            mark = escape(f"{AWAITS_REVIEW} ({cell.review})")
        shown_response = "" if cell.response == cell.review else cell.response
        given = f"<code>{escape(shown_response)}</code>" if shown_response else "<em>none</em>"
        body.append(
            "<table>"
            f"<tr><th>your answer</th><td>{given}</td></tr>"
            f"<tr><th>the right answer</th><td>{right}</td></tr>"
            f'<tr><th>mark</th><td class="status-{status}">{mark}</td></tr>'
            + (
                f"<tr><th>named mistake</th><td><code>{escape(cell.mistake)}</code>: "
                f"{_inline(cell.feedback)}</td></tr>"
                if cell.mistake
                else f"<tr><th>feedback</th><td>{_inline(cell.feedback)}</td></tr>"
            )
            + "</table>"
        )
        if solution and (label or item not in shown):
            body.append("<details open><summary>Worked solution</summary><ol>")
            body.extend(f"<li>{_inline(step)}</li>" for step in solution)
            body.append("</ol></details>")
        shown.add(item)
        body.append("</section>")
    body.append('<p class="muted"><a href="../index.html">Class report</a></p>')
    return _page(f"{who}: results", "\n".join(body))


# ---------------------------------------------------------------------------------------------
# CSV and files
# ---------------------------------------------------------------------------------------------


def _csv(rows: Sequence[Sequence[object]]) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    for row in rows:
        # A cell a spreadsheet would run as a formula is neutralised (OWASP), as marks.csv does.
        writer.writerow(["'" + c if isinstance(c, str) and c[:1] in ("=", "+", "-", "@") else c for c in row])
    return buffer.getvalue().encode("utf-8")


def report_files(bank: Bank, marks: MarkedClass) -> dict[str, bytes]:
    """Every file of the report, by its path inside the report folder."""
    return dict(report_pages(bank, marks))


def report_pages(bank: Bank, marks: MarkedClass) -> Iterator[tuple[str, bytes]]:
    """Every file of the report (its path inside the report folder, its bytes), made one at a time:
    a student's page is made when it is asked for, so a class's pages are never in memory together."""
    stats = item_stats(bank, marks)
    yield "index.html", index_html(bank, marks, stats).encode("utf-8")
    yield (
        "items.csv",
        _csv(
            [
                [
                    "question",
                    "item",
                    "topic",
                    "answers",
                    "facility",
                    "point_biserial",
                    "upper_minus_lower",
                    "correct",
                    "partial",
                    "wrong",
                    "invalid",
                    "blank",
                    "unmarked",
                    "review",
                ]
            ]
            + [
                [
                    s.column,
                    s.item,
                    s.topic,
                    s.n,
                    round(s.facility, 4),
                    "" if s.point_biserial is None else round(s.point_biserial, 4),
                    "" if s.upper_lower is None else round(s.upper_lower, 4),
                    *(
                        s.counts.get(k, 0)
                        for k in ("correct", "partial", "wrong", "invalid", "blank", "unmarked", "review")
                    ),
                ]
                for s in stats
            ]
        ),
    )
    yield (
        "mistakes.csv",
        _csv(
            [["question", "mistake", "count", "share", "feedback"]]
            + [
                [s.column, tag, n, round(n / s.n, 4) if s.n else "", feedback]
                for s in stats
                for tag, n, feedback in s.mistakes
            ]
        ),
    )
    yield (
        "options.csv",
        _csv(
            [["question", "option", "correct", "chosen_by", "share"]]
            + [
                [s.column, text, correct, n, round(n / s.n, 4) if s.n else ""]
                for s in stats
                for text, correct, n in s.options
            ]
        ),
    )
    yield (
        "topics.csv",
        _csv(
            [["topic", "questions", "mean_facility"]] + [[t, n, round(f, 4)] for t, f, n in topic_rows(stats)]
        ),
    )
    yield (
        "students.csv",
        _csv(
            [["student", "name", "code", "total", "out_of", "page"]]
            + [
                [r.student, r.name, r.code, round(r.total, 4), len(marks.items), _student_file(r)]
                for r in _graded(marks)
            ]
        ),
    )
    for row in _graded(marks):
        yield _student_file(row), student_html(bank, marks, row).encode("utf-8")


def write_report(
    bank: Bank, marks: MarkedClass, folder: Path, marks_file: tuple[Path, bytes] | None = None
) -> list[Path]:
    """Write the report into ``folder``, and the ``marks_file`` (its path and bytes) if given, as
    one set (`attnquiz.engine.classwork.report_set`): after any stop, the old set or the new one. The first
    path is ``index.html``. The files are written as they are made (`report_pages`)."""
    from attnquiz.engine.classwork.report_set import write_set

    names: list[str] = []

    def pages() -> Iterator[tuple[str, bytes]]:
        for name, data in report_pages(bank, marks):
            names.append(name)
            yield name, data

    written = write_set(folder, pages(), marks_file)
    return [written / name for name in names]


__all__ = [
    "ItemStats",
    "MarkedClass",
    "column_item",
    "histogram_svg",
    "index_html",
    "item_stats",
    "pearson",
    "report_files",
    "report_pages",
    "student_html",
    "write_report",
]
