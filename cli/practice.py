"""The work of `quiz run`, `quiz review` and `quiz stats`: options in, a session or a report out.

No typer here (it is imported only to end a command with typer's `Exit`, as typer's commands end):
the options are declared in `attnquiz.practice_commands`, and `attnquiz.plain_parsing` calls
`run_practice` directly when it can parse the arguments itself. The engine and rich are imported
when a command runs.
"""

from __future__ import annotations

import enum
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attnquiz.common import fail, json_text, new_seed, print_json, user_errors

if TYPE_CHECKING:
    from attnquiz.engine.practice.exam_state import SavedExam
    from attnquiz.engine.practice.planning import Plan
    from attnquiz.engine.practice.session import Session
    from attnquiz.engine.practice.session_summary import Summary
    from attnquiz.engine.practice.store import Store
    from attnquiz.session_view import SessionView


class Solutions(enum.StrEnum):
    """When the worked solution is shown without asking."""

    always = "always"
    wrong = "wrong"
    never = "never"


def _open_store(db: Path | None, view: SessionView) -> Store | None:
    """The history, or None (with a warning) when it cannot be used: the session runs without it."""
    from attnquiz.engine.practice.history_file import StoreError
    from attnquiz.engine.practice.store import open_store

    try:
        return open_store(db)
    except StoreError as exc:
        view.warning(f"{exc}. This session runs without history.")
        return None


def _run_plan(
    plan: Plan,
    store: Store | None,
    view: SessionView,
    *,
    solutions: Solutions,
    as_json: bool,
    bank_path: str = "",
    resumed: tuple[Session, SavedExam, str] | None = None,
) -> Summary:
    """Run a session (``resumed``: an exam taken up again, the one it was, and the line being typed
    when it was left). An exam left unsubmitted to be resumed exits with 128 + its signal."""
    from attnquiz.engine.practice.session import Session
    from attnquiz.session_loop import LineReader, SessionLoop, stdin_is_terminal

    draft = ""
    if resumed is not None:
        session, saved, draft = resumed
    else:
        # Piped answers arrive all at once: their times say nothing about how well the student knows them.
        session = Session(plan, store=store, timed=stdin_is_terminal())
    keeper = None
    if plan.mode == "exam":
        from attnquiz.engine.practice.exam_state import ExamKeeper, keep

        kept = session.on_change  # a resumed exam is kept already
        keeper = kept if isinstance(kept, ExamKeeper) else keep(session, bank_path=bank_path)
    if not as_json:
        view.header(plan, history=session.history)
        if resumed is not None:
            view.resumed(saved)
    reader = LineReader(sys.stdin, interactive=stdin_is_terminal() and not as_json)
    loop = SessionLoop(
        session,
        view,
        reader,
        solutions=solutions.value,
        json_out=sys.stdout if as_json else None,
        keeper=keeper,
        draft=draft,
    )
    try:
        summary = loop.run()
    finally:
        if store is not None:
            _report_damage(store, view)
            store.close()
    if summary is None:
        import typer  # the session's end, as typer ends a command (typer is not imported before)

        from attnquiz.session_loop import left_status

        raise typer.Exit(left_status(loop.left))
    return summary


def _waiting_exams(store: Store | None, view: SessionView) -> None:
    """Say that an exam left unsubmitted is kept, and how to continue it."""
    if store is None:
        return
    from attnquiz.engine.practice.exam_state import saved_exams

    found, _problems = saved_exams(store.path)
    if found:
        others = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        view.note(
            f"An unfinished exam ({found[0].describe()}){others} is kept: quiz run --resume continues it."
        )


def _resume(
    bank: str | None, db: Path | None, view: SessionView, *, solutions: Solutions, as_json: bool
) -> Summary:
    """`quiz run --resume`: the exam most recently left unsubmitted (of ``bank``, if given), continued."""
    from attnquiz.engine.bank import finding as banks
    from attnquiz.engine.practice.exam_state import ResumeError, resume, saved_exams, set_aside
    from attnquiz.session_loop import stdin_is_terminal

    store = _open_store(db, view)
    if store is None:
        fail("--resume needs the history, where exams in progress are kept")
    try:
        found, problems = saved_exams(store.path)
        for problem in problems:
            view.warning(problem)
        if bank is not None:
            found = [e for e in found if bank in {e.bank, e.bank_ref}]
        if not found:
            of = f" of bank {bank}" if bank is not None else ""
            fail(f"there is no unfinished exam{of} to resume; start one with: quiz run week1 --exam")
        chosen = found[0]
        reference = chosen.data["bank_path"]
        loaded = banks.load(
            reference if reference and Path(reference).is_file() else chosen.bank_ref, plugins=True
        )
        try:
            session, draft = resume(chosen, loaded, store, timed=stdin_is_terminal() and not as_json)
        except ResumeError as exc:
            kept = set_aside(chosen)
            where = f"; it is kept as {kept}" if kept is not None else ""
            fail(f"{exc}{where}")
    except BaseException:
        store.close()
        raise
    if len(found) > 1:
        view.note(f"{len(found) - 1} more unfinished exam(s); quiz run BANK --resume picks one by its bank.")
    return _run_plan(
        session.plan,
        store,
        view,
        solutions=solutions,
        as_json=as_json,
        bank_path=loaded.path,
        resumed=(session, chosen, draft),
    )


def _report_damage(store: Store, view: SessionView) -> None:
    """One warning line for the history rows that could not be read (and were skipped)."""
    message = store.damage_warning()
    if message is not None:
        view.warning(message)


def _exit_for(summary: Summary) -> None:
    if summary.ended == "interrupted":
        # The conventional status of a program stopped by Ctrl-C, after the summary was shown.
        import typer

        raise typer.Exit(130)


@user_errors
def run_practice(
    bank: str | None,
    topic: str | None,
    item: list[str] | None,
    count: int | None,
    seed: int | None,
    original: bool,
    exam: bool,
    time_limit: str | None,
    solutions: Solutions,
    db: Path | None,
    no_history: bool,
    as_json: bool,
    resume: bool,
) -> None:
    """`quiz run`: a practice session (its options as `attnquiz.practice_commands` declares them)."""
    from attnquiz.engine.bank import finding as banks
    from attnquiz.engine.practice.planning import parse_duration, plan_practice
    from attnquiz.session_view import SessionView

    if resume:
        chosen = [
            name
            for name, given in (
                ("--topic", topic),
                ("--item", item),
                ("--count", count),
                ("--seed", seed),
                ("--original", original),
                ("--exam", exam),
                ("--time", time_limit),
                ("--no-history", no_history),
            )
            if given
        ]
        if chosen:
            fail(f"--resume continues an exam as it was left: drop {', '.join(chosen)}", 2)
        _resume(bank, db, SessionView(), solutions=solutions, as_json=as_json)
        return
    if bank is None:
        fail("which bank? e.g. quiz run week1 (or quiz run --resume to continue an exam)", 2)

    limit = parse_duration(time_limit) if time_limit is not None else None
    if original and seed is not None:
        fail("--original asks the papers' own questions, which have no seed: drop --seed", 2)
    chosen_seed = seed if seed is not None else new_seed()
    loaded = banks.load(bank, plugins=True)
    plan = plan_practice(
        loaded,
        seed=chosen_seed,
        bank_ref=bank,
        topic=topic,
        items=item or (),
        count=count,
        original=original,
        exam=exam,
        time_limit=limit,
    )
    view = SessionView()
    store = None if no_history else _open_store(db, view)
    if not as_json:
        _waiting_exams(store, view)
    _exit_for(_run_plan(plan, store, view, solutions=solutions, as_json=as_json, bank_path=loaded.path))


@user_errors
def review_due(
    bank: list[str] | None,
    limit: int,
    new: int,
    seed: int | None,
    solutions: Solutions,
    db: Path | None,
    as_json: bool,
) -> None:
    """`quiz review`: what is due today (its options as `attnquiz.practice_commands` declares them)."""
    from attnquiz.engine.practice.history_records import utc_now
    from attnquiz.engine.practice.planning import plan_review
    from attnquiz.session_view import SessionView

    view = SessionView()
    loaded = _load_banks(bank, view)
    store = _open_store(db, view)
    chosen_seed = seed if seed is not None else new_seed()
    try:
        plan = plan_review(loaded, store, seed=chosen_seed, now=utc_now(), limit=limit, new_per_day=new)
        if store is not None:
            _report_damage(store, view)
        if not plan.questions:
            _nothing_due(store, loaded, view, as_json=as_json, new_per_day=new)
    except BaseException:
        if store is not None:
            store.close()
        raise
    if not plan.questions:
        if store is not None:
            store.close()
        return
    _exit_for(_run_plan(plan, store, view, solutions=solutions, as_json=as_json))


def _load_banks(names: list[str] | None, view: SessionView) -> list[Any]:
    """The named banks, or every bank found (a broken one is skipped with a warning)."""
    from attnquiz.engine.bank import finding as banks
    from attnquiz.engine.errors import QuizError

    if names:
        return [banks.load(name, plugins=True) for name in names]
    loaded = []
    for found in banks.discover():
        try:
            loaded.append(banks.load(str(found.path), plugins=True))
        except QuizError as exc:
            view.warning(f"bank {found.name} is skipped: {str(exc).splitlines()[-1]}")
    if not loaded:
        fail("no bank could be loaded")
    return loaded


def _nothing_due(
    store: Store | None, loaded: list[Any], view: SessionView, *, as_json: bool, new_per_day: int
) -> None:
    """Why a review has nothing to ask, and when it will: next due card, new items left, --new."""
    from attnquiz.engine.practice import review
    from attnquiz.engine.practice.history_records import utc_now

    names = [b.name for b in loaded]
    upcoming = store.cards(names) if store is not None else []
    soonest = min((c.due for c in upcoming), default=None)
    started = {(c.bank, c.item) for c in upcoming}
    unstarted = sum((b.name, e.id) not in started for b in loaded for e in b.items)
    begun_today = store.cards_created_since(review.start_of_day(utc_now())) if store is not None else 0
    if as_json:
        # One line, like every other line `quiz review --json` prints (JSON Lines).
        sys.stdout.write(
            json_text(
                {
                    "type": "summary",
                    "due": 0,
                    "next_due": soonest.isoformat() if soonest else None,
                    "new_left": unstarted,
                    "new_per_day": new_per_day,
                }
            )
            + "\n"
        )
        return
    from attnquiz.wording import when

    if unstarted == 0:
        new_part = "every item of these banks has been started"
    elif new_per_day == 0:
        new_part = f"--new 0 asks for no new items ({unstarted} not started yet)"
    else:
        new_part = (
            f"today's {min(begun_today, new_per_day)} new items are done "
            f"({unstarted} more wait for the next days, or raise --new)"
        )
    view.note(f"Nothing is due now, and {new_part}.")
    if soonest is not None:
        view.note(f"The next review is due {when(soonest)}; quiz run practises anything meanwhile.")


@user_errors
def show_stats(
    bank: list[str] | None,
    days: int,
    db: Path | None,
    as_json: bool,
) -> None:
    """`quiz stats`: the history's report (its options as `attnquiz.practice_commands` declares them)."""
    from datetime import timedelta

    from attnquiz.engine.practice import review
    from attnquiz.engine.practice.history_file import default_path
    from attnquiz.engine.practice.history_records import bank_totals, utc_now
    from attnquiz.engine.practice.store import Store
    from attnquiz.session_view import SessionView

    path = default_path(db)
    view = SessionView()
    if not path.exists():
        if as_json:
            print_json(
                {"history": str(path), "banks": [], "topics": [], "mistakes": [], "days": [], "due": 0}
            )
        else:
            view.note(f"No history yet ({path} does not exist).")
            view.note("Start with: quiz run week1")
        return
    now = utc_now()
    with Store.open(path, explicit=db is not None) as store:
        names = bank or None
        topic_rows = store.group_stats(by_topic=True, banks=names)
        bank_rows = bank_totals(topic_rows)
        mistakes = store.mistake_stats(banks=names)
        day_rows = store.daily_stats(review.start_of_day(now) - timedelta(days=days - 1), banks=names)
        cards = store.cards(names)
        _report_damage(store, view)
    due: dict[tuple[str, str], int] = {}
    recall_sum: dict[tuple[str, str], list[float]] = {}
    for card in cards:
        key = (card.bank, card.topic)
        due[key] = due.get(key, 0) + review.is_due(card, now)
        # FSRS predicts recall in whole days, which says nothing about an item still being learnt.
        if review.in_review(card):
            recall_sum.setdefault(key, []).append(review.retrievability(card, now))
    recall = {k: sum(v) / len(v) for k, v in recall_sum.items()}
    if as_json:
        print_json(
            {
                "history": str(path),
                "banks": [
                    {**_group_json(g), "due": sum(n for (b, _), n in due.items() if b == g.bank)}
                    for g in bank_rows
                ],
                "topics": [
                    {
                        **_group_json(g),
                        "due": due.get((g.bank, g.topic or ""), 0),
                        "recall": round(recall[(g.bank, g.topic or "")], 4)
                        if (g.bank, g.topic or "") in recall
                        else None,
                    }
                    for g in topic_rows
                ],
                "mistakes": [
                    {
                        "tag": m.tag,
                        "count": m.count,
                        "topics": list(m.topics),
                        "last": m.last.isoformat() if m.last else None,
                    }
                    for m in mistakes
                ],
                "days": [
                    {
                        "day": d.day,
                        "attempts": d.attempts,
                        "unscored": d.unscored,
                        "accuracy": round(d.accuracy, 4) if d.attempts > d.unscored else None,
                    }
                    for d in day_rows
                ],
                "due": sum(due.values()),
            }
        )
        return
    view.stats(
        banks=bank_rows,
        topics=topic_rows,
        mistakes=mistakes,
        days=day_rows,
        due=due,
        recall=recall,
        history=str(path),
    )


def _group_json(group: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"bank": group.bank}
    if group.topic is not None:
        data["topic"] = group.topic
    data.update(
        attempts=group.attempts,
        correct=group.correct,
        # Concept answers are self-rated, never scored: counted apart, and no accuracy without a score.
        unscored=group.unscored,
        accuracy=round(group.accuracy, 4) if group.scored else None,
        last=group.last.isoformat() if group.last else None,
    )
    return data
