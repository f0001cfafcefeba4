"""What a page runs that may not end (a bank's code, grading a typed response), tried first in a child.

The child is forked with a CPU-time limit (`attnquiz.web.isolation`): what it shows ends is then done
in the server; what it had to stop is said, and one request never stalls the others.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from attnquiz.engine.errors import QuizError
from attnquiz.web import isolation

if TYPE_CHECKING:
    from attnquiz.engine.grading.outcome import Grade
    from attnquiz.engine.practice.session import Session
    from attnquiz.web.state import WebSession


T = TypeVar("T")


async def vetted(work: Callable[[], T], seconds: int, what: str) -> T:
    """``work()`` (loading banks with their plugins, planning a session: their code may loop), once a
    child has shown that it ends within ``seconds`` of computing; else QuizError saying ``what`` was
    stopped. An error the child met is met again here, and raised as it is."""
    tried = await isolation.in_child(lambda: done(work()), cpu_seconds=seconds)
    if tried.kind == "stopped":
        raise QuizError(f"{what} was stopped: {tried.error}")
    return work()


async def buildable(web: WebSession, seconds: int) -> None:
    """Build the question to show in a child first, the first time it is shown, when the bank's own
    code builds it: a generator of the bank's plugins that loops would stop the whole server. A
    question whose building was stopped is left out of the session, as one whose variant fails to
    build is (`Session.show`), and said."""
    session = web.session
    while (slot := session.current) is not None and slot.question is None and slot.broken is None:
        if not _bank_code(slot.planned.entry):
            return  # quiz's own generators: bounded, and not worth a process
        tried = await isolation.in_child(lambda: done(session.show()), cpu_seconds=seconds)
        if tried.kind != "stopped":
            return
        slot.broken = f"building its variant was stopped: {tried.error}"
        web.warnings.append(f"question {slot.position} is left out: {slot.broken}")


def _bank_code(entry: Any) -> bool:
    """Whether building ``entry``'s variant runs what a bank wrote: a plugin's generator, or a formula
    item's expressions (quiz's own generators are known to end)."""
    return entry.formula is not None or not entry.spec.module.startswith("attnquiz.")


def done(_: object) -> None:
    """Nothing to send back from a child whose work was only to show that it ends."""


def _dry_answer(session: Session, response: str) -> None:
    """Grade ``response`` on a child's copy of the session, recording nothing (the copy's history is
    the server's SQLite connection, which a child must not touch)."""
    session.store = None
    session.answer(response)


async def graded(session: Session, response: str) -> Grade:
    """The grade of ``response``, after a child has graded a copy in at most `ANSWER_SECONDS` of
    computing; when it could not, the response is unreadable (it costs nothing) and says why."""
    from attnquiz.engine.grading.outcome import Grade

    seconds = isolation.ANSWER_SECONDS
    tried = await isolation.in_child(lambda: _dry_answer(session, response), cpu_seconds=seconds)
    if tried.kind == "done":
        return session.answer(response)  # the grader bounds what it reads, and says how long it was
    reason = (
        f"This answer was not graded: reading it {tried.error.removeprefix('it ')}."
        if tried.kind == "stopped"
        else f"This answer could not be graded ({tried.error})."
    )
    advice = "Write it more simply (a number, or a short formula)."
    return Grade("invalid", 0.0, f"{reason} {advice}", None, "")


__all__ = ["buildable", "done", "graded", "vetted"]
