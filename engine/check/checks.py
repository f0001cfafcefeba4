"""The checks of ``quiz check``: every item of a bank over many seeds, as a report (no terminal output).

For each item, the variants of seeds ``0 .. N-1`` (and the past paper's own instance, when the
item has one) are built and checked the way a student and an instructor will use them:

- the variant builds, and building it again gives the same variant (deterministic);
- the answer is finite, and typing the answer as the key writes it grades correct;
- each listed mistake, typed as the key writes it, grades as that mistake, and no mistake of a
  formula item gives the answer itself (that variant could not tell it from the right method);
- a response just beyond the tolerance grades wrong, and an unreadable one is invalid;
- a choice variant has a true and a false option, and no statement twice;
- every renderer succeeds: the terminal's, and the Markdown, HTML, Typst (source) and Moodle XML
  exports; every figure is laid out for the terminal at 40 and 80 columns, its SVG parses and its
  Typst drawing compiles;
- distinct variants are counted (a family of one is a warning, not a failure);
- a formula item's every combination of parameters is built when there are at most 20,000, else
  every combination of their extremes (the report then says it sampled);
- a statement group with one member is a warning (usually a misspelt group name).

A bank with plugins is checked in a child process with a time limit (`attnquiz.engine.check.child`
starts it, `attnquiz.engine.check.worker` runs in it).

Failures are grouped by check, each with the first seed that reproduces it and how many
variants failed that way.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import difflib
import functools
import re
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Literal

from attnquiz.engine.answers.kinds import (
    Answer,
    ChoiceAnswer,
    CodeAnswer,
    ExplainAnswer,
    IntegerAnswer,
    MatrixAnswer,
    NumericAnswer,
    PartsAnswer,
    ShapeAnswer,
    VectorAnswer,
    is_finite,
)
from attnquiz.engine.bank.loaded import Bank, BankItem

# The report's types are re-exported: callers know them as this module's.
from attnquiz.engine.check.report import BankReport as BankReport
from attnquiz.engine.check.report import Failure as Failure
from attnquiz.engine.check.report import ItemReport as ItemReport
from attnquiz.engine.check.report import Progress as Progress
from attnquiz.engine.errors import BankError, Issue, QuizError
from attnquiz.engine.extras import unavailable
from attnquiz.engine.formula.items import MAX_COMBINATIONS, Combination, Formula, FormulaError
from attnquiz.engine.formula.values import ExpressionError
from attnquiz.engine.markup import markdown as md
from attnquiz.engine.markup import plain
from attnquiz.engine.markup import tex as markup
from attnquiz.engine.seeding import question_rng
from attnquiz.engine.variant import Question

DEFAULT_VARIANTS = 100
INVALID_RESPONSE = "#?"
"""A response no answer kind can read."""


class _Failures:
    """Failures grouped by (check, key): the first message and seed, and a count."""

    def __init__(self) -> None:
        self._groups: dict[tuple[str, str], Failure] = {}

    def add(
        self, check: str, message: str, seed: int | None, key: str = "", *, original: bool | None = None
    ) -> None:
        """Count a failure; ``seed`` None is the original unless ``original`` says otherwise."""
        group = (check, key)
        first = self._groups.get(group)
        if first is None:
            self._groups[group] = Failure(
                check, message, seed, original=seed is None if original is None else original
            )
        else:
            self._groups[group] = dataclasses.replace(first, count=first.count + 1)

    def has(self, check: str, key: str = "") -> bool:
        return (check, key) in self._groups

    def messages(self, check: str) -> list[str]:
        return [f.message for (name, _), f in self._groups.items() if name == check]

    def listed(self) -> list[Failure]:
        return list(self._groups.values())


# ---------------------------------------------------------------------------------------------
# Running the checks
# ---------------------------------------------------------------------------------------------


TIME_LIMIT = 5.0
"""Seconds a bank's plugins may take to import, and each generation of a plugin's variant, in
``quiz check`` (a generation normally takes well under a millisecond)."""


def check_path(
    name_or_path: str,
    variants: int = DEFAULT_VARIANTS,
    progress: Progress | None = None,
    time_limit: float = TIME_LIMIT,
    jobs: int = 1,
) -> BankReport:
    """Find, load and check a bank; load errors (all of them) make a report of their own.

    A bank with plugins is checked in a child process (see `attnquiz.engine.check.child`): its
    code may loop or sleep, and ``time_limit`` bounds its import and each generation. Any other
    bank's items are checked ``jobs`` at a time (`attnquiz.engine.parallel`).

    Raises:
        BankNotFoundError: no bank of that name or path.
    """
    from attnquiz.engine.bank import finding as banks

    found = banks.find(name_or_path)
    try:
        bank = banks.load(name_or_path)  # without importing plugins: that happens in the child
    except BankError as exc:
        return BankReport(
            bank=found.name, path=exc.file, variants=variants, errors=list(exc.issues), source=exc.source
        )
    if bank.plugins:
        from attnquiz.engine.check.child import check_in_child

        return check_in_child(name_or_path, bank, variants, progress, time_limit)
    return check_bank(bank, variants, progress, jobs=jobs)


def check_bank(
    bank: Bank,
    variants: int = DEFAULT_VARIANTS,
    progress: Progress | None = None,
    *,
    start: int = 0,
    on_item: Callable[[ItemReport], None] | None = None,
    jobs: int = 1,
) -> BankReport:
    """Check every item of a loaded bank over the seeds ``0 .. variants-1`` (and its original).

    ``start``: the index of the first item checked; ``on_item`` receives each item's report at once;
    ``jobs``: items checked at once, each in a worker process (the report is the same, in bank order).
    """
    from attnquiz.engine.parallel import ordered_map

    if variants < 1:
        raise QuizError(f"--variants must be at least 1, not {variants}")
    report = BankReport(bank=bank.name, path=bank.path, variants=variants, title=bank.title)
    indexes = range(start, len(bank.items))
    checked = ordered_map(_check_at, (bank, variants), indexes, jobs=jobs)
    for done, (index, item_report) in enumerate(zip(indexes, checked, strict=True), start + 1):
        report.items.append(item_report)
        if on_item is not None:
            on_item(item_report)
        if progress is not None:
            progress(done, len(bank.items), bank.items[index].id)
    if any(item.kind == "code" for item in report.items):
        from attnquiz.engine.code.sandbox import environment

        report.environment = environment()
    return report


def _check_at(work: tuple[Bank, int], index: int) -> ItemReport:
    """The report of the bank's item at ``index`` (a task of `check_bank`, maybe in a worker)."""
    bank, variants = work
    return check_item(bank, bank.items[index], variants)


def check_item(bank: Bank, entry: BankItem, variants: int = DEFAULT_VARIANTS) -> ItemReport:
    """Check one item over the seeds ``0 .. variants-1`` and its original."""
    report = ItemReport(
        item=entry.id,
        kind="formula"
        if entry.formula is not None
        else "explain"
        if entry.explain is not None
        else "generator",
        generator=entry.spec.name,
    )
    failures = _Failures()
    if entry.explain is not None:
        return _check_explain(bank, entry, report, failures)
    built: list[Question] = []
    if entry.has_original:
        original = _build(entry, None, failures)
        if original is not None:
            report.original = True
            _check_question(entry, original, failures)
            built.append(original)
    distinct: set[tuple[Any, ...]] = set()
    for seed in range(variants):
        question = _build(entry, seed, failures)
        if question is None:
            continue
        report.variants += 1
        if isinstance(question.answer, CodeAnswer):
            report.kind = "code"
        _check_question(entry, question, failures)
        distinct.add(_identity(question))
        built.append(question)
    _check_renderers(bank, built, failures)
    if entry.formula is not None:
        report.combinations = _check_combinations(entry, entry.formula, variants, failures)
        if report.combinations is None:
            report.boundaries = _check_boundaries(entry, entry.formula, variants, failures)
            report.warnings.append(
                f"more than {MAX_COMBINATIONS:,} combinations of its parameters: sampled "
                f"{variants} seeds and the {report.boundaries:,} combinations of its ranges' and choices' "
                "extremes instead of trying every combination"
            )
    report.warnings.extend(_lonely_groups(entry))
    if entry.unavailable:
        report.warnings.append(
            f"{entry.unavailable}: checked without running its reference in the sandbox, and not "
            "offered by quiz run"
        )
    report.distinct = len(distinct)
    report.failures = failures.listed()
    if report.variants > 1 and report.distinct == 1:
        report.warnings.append(
            f"all {report.variants} seeds give the same question: vary the parameters so that a student "
            "who practises it again meets new numbers"
        )
    return report


def _check_explain(bank: Bank, entry: BankItem, report: ItemReport, failures: _Failures) -> ItemReport:
    """A concept question: one instance (every seed gives the original), never scored, every text in
    the supported Markdown and TeX, rendered by every renderer."""
    from attnquiz.engine.grading.grade import grade

    original = _build(entry, None, failures)
    seeded = _build(entry, 0, failures)
    built = [q for q in (original, seeded) if q is not None]
    if original is not None:
        report.original = True
    if seeded is not None:
        report.variants = 1
    if original is not None and seeded is not None and original.variant != seeded.variant:
        failures.add("deterministic", "a seed gives another question than the original", 0)
    for question in built:
        if not isinstance(question.answer, ExplainAnswer):
            failures.add("explain", f"the answer is {question.answer.kind}, not explain", question.seed)
            continue
        for response in (question.answer.format(), INVALID_RESPONSE, ""):
            status = grade(question, response).status
            if status != "unscored":
                failures.add(
                    "unscored", f"the response {response!r} grades {status}, not unscored", question.seed
                )
        for text in question.variant.texts():
            try:
                md.check(text)
            except markup.MarkupError as exc:
                failures.add("markup", str(exc), question.seed)
    _check_renderers(bank, built, failures)
    report.distinct = 1 if built else 0
    report.failures = failures.listed()
    return report


BuildGuard = Callable[[BankItem, int | None], AbstractContextManager[object]]
"""Wraps each generation (a time limit, in the child process that checks a bank with plugins)."""


def _no_guard(entry: BankItem, seed: int | None) -> AbstractContextManager[object]:
    return contextlib.nullcontext()


BUILD_GUARD: contextvars.ContextVar[BuildGuard] = contextvars.ContextVar("BUILD_GUARD", default=_no_guard)
"""What wraps each generation here: nothing, unless a checker sets it (the child process of
`attnquiz.engine.check.worker`, with its time limit)."""


def _lonely_groups(entry: BankItem) -> list[str]:
    """A statement ``group`` with one member: a group holds versions of one claim, so a group of one
    is almost always a misspelt group name (and the statements it should keep apart may meet)."""
    from attnquiz.engine.generators.statements import Pool

    warnings = []
    for name, value in entry.kwargs.items():
        if not isinstance(value, Pool):
            continue
        members: dict[str, list[int]] = {}
        for index, statement in enumerate(value.root):
            if statement.group is not None:
                members.setdefault(statement.group, []).append(index)
        for group, indexes in members.items():
            if len(indexes) == 1:
                others = sorted(set(members) - {group})
                close = difflib.get_close_matches(group, others, n=1, cutoff=0.6)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                warnings.append(
                    f"params.{name}[{indexes[0]}]: group {group!r} has only this statement{hint}: a group "
                    "holds versions of one claim, so a group of one is usually a misspelt name"
                )
    return warnings


def _build(entry: BankItem, seed: int | None, failures: _Failures) -> Question | None:
    try:
        with BUILD_GUARD.get()(entry, seed):
            first = entry.original() if seed is None else entry.question(seed)
        with BUILD_GUARD.get()(entry, seed):
            again = entry.original() if seed is None else entry.question(seed)
    except QuizError as exc:
        failures.add("generate", str(exc), seed)
        return None
    if first != again:
        failures.add("deterministic", "building the same variant twice gives two different questions", seed)
    return first


def _identity(question: Question) -> tuple[Any, ...]:
    answer = question.answer
    options = tuple(o.text for o in answer.options) if isinstance(answer, ChoiceAnswer) else ()
    return (question.variant.prompt, answer.format(), options)


def _check_question(entry: BankItem, question: Question, failures: _Failures) -> None:
    from attnquiz.engine.grading.grade import grade

    seed = question.seed
    answer = question.answer
    if isinstance(answer, CodeAnswer):
        _check_code(answer, seed, failures)
        return
    if not is_finite(answer):
        failures.add("finite", f"the answer {answer.format()} is not a finite number", seed)
        return
    key = answer.format()
    graded = grade(question, key)
    if graded.status != "correct":
        message = f"the answer as the key writes it, {key}, grades {graded.status}: {graded.feedback}"
        failures.add("correct", message, seed)
    for mistake in question.variant.mistakes:
        typed = mistake.format(answer)
        result = grade(question, typed)
        named = result.mistake.tag if result.mistake is not None else None
        if named != mistake.tag:
            as_what = f"as {named!r}" if named else result.status
            failures.add(
                "mistake",
                f"mistake {mistake.tag!r}: typing {typed} grades {as_what}, not as {mistake.tag!r}",
                seed,
                mistake.tag,
            )
        if answer.matches(mistake.value):
            failures.add("mistake", f"mistake {mistake.tag!r} gives the answer itself", seed, mistake.tag)
    if entry.formula is not None:
        instance = entry.formula.instance(
            question_rng(seed if seed is not None else 0, entry.bank, entry.id),
            entry.original_kwargs if seed is None and entry.original_kwargs is not None else {},
        )
        for tag in instance.coinciding:
            issue = entry.formula.coinciding_issue(tag, seed, instance)
            failures.add("mistake", str(issue), seed, tag)
        for key, message in _duplicate_mistakes(question):
            spec = next((m for m in entry.formula.mistakes if m.key == key), None)
            if spec is not None:  # a mistake of the bank's own (not one a generator adds)
                error = entry.formula.error((*spec.loc, "value"), message, instance.values)
                failures.add("mistake", str(error.issue(seed)), seed, key)
    nudged = _nudged(answer)
    if nudged is not None:
        result = grade(question, nudged)
        if result.status in {"correct", "invalid"}:
            failures.add(
                "nudge",
                f"{nudged}, beyond the tolerance of the answer {key}, grades {result.status}",
                seed,
            )
    invalid = grade(question, INVALID_RESPONSE)
    if invalid.status != "invalid":
        failures.add("invalid", f"the unreadable response {INVALID_RESPONSE!r} grades {invalid.status}", seed)
    if isinstance(answer, ChoiceAnswer):
        _check_options(answer, seed, failures)
    if isinstance(answer, PartsAnswer):  # each part like an item, and its error carried forward
        from attnquiz.engine.check.parts import part_problems

        for check, message, key in part_problems(answer):
            failures.add(check, message, seed, key)


def _check_code(answer: CodeAnswer, seed: int | None, failures: _Failures) -> None:
    """A code variant: the reference is right on its tests and each mutant is named as itself (computed
    in this process: they are quiz's code); on the first seed, the reference also runs in the sandbox
    as a student's code does and must grade correct, where the packages it needs are installed."""
    from attnquiz.engine.code import grading as code_grading
    from attnquiz.engine.code.tasks import task

    for problem in code_grading.checked(answer):
        failures.add("code", problem, seed)
    if seed == 0 and not unavailable(task(answer.task).needs):  # without PyTorch: a warning says so
        verdict = code_grading.grade_code(answer, answer.reference)
        if verdict.status != "correct":
            failures.add(
                "sandbox",
                f"the reference run in the sandbox grades {verdict.status}: {verdict.feedback}",
                seed,
            )


def _duplicate_mistakes(question: Question) -> list[tuple[str, str]]:
    """(key, message) of each mistake the variant dropped because an earlier one has its value: it
    can never be named, so its author should merge the two or tell them apart."""
    variant = question.variant
    out: list[tuple[str, str]] = []
    for label, tag, earlier in variant.duplicates:
        answer: Answer = variant.answer
        kept = variant.mistakes
        if label:
            part = next(p for p in variant.parts if p.label == label)
            answer, kept = part.answer, part.mistakes
        first = next(m for m in kept if m.tag == earlier)
        key = tag if not label else f"({label}) {tag}"
        out.append(
            (
                key,
                f"mistake {tag!r} has the value of mistake {earlier!r} ({first.format(answer)}), so it is "
                f"never named (a wrong answer is named by the first mistake that gives it); give it a "
                "value of its own, or merge the two",
            )
        )
    return out


def _beyond(answer: NumericAnswer | VectorAnswer | MatrixAnswer, value: float) -> str:
    # Three half-widths out: still beyond the tolerance once written at the precision asked for.
    width = answer.tolerance.half_width(value)
    step = 3 * width if width > 0 else max(1.0, abs(value) * 0.01)
    return answer.tolerance.format(value + step)


def _nudged(answer: Answer) -> str | None:
    """A response just beyond the answer's tolerance (None where the kind has no tolerance to test)."""
    if isinstance(answer, IntegerAnswer):
        return str(answer.value + 1)
    if isinstance(answer, NumericAnswer):
        return _beyond(answer, answer.value)
    if isinstance(answer, VectorAnswer):
        first, *rest = answer.values
        return "[" + ", ".join([_beyond(answer, first), *(answer.tolerance.format(v) for v in rest)]) + "]"
    if isinstance(answer, MatrixAnswer):
        rows = [[answer.tolerance.format(v) for v in row] for row in answer.rows]
        rows[0][0] = _beyond(answer, answer.rows[0][0])
        return "[" + ", ".join("[" + ", ".join(row) + "]" for row in rows) + "]"
    if isinstance(answer, ShapeAnswer):
        dims = [str(d) for d in answer.dims]
        numeric = [i for i, d in enumerate(answer.dims) if isinstance(d, int)]
        if not numeric:
            return None
        dims[numeric[0]] = str(int(answer.dims[numeric[0]]) + 1)
        return "[" + ", ".join(dims) + "]"
    if not isinstance(answer, ChoiceAnswer):
        return None  # a kind with no tolerance to step beyond
    wrong = [letter for letter, o in zip(answer.letters, answer.options, strict=True) if not o.correct]
    if not wrong:
        return None
    if not answer.multiple:
        return wrong[0]
    return ", ".join(sorted(answer.correct_letters | {wrong[0]}))


def _same_wording(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().rstrip(".").casefold()


def _check_options(answer: ChoiceAnswer, seed: int | None, failures: _Failures) -> None:
    if not any(o.correct for o in answer.options):
        failures.add("options", "no option is true", seed)
    if all(o.correct for o in answer.options):
        failures.add("options", "every option is true: there is nothing to rule out", seed)
    seen: dict[str, str] = {}
    for letter, option in zip(answer.letters, answer.options, strict=True):
        wording = _same_wording(option.text)
        if wording in seen:
            failures.add("options", f"options {seen[wording]} and {letter} say the same thing", seed)
        seen.setdefault(wording, letter)


# ---------------------------------------------------------------------------------------------
# Every combination of a formula's parameters
# ---------------------------------------------------------------------------------------------

SEED_SEARCH = 20_000
"""Seeds beyond those checked that are searched for one drawing a failing combination."""


def _check_combinations(entry: BankItem, formula: Formula, variants: int, failures: _Failures) -> int | None:
    """Build the variant of every combination of the parameters, when they are few enough to list.

    The seeds show what students will mostly meet; this shows that no combination, however rare,
    breaks an expression, gives a mistake the answer's value, or writes TeX outside the subset.
    Returns the number of combinations (None: too many to list).
    """
    combinations = formula.combinations()
    if combinations is None:
        return None
    _check_each(entry, formula, combinations, variants, failures)
    return len(combinations)


def _check_boundaries(entry: BankItem, formula: Formula, variants: int, failures: _Failures) -> int:
    """Build the variants of every combination of the parameters' extremes (see `Param.extremes`)
    that meets the conditions: where a rare division by zero or overflow usually hides.
    Returns how many were tried."""
    combinations = boundary_combinations(formula)
    _check_each(entry, formula, combinations, variants, failures)
    return len(combinations)


MAX_BOUNDARIES = 4096
"""At most this many combinations of extremes are tried (2 ends each of 12 drawn parameters)."""


def boundary_combinations(formula: Formula, limit: int = MAX_BOUNDARIES) -> list[Combination]:
    """Every combination of the parameters' extremes that meets the ``where:`` conditions (those
    an expression fails for carry the error), in order; at most ``limit``."""
    found: list[Combination] = []

    def walk(index: int, values: dict[str, Any]) -> None:
        if len(found) >= limit:
            return
        if index == len(formula.params):
            try:
                if formula._failed_condition(values) is None:
                    found.append(Combination(dict(values)))
            except FormulaError as exc:
                found.append(Combination(dict(values), exc))
            return
        param = formula.params[index]
        try:
            options = param.extremes(values)
        except ExpressionError as exc:
            found.append(Combination(dict(values), formula.error(param.loc, str(exc), values)))
            return
        for option in options:
            values[param.name] = option
            walk(index + 1, values)
        values.pop(param.name, None)

    walk(0, {})
    return found


def _check_each(
    entry: BankItem, formula: Formula, combinations: Sequence[Combination], variants: int, failures: _Failures
) -> None:
    """Build each combination's variant; each problem is a failure with a seed that draws it, if any."""
    generated = failures.messages("generate")
    for combination in combinations:
        for check, key, issue in _problems(formula, combination):
            first = issue("unknown")
            if failures.has(check, key):
                failures.add(check, first.message, None, key)  # one more variant failing a known way
                continue
            if any(m.startswith(f"{first.file}:{first.line}: {first.field}:") for m in generated):
                continue  # the seeds already found this expression failing
            seed = formula.drawn_by(combination.values, entry.bank, range(variants, variants + SEED_SEARCH))
            text = str(issue(seed) if seed is not None else first)
            if seed is None:
                last = variants + SEED_SEARCH - 1
                text += f" (no seed up to {last:,} draws these values, but a student may meet them)"
            failures.add(check, text, seed, key, original=False)


Seed = int | Literal["unknown"] | None


def _problems(formula: Formula, combination: Combination) -> list[tuple[str, str, Callable[[Seed], Issue]]]:
    """What goes wrong for one combination: (check, group key, the problem for a given seed)."""
    error = combination.error
    if error is None:
        try:
            instance = formula.build(combination.values)
        except FormulaError as exc:
            error = exc
    if error is not None:
        return [("combination", error.field, error.issue)]
    found: list[tuple[str, str, Callable[[Seed], Issue]]] = [
        ("mistake", tag, functools.partial(formula.coinciding_issue, tag, instance=instance))
        for tag in instance.coinciding
    ]
    markup_issue = formula.markup_issue(instance, "unknown")
    if markup_issue is not None:
        found.append(
            (
                "combination",
                markup_issue.field,
                lambda seed: formula.markup_issue(instance, seed) or markup_issue,
            )
        )
    return found


# ---------------------------------------------------------------------------------------------
# Renderers
# ---------------------------------------------------------------------------------------------


def _terminal(questions: Sequence[Question]) -> None:
    for question in questions:
        for text in question.variant.texts():
            md.check(text)
            plain.to_terminal(text)
        if question.variant.figures:
            from attnquiz.engine.export.figures.text import figure_lines

            for figure in question.variant.figures:
                for width in (40, 80):  # a narrow terminal and a usual one
                    figure_lines(figure, width)


def _figures(questions: Sequence[Question]) -> None:
    """Every figure as an SVG file that parses (what HTML, Moodle and QTI show) and as Typst that
    compiles (one document for the batch: the worksheets' Typst is checked as source only)."""
    drawn = [figure for question in questions for figure in question.variant.figures]
    if not drawn:
        return
    import xml.etree.ElementTree as ET

    from attnquiz.engine.export.figures import svg as figure_svg
    from attnquiz.engine.export.figures import typst as figure_typst
    from attnquiz.engine.export.pdf.worksheets import compile_typst

    kinds: dict[tuple[Any, ...], Any] = {}
    for figure in drawn:
        ET.fromstring(figure_svg.svg_file(figure))
        source = figure_typst.figure(figure)
        # Figures alike but for their numbers (which are written as digits) compile alike: one of each.
        kinds.setdefault(_figure_form(figure), source)
    compile_typst("\n".join(kinds.values()))


def _figure_form(figure: Any) -> tuple[Any, ...]:
    """What a figure's Typst depends on besides its numbers: its kind, size, texts and mask."""
    texts = tuple(getattr(figure, name, "") for name in ("title", "caption", "row_title", "col_title"))
    if figure.kind == "heatmap":
        return ("heatmap", texts, tuple(figure.rows), tuple(figure.cols), figure.mask, figure.masked_text)
    return (
        "line",
        texts,
        figure.x_label,
        figure.y_label,
        len(figure.x),
        tuple(s.label for s in figure.series),
    )


def _renderers() -> dict[str, Callable[[Bank, Sequence[Question]], object]]:
    from attnquiz.engine.export.lms import moodle
    from attnquiz.engine.export.pdf import typst
    from attnquiz.engine.export.text import html, markdown

    def sheets(bank: Bank, questions: Sequence[Question]) -> Any:
        from attnquiz.engine.plan.class_plan import ClassPlan, Sheet

        original = all(q.is_original for q in questions)
        return ClassPlan(
            bank=bank.name,
            title=bank.title,
            master_seed=None if original else 0,
            items=(questions[0].item_id,),
            sheets=tuple(Sheet(n, q.seed, q.code, (q,)) for n, q in enumerate(questions, 1)),
        )

    def both(module: Any) -> Callable[[Bank, Sequence[Question]], object]:
        def run(bank: Bank, questions: Sequence[Question]) -> object:
            plan = sheets(bank, questions)
            return (module.worksheets(plan, plan.sheets), module.key(plan, plan.sheets))

        return run

    return {
        "terminal": lambda bank, questions: _terminal(questions),
        "markdown": both(markdown),
        "html": both(html),
        "typst": both(typst),
        "moodle": lambda bank, questions: [moodle.question_xml(q) for q in questions],
        "figures": lambda bank, questions: _figures(questions),
    }


def _check_renderers(bank: Bank, questions: Sequence[Question], failures: _Failures) -> None:
    """Render the variants in one batch per renderer; on a failure, one by one to find the seed."""
    if not questions:
        return
    for name, render in _renderers().items():
        batches = [[q for q in questions if q.is_original], [q for q in questions if not q.is_original]]
        for batch in filter(None, batches):
            if _render_error(render, bank, batch) is None:
                continue
            for question in batch:
                error = _render_error(render, bank, [question])
                if error is not None:
                    failures.add(f"render:{name}", f"the {name} renderer fails: {error}", question.seed)


def _render_error(
    render: Callable[[Bank, Sequence[Question]], object], bank: Bank, questions: Sequence[Question]
) -> str | None:
    """Why rendering fails (None when it succeeds)."""
    try:
        render(bank, questions)
    except Exception as exc:  # a renderer bug of any kind is a failure to report, with its seed
        return f"{type(exc).__name__}: {exc}"
    return None


__all__ = [
    "DEFAULT_VARIANTS",
    "BankReport",
    "Failure",
    "ItemReport",
    "check_bank",
    "check_item",
    "check_path",
]
