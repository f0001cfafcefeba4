"""A session's opening and each question's heading as styled lines: drawn once, by rich or without it.

The first question of `quiz run` is what a student waits for; importing rich's console before it
cost more than a tenth of the wait (issue 43). So the session's header and a question's screen (its
rule, then the question as `attnquiz.question_lines` draws it) are drawn here on a `Writer`:
`attnquiz.session_view.SessionView` draws them without rich while it has not needed rich's console
yet and the light writer prints the very bytes rich would, and with rich everywhere else.

No rich here: this module is on the path of the first question.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attnquiz.line_breaks import NBSP
from attnquiz.question_lines import Writer, draw_question, variant_label

if TYPE_CHECKING:
    from attnquiz.engine.practice.planning import Plan
    from attnquiz.engine.practice.session import Session
    from attnquiz.engine.practice.session_state import Slot
    from attnquiz.engine.variant import Question


def keys(*pairs: str) -> str:
    """``? hint · s skip``: each command key beside its word, never "?" then "hint" when folded."""
    return " · ".join(pair.replace(" ", NBSP, 1) for pair in pairs)


PRACTICE_HELP = "Type your answer and press Enter.  " + keys("? hint", "s skip", "q quit", "h help")
EXAM_HELP = "Exam: no feedback until you submit.  " + keys(
    "n next", "b back", "g N go", "l list", "submit", "h help"
)
# Said in the exam banner: there b, n, l are commands on every question, choice questions included.
EXAM_LETTERS = "A command letter is never an answer: to choose option B alone, type (b)."


def duration(seconds: float) -> str:
    """A length of time as the session says it: ``45 s``, ``2 min 05 s``, ``1 h 05 min``."""
    total = round(seconds)
    minutes, secs = divmod(total, 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours} h {minutes:02d} min"
    if minutes:
        return f"{minutes} min {secs:02d} s" if secs else f"{minutes} min"
    return f"{secs} s"


def draw_header(out: Writer, plan: Plan, *, history: str | None) -> None:
    """The bank title, the mode, the number of questions and the seed (so the session can be repeated)."""
    out.put([(plan.title, "bold")])
    facts = [plan.mode.capitalize(), f"{len(plan)} question{'s' if len(plan) != 1 else ''}"]
    if plan.mode == "review":
        pass  # a review is chosen by what is due, so its seed repeats nothing useful
    elif any(p.seed is None for p in plan.questions):
        facts.append("the past papers' own questions")
    else:
        facts.append(f"seed {plan.seed}")
    if plan.time_limit is not None:
        facts.append(f"time {duration(plan.time_limit)}")
    out.put([(" · ".join(facts), "dim")])
    if history is None:
        out.put([("History is off for this session: answers are not saved.", "dim")])
    out.put([(EXAM_HELP if plan.mode == "exam" else PRACTICE_HELP, "dim")])
    if plan.mode == "exam":
        out.put([(EXAM_LETTERS, "dim")])


def draw_question_screen(out: Writer, session: Session, slot: Slot, question: Question) -> None:
    """A question in a session: a rule with its number and variant code, then the question."""
    title = f"Question {slot.position} of {len(session.slots)}"
    if slot.planned.reason:
        title += f" · {slot.planned.reason}"
    # The code (not the seed) is what rebuilds this variant: quiz show BANK ITEM --code CODE.
    title += f" · {variant_label(question, seed=False)}".replace(NBSP, " ")
    out.blank()
    out.rule(title)
    draw_question(out, question, variant=False, note=False)
    if session.exam and slot.answered:
        out.put([("Your answer: ", "dim"), (slot.response, "")])


__all__ = [
    "EXAM_HELP",
    "EXAM_LETTERS",
    "PRACTICE_HELP",
    "draw_header",
    "draw_question_screen",
    "duration",
    "keys",
]
