"""An exam's moves between its questions and the look over its answers; a session ended, an exam handed in.

An exam's question left by Go to or a header link keeps what was typed in its box (`forms.keep_typed`);
its answers are looked over before it is handed in; and End (practice) or Submit (an exam, or its
clock running out) ends a session.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from attnquiz.engine.typed_numbers import whole
from attnquiz.web.forms import (
    MAX_RESPONSE,
    current_slot,
    draft_key,
    field_text,
    form_response,
    keep_in_box,
    keep_typed,
    see,
)
from attnquiz.web.session_pages import rating_due
from attnquiz.web.state import QuizState

_HEADER_LINKS = frozenset({"/", "/review", "/stats", "/preview", "/scan"})
"""Where an exam's header links lead: the only places its question's page is left for by `leave`."""


class ExamPages(QuizState):
    """An exam's Go to, header links and answers page, and the end of any session (End, Submit)."""

    async def leave(self, request: Request) -> Response:
        """An exam question left by a header link (Practice, Review, Stats, Preview): what is in its
        box is saved as the exam's own buttons save it, then the link is followed."""
        web = self.web_session(request.path_params["sid"])
        form = await self.form(request, web.scope)
        target = field_text(form, "to")
        if not keep_typed(web, form):
            return see(f"/s/{web.id}")  # the typed answer cannot be read: say why, here
        return see(target if target in _HEADER_LINKS else "/")

    async def go(self, request: Request) -> Response:
        web = self.web_session(request.path_params["sid"])
        form = await self.form(request, web.scope)
        session = web.session
        if session.exam and not session.finished:
            if not keep_typed(web, form):
                return see(f"/s/{web.id}")  # the typed answer cannot be read: say why, here
            target = whole(field_text(form, "go"))
            try:
                if target is None:
                    raise ValueError(f"there is no question {field_text(form, 'go')[:20]!r} to go to")
                session.go(target)
            except ValueError as exc:
                web.warnings.append(str(exc))
        return see(f"/s/{web.id}")

    async def finish(self, request: Request) -> Response:
        web = self.web_session(request.path_params["sid"])
        form = await self.form(request, web.scope)
        session = web.session
        if not session.finished and not session.exam and field_text(form, "confirm") != "yes":
            slot = current_slot(web, form)
            typed = form_response(form)
            if slot is not None and typed.strip() and not rating_due(session):
                # An answer in the box: ask whether to check it before the session ends.
                keep_in_box(web, slot, form)
                return self.page(
                    request,
                    "end.html",
                    web=web,
                    session=session,
                    slot=slot,
                    typed=typed[:MAX_RESPONSE],
                    choices=[str(v) for v in form.getlist("choice")],
                    draft=draft_key(web, slot),
                    csrf=self.guard.csrf_token(web.scope),
                )
        if not session.finished:
            time_up_sent = field_text(form, "reason") == "time-up"
            kept = keep_typed(web, form)
            if session.exam and session.time_up:
                self.finish_session(web, "time-up")
            elif time_up_sent:
                # The page's clock ran out a moment before the server's: show the question again,
                # whose page submits once more when its (server-given) time is up.
                return see(f"/s/{web.id}")
            elif not kept:
                return see(f"/s/{web.id}")  # the typed answer cannot be read: say why before handing in
            elif session.exam and session.unanswered() and field_text(form, "confirm") != "yes":
                # Handing in with questions unanswered is asked first, as the terminal asks.
                return see(f"/s/{web.id}/submit?ask=1")
            else:
                self.finish_session(web, "submitted" if session.exam else "quit")
        return see(f"/s/{web.id}/summary")

    async def submit_page(self, request: Request) -> Response:
        """An exam's answers before it is handed in: which have an answer (and what it is), a way back
        to each, and the Submit button (which, with questions unanswered, says how many)."""
        web = self.web_session(request.path_params["sid"])
        session = web.session
        if not session.exam or session.finished:
            return see(f"/s/{web.id}/summary" if session.finished else f"/s/{web.id}")
        if session.time_up:
            self.finish_session(web, "time-up")
            return see(f"/s/{web.id}/summary")
        rows = []
        for slot in session.slots:
            if slot.broken is not None:
                continue
            question = session.question(slot)
            rows.append({"slot": slot, "q": question, "in_progress": session.part_in_progress(slot)})
        warnings, web.warnings = web.warnings, []
        return self.page(
            request,
            "submit.html",
            web=web,
            session=session,
            rows=rows,
            missing=session.unanswered(),
            ask=request.query_params.get("ask") == "1",
            back=session.current.position if session.current is not None else None,
            remaining=session.remaining(),
            warnings=warnings,
            csrf=self.guard.csrf_token(web.scope),
        )


__all__ = ["ExamPages"]
