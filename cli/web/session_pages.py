"""A session's pages: the question and its buttons, the feedback on an answer, and the summary.

The question's page answers, skips, gives a hint, says how an answer reads and takes a concept
answer's rating; the feedback offers another variant of an item missed and a rating of a guess; the
summary offers the session again with fresh variants. An exam's own moves are in `exam_pages`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from attnquiz.engine.bank import finding as bank_files
from attnquiz.engine.errors import QuizError
from attnquiz.engine.typed_numbers import whole
from attnquiz.web import isolation
from attnquiz.web.forms import (
    MAX_RESPONSE,
    current_slot,
    draft_key,
    field_text,
    form_response,
    keep_in_box,
    keep_typed,
    new_seed,
    prefill,
    see,
)
from attnquiz.web.state import BankRef, QuizState, WebSession
from attnquiz.web.vetting import buildable, graded, vetted
from attnquiz.wording import when

if TYPE_CHECKING:
    from attnquiz.engine.grading.outcome import Grade
    from attnquiz.engine.practice.planning import Plan
    from attnquiz.engine.practice.session import Session
    from attnquiz.engine.practice.session_state import Slot


class SessionPages(QuizState):
    """A session's question, feedback and summary pages, and the buttons on them."""

    async def question(self, request: Request) -> Response:
        from attnquiz.engine.practice.session import hint_steps

        web = self.web_session(request.path_params["sid"])
        session = web.session
        if session.exam and session.time_up and not session.finished:
            self.finish_session(web, "time-up")
        if not session.finished:
            await buildable(web, self.settings.time_limit)
        current = session.show() if not session.finished else None
        web.warnings.extend(session.take_warnings())
        if session.exam and not session.finished and (current is None or session.current is None):
            # Every question has an answer: look them over, go back to any, or hand the exam in.
            return see(f"/s/{web.id}/submit")
        if current is None or session.current is None:
            if not session.finished:
                self.finish_session(web, "completed")
            return see(f"/s/{web.id}/summary")
        slot = session.current
        invalid = web.invalid if web.invalid is not None and web.invalid[0] == slot.position else None
        part_done = web.part_done if web.part_done is not None and web.part_done[0] == slot.position else None
        web.part_done = None
        part = session.pending_part(slot)
        saved, web.saved = web.saved, None
        rated, web.rated = web.rated, None
        warnings, web.warnings = web.warnings, []
        if rating_due(session):
            # A concept question answered in practice: the model answer and key points, then the
            # student's own rating of their answer, which schedules the review (`Session.rate`).
            from attnquiz.engine.grading.outcome import SELF_RATINGS

            return self.page(
                request,
                "rate.html",
                web=web,
                session=session,
                slot=slot,
                q=current,
                ratings=SELF_RATINGS,
                intervals=_intervals(web, current, _stored_card(web, current)),
                warnings=warnings,
                csrf=self.guard.csrf_token(web.scope),
            )
        return self.page(
            request,
            "question.html",
            web=web,
            session=session,
            slot=slot,
            q=current,
            choice=_choice(part.answer if part is not None else current.answer),
            part=part,
            prefill=prefill(session, slot),
            kept=session.kept_parts(slot),
            saved_parts=_saved_parts(session, slot),
            carried=_carried(current, part),
            part_done=part_done[1] if part_done is not None else None,
            part_remarks=_remarks(part_done[1].grade) if part_done is not None else [],
            invalid=invalid,
            hints=web.hints.get(slot.position, []),
            more_hints=len(hint_steps(current)) > len(web.hints.get(slot.position, [])),
            typed=web.typed.get(slot.position, "") if invalid is None else "",
            reading=_reading_shown(web, slot),
            readable=_readable(part.answer if part is not None else current.answer),
            draft=draft_key(web, slot),
            saved=saved,
            rated=rated,
            concept=_concept(current.answer),
            code_answer=current.answer if current.answer.kind == "code" else None,
            concept_limit=_concept_limit(),
            remaining=session.remaining(),
            warnings=warnings,
            csrf=self.guard.csrf_token(web.scope),
        )

    async def answer(self, request: Request) -> Response:
        web = self.web_session(request.path_params["sid"])
        form = await self.form(request, web.scope)
        session = web.session
        if session.exam and session.time_up and not session.finished:
            # The answer of a page sent as the time ran out still counts (see TIME_UP_GRACE).
            keep_typed(web, form)
            self.finish_session(web, "time-up")
        slot = current_slot(web, form)
        if slot is None or rating_due(session):  # sent from an older page (Back button), or after the end
            return see(f"/s/{web.id}")
        response = form_response(form)
        result = await graded(session, response)
        web.warnings.extend(session.take_warnings())
        if not result.counts:
            # Kept to refill the field (a huge paste is cut: the page need not carry it back).
            web.invalid = (slot.position, response[:MAX_RESPONSE], result)
            return see(f"/s/{web.id}")
        web.invalid = None
        web.typed.pop(slot.position, None)
        if rating_due(session):  # a concept question: compare with the model answer, then rate
            return see(f"/s/{web.id}")
        if field_text(form, "then") == "end" and not session.exam:
            # Checked on the way out (the page that asks before a session ends): its feedback, then
            # the summary. A question in parts left part-way counts with the rest blank.
            self.finish_session(web, "quit")
            return see(f"/s/{web.id}/feedback/{slot.position}")
        if not slot.answered:
            # A part of a question in parts: the next part is asked on the same page.
            web.part_done = (slot.position, result.parts[0]) if result.parts else None
            return see(f"/s/{web.id}")
        if session.exam:
            web.saved = slot.position
            return see(f"/s/{web.id}")
        return see(f"/s/{web.id}/feedback/{slot.position}")

    async def rate(self, request: Request) -> Response:
        """A concept question's self-rating (again, hard, good, easy): it schedules the item's review."""
        web = self.web_session(request.path_params["sid"])
        form = await self.form(request, web.scope)
        slot = current_slot(web, form)
        if slot is None or not rating_due(web.session):  # an older page, or already rated
            return see(f"/s/{web.id}")
        from attnquiz.engine.grading.outcome import SELF_RATINGS

        rating = field_text(form, "rating")
        if rating not in SELF_RATINGS:
            raise HTTPException(400, f"A rating is one of {', '.join(SELF_RATINGS)}.")
        web.session.rate(rating)
        web.warnings.extend(web.session.take_warnings())
        web.rated = (slot.position, rating, slot.next_due)
        return see(f"/s/{web.id}")

    async def skip(self, request: Request) -> Response:
        web = self.web_session(request.path_params["sid"])
        form = await self.form(request, web.scope)
        slot = current_slot(web, form)
        if slot is None or rating_due(web.session):
            return see(f"/s/{web.id}")
        if web.session.exam:
            # Next question: what was typed in the box is saved first (saving moves on by itself).
            if keep_typed(web, form) and web.session.current is slot:
                web.session.skip()  # nothing was saved, or a part was (which stays on its question)
            web.warnings.extend(web.session.take_warnings())
            return see(f"/s/{web.id}")
        web.typed.pop(slot.position, None)
        web.session.skip()
        web.warnings.extend(web.session.take_warnings())
        return see(f"/s/{web.id}/feedback/{slot.position}")

    async def hint(self, request: Request) -> Response:
        from attnquiz.engine.practice.session import hint_steps

        web = self.web_session(request.path_params["sid"])
        form = await self.form(request, web.scope)
        slot = current_slot(web, form)
        if slot is not None:
            keep_in_box(web, slot, form)
        if slot is not None and not web.session.exam:
            shown = web.hints.setdefault(slot.position, [])
            steps = hint_steps(web.session.question(slot))
            if len(shown) < len(steps):
                web.session.hint()  # counted: a hinted answer is never rated Easy
                shown.append(steps[len(shown)])
            elif not steps and not shown:
                shown.append("This question has no hint.")
        return see(f"/s/{web.id}")

    async def read(self, request: Request) -> Response:
        """How the answer in the box is read, before it is graded (nothing is graded or saved): as
        JSON for the page's script while typing, else the question again with the reading shown
        (the *Show how it reads* button)."""
        web = self.web_session(request.path_params["sid"])
        form = await self.form(request, web.scope)
        session = web.session
        slot = current_slot(web, form)
        wants_json = field_text(form, "format") == "json"
        if slot is None or session.finished or rating_due(session):
            return JSONResponse({"read_as": "", "problem": ""}) if wants_json else see(f"/s/{web.id}")
        part = session.pending_part(slot)
        expected = part.answer if part is not None else session.question(slot).answer
        response = field_text(form, "response")[:MAX_RESPONSE]
        read_as, problem = "", ""
        if response.strip() and _readable(expected):
            tried = await isolation.in_child(
                lambda: _reading(expected, response), cpu_seconds=isolation.ANSWER_SECONDS
            )
            if tried.kind == "done" and tried.value is not None:
                read_as, problem = tried.value
            else:
                problem = "It is too long or too deep to read: write it more simply."
        if wants_json:
            return JSONResponse({"read_as": read_as, "problem": problem})
        web.typed[slot.position] = response
        web.reading = (slot.position, response, read_as, problem)
        return see(f"/s/{web.id}")

    async def another(self, request: Request) -> Response:
        """A fresh variant of the item of a question answered wrong or part-right, asked now: next in
        the session, or, when that question ended the session, as a session of its own."""
        from attnquiz.engine.practice.planning import plan_practice

        web = self.web_session(request.path_params["sid"])
        form = await self.form(request, web.scope)
        session = web.session
        slot = _slot_at(session, field_text(form, "position"))
        if slot is None or not _another_offered(session, slot):
            raise HTTPException(404, "There is no such answer to follow with another question.")
        entry = slot.planned.entry
        seed = new_seed()
        if not session.finished:
            added = session.another(slot.position)
            web.hints = _moved_down(web.hints, added.position)
            web.typed = _moved_down(web.typed, added.position)
            return see(f"/s/{web.id}")
        ref = self._ref_of_bank(web, entry.bank)
        if ref is None:
            raise HTTPException(404, f"quiz serve does not offer bank {entry.bank!r} to practise from.")

        def planned() -> Plan:
            bank = bank_files.load(ref.ref, plugins=True)
            return plan_practice(bank, seed=seed, bank_ref=ref.ref, items=[entry.id], count=1)

        try:
            plan = await vetted(planned, self.settings.time_limit, f"bank {ref.key}: preparing its question")
        except QuizError as exc:
            raise HTTPException(400, str(exc).splitlines()[-1]) from None
        fresh = self.add_session(plan, ref.key)
        return see(f"/s/{fresh.id}")

    async def again(self, request: Request) -> Response:
        """A session ended (an exam handed in) asked again with fresh variants: the same items, mode
        and time limit, a new seed, so that the questions just solved, answers shown, are not the
        ones asked again."""
        from attnquiz.engine.practice.planning import plan_practice

        web = self.web_session(request.path_params["sid"])
        await self.form(request, web.scope)
        session = web.session
        if not session.finished or web.bank_key is None:
            raise HTTPException(404, "Only a session that has ended can be repeated with fresh variants.")
        ref = self.bank_ref(web.bank_key)
        items = list(dict.fromkeys(p.entry.id for p in session.plan.questions))
        seed = new_seed()

        def planned() -> Plan:
            return plan_practice(
                bank_files.load(ref.ref, plugins=True),
                seed=seed,
                bank_ref=ref.ref,
                items=items,
                count=len(session.plan.questions),
                exam=session.exam,
                time_limit=session.plan.time_limit,
            )

        try:
            plan = await vetted(planned, self.settings.time_limit, f"bank {ref.key}: preparing its questions")
        except QuizError as exc:
            raise HTTPException(400, str(exc).splitlines()[-1]) from None
        fresh = self.add_session(plan, ref.key)
        return see(f"/s/{fresh.id}")

    def _ref_of_bank(self, web: WebSession, name: str) -> BankRef | None:
        """The bank offered under which a session's bank ``name`` is found (a review's banks too)."""
        if web.bank_key is not None:
            return self.bank_ref(web.bank_key)
        return next((r for r in self.refs if name in (r.key, r.ref)), None)

    async def rerate(self, request: Request) -> Response:
        """A scored practice answer rated by the student (a guess is rated again): its review is
        scheduled from that rating instead of the one its grade earned (`Session.rerate`)."""
        web = self.web_session(request.path_params["sid"])
        form = await self.form(request, web.scope)
        from attnquiz.engine.grading.outcome import SELF_RATINGS

        rating = field_text(form, "rating")
        position = whole(field_text(form, "position"))
        if rating not in SELF_RATINGS or position is None:
            raise HTTPException(400, f"A rating is one of {', '.join(SELF_RATINGS)}.")
        session = web.session
        if not 1 <= position <= len(session.slots) or not session.can_rerate(session.slots[position - 1]):
            raise HTTPException(404, "There is no such answer to rate.")
        session.rerate(position, rating)
        web.warnings.extend(session.take_warnings())
        return see(f"/s/{web.id}/feedback/{position}?rated={rating}")

    async def feedback(self, request: Request) -> Response:
        web = self.web_session(request.path_params["sid"])
        session = web.session
        position = int(request.path_params["position"])
        if not 1 <= position <= len(session.slots) or session.exam:
            raise HTTPException(404, "There is no such answer to show.")
        slot = session.slots[position - 1]
        if not (slot.answered or slot.skipped) or slot.question is None:
            return see(f"/s/{web.id}")
        warnings, web.warnings = web.warnings, []
        return self.page(
            request,
            "feedback.html",
            web=web,
            session=session,
            slot=slot,
            q=slot.question,
            grade=slot.grade,
            remarks=_remarks(slot.grade) if slot.grade is not None else [],
            warnings=warnings,
            can_rerate=session.can_rerate(slot),
            another=_another_offered(session, slot),
            intervals=_intervals(web, slot.question, slot.card_before) if session.can_rerate(slot) else {},
            rated=request.query_params.get("rated", ""),
            csrf=self.guard.csrf_token(web.scope),
        )

    async def summary(self, request: Request) -> Response:
        web = self.web_session(request.path_params["sid"])
        session = web.session
        if not session.finished:
            return see(f"/s/{web.id}")
        warnings, web.warnings = web.warnings, []
        results = []
        if session.exam:
            for slot in session.slots:
                if slot.broken is not None:
                    continue
                question = session.question(slot)
                results.append(
                    {
                        "slot": slot,
                        "q": question,
                        "remarks": _remarks(slot.grade) if slot.grade is not None else [],
                    }
                )
        # Each row's question, so that a concept question's model answer is rendered (its TeX too).
        questions = {s.position: s.question for s in session.slots if s.question is not None}
        return self.page(
            request,
            "summary.html",
            web=web,
            summary=session.summary(),
            results=results,
            warnings=warnings,
            questions=questions,
            again=web.bank_key is not None,
            csrf=self.guard.csrf_token(web.scope),
        )


def _stored_card(web: WebSession, question: Any) -> Any:
    """The question's item's review card as the history holds it now (None: new, or no history)."""
    from attnquiz.engine.practice.history_file import StoreError

    if web.store is None:
        return None
    try:
        return web.store.card(question.bank, question.item_id)
    except StoreError:
        return None


def _intervals(web: WebSession, question: Any, card: Any) -> dict[str, str]:
    """When each rating (again, hard, good, easy) would bring the item back, rated now from ``card``
    (the card it had before this answer): the review scheduler's own answer, shown on its button.
    An interval of days is said as "about": FSRS spreads those by a day or a few."""
    from attnquiz.engine.practice import review
    from attnquiz.engine.practice.history_records import utc_now

    now = utc_now()
    due = review.due_after_each(
        card, bank=question.bank, item=question.item_id, topic=question.topic, when=now
    )
    said = {}
    for name, moment in due.items():
        days = (moment - now).total_seconds() / 86400
        said[str(name)] = f"in about {round(days)} days" if days >= FUZZED_DAYS else when(moment)
    return said


FUZZED_DAYS = 2.5
"""From this many days on, FSRS spreads an interval at random (by a day or a few)."""


def _reading(expected: Any, response: str) -> tuple[str, str]:
    """How ``response`` is read as an answer of ``expected``'s kind, and why it cannot be, if it
    cannot: a formula by the parser alone (nothing is compared with the answer), any other kind by
    the grader, of which only the reading is kept (never whether it is right)."""
    from attnquiz.engine.answers import formula_tree, parse, read_formulas
    from attnquiz.engine.answers.kinds import ExpressionAnswer
    from attnquiz.engine.grading.grade import grade_answer

    if isinstance(expected, ExpressionAnswer):
        tree = read_formulas.formula(response, expected.symbols)
        if isinstance(tree, parse.Invalid):
            return tree.read_as, tree.reason
        return formula_tree.formula_text(tree), ""
    graded = grade_answer(expected, response)
    if graded.status == "invalid":
        return graded.read_as, graded.feedback.splitlines()[0] if graded.feedback else "It cannot be read."
    return graded.read_as, ""


def _readable(expected: Any) -> bool:
    """Whether an answer of ``expected``'s kind is typed (and so has a reading to show): not options
    to tick, nor a concept question's own words."""
    return _choice(expected) is None and _concept(expected) is None


def _reading_shown(web: WebSession, slot: Slot) -> tuple[str, str] | None:
    """The reading to show under the question's box (once), if it was asked for there."""
    reading, web.reading = web.reading, None
    if reading is None or reading[0] != slot.position:
        return None
    return reading[2], reading[3]


V = TypeVar("V")


def _moved_down(kept: dict[int, V], position: int) -> dict[int, V]:
    """What is kept per question, after a question was put in at ``position`` (those from it on
    move one place down)."""
    return {(p + 1 if p >= position else p): v for p, v in kept.items()}


def _slot_at(session: Session, text: str) -> Slot | None:
    """The session's question at the position a form sent (None: no such position)."""
    if not (text.isascii() and text.isdigit()) or len(text) > 6:
        return None
    position = int(text)
    return session.slots[position - 1] if 1 <= position <= len(session.slots) else None


def _another_offered(session: Session, slot: Slot) -> bool:
    """Whether the feedback on ``slot`` offers "another like this": a practice or review answer that
    was wrong or part-right, and not already followed by another variant of its item."""
    if session.exam or slot.status not in {"wrong", "partial"}:
        return False
    following = session.slots[slot.position] if slot.position < len(session.slots) else None
    return following is None or following.planned.entry.id != slot.planned.entry.id or following.answered


def _saved_parts(session: Session, slot: Slot) -> list[tuple[str, str]]:
    """A question in parts answered part-way: the parts answered so far (label, response), shown
    above the box of the next one, so that coming back to the question shows every saved part."""
    if not session.part_in_progress(slot):
        return []
    parts = session.question(slot).variant.parts
    return [(p.label, r) for p, r in zip(parts, slot.part_responses, strict=False)]


def _carried(question: Any, part: Any) -> str:
    """How a part that uses earlier parts is marked (error carried forward), or "" for other parts."""
    if part is None or not part.uses:
        return ""
    from attnquiz.engine.answers.kinds import carried_share

    labels = " and ".join(f"({label})" for label in part.uses)
    # What it promises follows the item's carried_score, as the worksheets' sentence does.
    score = getattr(question.answer, "carried_score", 1.0)
    if score <= 0:
        return f"This part uses your answer to {labels}: it earns its marks only if that answer was right."
    said = (
        f"This part uses your answer to {labels}: if that was wrong, this part is marked against the "
        "value that follows from what you wrote there (error carried forward)"
    )
    if score >= 1:
        return f"{said}, so a mistake is not counted twice."
    return f"{said}, and earns {carried_share(score)} its marks that way."


def rating_due(session: Session) -> bool:
    """Whether practice waits for the student's rating of a concept answer (an exam rates none: its
    concept answers are rated in `quiz review`)."""
    return not session.exam and session.awaiting_rating


def _concept_limit() -> int:
    """The longest concept answer the grader takes (a longer one is invalid): the text area says so."""
    from attnquiz.engine.grading.concepts import EXPLAIN_MAX_LENGTH

    return EXPLAIN_MAX_LENGTH


def _concept(answer: Any) -> Any:
    """The answer if it is a concept question's (a text area, then the model answer), else None."""
    from attnquiz.engine.answers.kinds import ExplainAnswer

    return answer if isinstance(answer, ExplainAnswer) else None


def _choice(answer: Any) -> Any:
    """The answer if it is a choice (options to tick), else None (a text field)."""
    from attnquiz.engine.answers.kinds import ChoiceAnswer

    return answer if isinstance(answer, ChoiceAnswer) else None


_REDUNDANT = {"Correct.", "Not correct: that is not the answer, within the precision asked for."}


def _remarks(grade: Grade) -> list[str]:
    """The grader's feedback and the named mistake's explanation (Markdown), without repeating the verdict."""
    remarks = [grade.feedback] if grade.feedback.strip() and grade.feedback.strip() not in _REDUNDANT else []
    mistake = grade.mistake
    if mistake is not None and mistake.feedback and mistake.feedback not in grade.feedback:
        remarks.append(mistake.feedback)
    return remarks


__all__ = ["SessionPages", "rating_due"]
