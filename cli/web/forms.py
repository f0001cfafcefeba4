"""The pages' forms: their fields read, the question a form was sent from, and what its answer box holds.

A question's box keeps what was typed when its page is left by a button that neither saves nor grades
it (`keep_in_box`), is drafted in the browser under `draft_key`, and, in an exam, is saved when its
question is left (`keep_typed`) and shows the saved answer when it comes back (`prefill`). Every form is
answered with a redirect (`see`): POST-redirect-GET.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse

from attnquiz.engine.typed_numbers import whole, whole_in

if TYPE_CHECKING:
    from attnquiz.engine.practice.session import Session
    from attnquiz.engine.practice.session_state import Slot
    from attnquiz.web.state import WebSession


MAX_RESPONSE = 10_000
"""The most of an unreadable response put back in the answer field."""
TIME_UP_GRACE = 30.0
"""Seconds after a timed exam's end during which the answer its page sends is still taken: the page
submits what is in the box when its clock runs out, and the request takes a moment to arrive."""


def field_text(form: FormData, name: str) -> str:
    """A field's text ("" when the form has no such field, or sent a file under its name)."""
    value = form.get(name)
    return value if isinstance(value, str) else ""


def field_int(form: FormData, name: str, low: int, high: int) -> int | None:
    """A whole number field (None when empty), refused when it is not one or is out of range."""
    text = field_text(form, name).strip()
    return whole_in(text, low, high, name) if text else None


def query_int(request: Request, name: str, low: int, high: int) -> int | None:
    """A whole number from the address's query (None when it is missing, not one or out of range)."""
    value = whole(request.query_params.get(name, ""))
    return value if value is not None and low <= value <= high else None


def form_response(form: FormData) -> str:
    """The answer a question's form holds: the options ticked, or the text typed."""
    chosen = [str(v) for v in form.getlist("choice")]
    # A text area sends its line breaks as CR LF (the HTML form rule): kept as the terminal keeps them.
    return ", ".join(chosen) if chosen else field_text(form, "response").replace("\r\n", "\n")


def current_slot(web: WebSession, form: FormData) -> Slot | None:
    """The current question, if the form was sent from its page (not from an older one)."""
    current = web.session.current
    if current is None or field_text(form, "position") != str(current.position):
        return None
    return current


def keep_typed(web: WebSession, form: FormData) -> bool:
    """An exam's answer in the form of the question being left (by Next, Go to, Submit or the
    clock), saved as *Save answer* saves it, when it was typed or changed on that page.

    Returns:
        False when it could not be read: the page is shown again with why (nothing is lost).
    """
    session = web.session
    if not session.exam or session.finished:
        return True
    slot = current_slot(web, form)
    if slot is None:
        return True
    web.typed.pop(slot.position, None)  # the box is sent now: what it held is saved, or said why not
    response = form_response(form)
    if not response.strip() or response == prefill(session, slot):
        return True  # nothing typed, or the saved answer as it was
    if session.time_up and session.overtime() > TIME_UP_GRACE:
        web.warnings.append(
            f"Your change to question {slot.position} came after the time was up: it was not saved."
        )
        return True
    result = session.answer(response)
    web.warnings.extend(session.take_warnings())
    if not result.counts:
        if session.time_up:  # no page comes back to say why: the summary says it was not saved
            reason = result.feedback.strip().splitlines()[0] if result.feedback.strip() else ""
            web.warnings.append(
                f"Your answer to question {slot.position} could not be read when the time ran out, "
                f"so it was not saved. {reason}".strip()
            )
        web.invalid = (slot.position, response[:MAX_RESPONSE], result)
        return False
    web.invalid = None
    if slot.answered:
        web.saved = slot.position
    elif result.parts:
        web.part_done = (slot.position, result.parts[0])
    return True


def prefill(session: Session, slot: Slot) -> str:
    """What an exam's answer field holds when its question is shown again: the saved answer (of the
    part asked next, for a question in parts), or nothing."""
    if not session.exam or not slot.answered:
        return ""
    parts = session.question(slot).variant.parts
    if not parts:
        return slot.response
    done = len(slot.part_responses)
    if done >= len(parts):
        return slot.part_responses[0]  # a question answered whole is revised from (a)
    earlier = slot.earlier_parts
    return earlier[done] if done < len(earlier) else ""


def keep_in_box(web: WebSession, slot: Slot, form: FormData) -> None:
    """Keep what the form's box holds, to put back when the question is shown again."""
    typed = form_response(form)
    if typed.strip():
        web.typed[slot.position] = typed[:MAX_RESPONSE]
    else:
        web.typed.pop(slot.position, None)


def draft_key(web: WebSession, slot: Slot) -> str:
    """The name under which the browser keeps a draft of the question's box: the session, the
    question, the part asked and the variant (a fresh variant or the next part starts empty)."""
    session = web.session
    part = session.pending_part(slot)
    return f"{web.id}:{slot.position}:{part.label if part is not None else ''}:{session.question(slot).code}"


def new_seed() -> int:
    """A fresh random seed, for a session whose form names none or asks for fresh variants."""
    import secrets

    return secrets.randbelow(2**32)


def see(url: str) -> RedirectResponse:
    """The answer to a form: go to ``url`` with a GET (303 See Other): a reload sends nothing again."""
    return RedirectResponse(url, status_code=303)


__all__ = [
    "MAX_RESPONSE",
    "TIME_UP_GRACE",
    "current_slot",
    "draft_key",
    "field_int",
    "field_text",
    "form_response",
    "keep_in_box",
    "keep_typed",
    "new_seed",
    "prefill",
    "query_int",
    "see",
]
