"""The ASGI app of `quiz serve`: practice, review, stats and the authors' preview, over the engine's own API.

A practice session here is the `attnquiz.engine.practice.session.Session` that `quiz run` drives, with the
same planning (`plan_practice`, `plan_review`), grading and history (one transaction per answer,
through `Store.record`). Pages are plain HTML forms with POST-redirect-GET, so reading and answering
work without JavaScript; the script only counts an exam's time down and reloads the preview.

Every handler runs on the server's one event-loop thread (none is a threadpool function): a
session and its SQLite connection are only ever used from the thread that opened them. What may
take long (grading a typed response, importing a bank's plugins, the preview's variants, pages
that load banks) is done or tried first in a forked child with a CPU-time limit
(`attnquiz.web.isolation`), so one request never stalls the others.

This module holds the table of routes and `QuizApp`, the pages put together over the state they share
(`attnquiz.web.state`): the home page (`home_pages`), a session's question, feedback and summary
(`session_pages`), an exam's moves and the end of a session (`exam_pages`), review and stats
(`review_pages`), the authors' preview (`preview_pages`) and a scan's review (`scan_review`). Their
forms are read in `forms`; what may not end is tried in a child by `vetting`.
"""

from __future__ import annotations

from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from attnquiz.web import exam_pages, home_pages, isolation, preview_pages, review_pages, session_pages
from attnquiz.web.assets import Assets
from attnquiz.web.security import Guard, GuardMiddleware
from attnquiz.web.state import HERE, ServeSettings


class QuizApp(
    home_pages.HomePages,
    session_pages.SessionPages,
    exam_pages.ExamPages,
    review_pages.ReviewPages,
    preview_pages.PreviewPages,
):
    """The pages and the state behind them (sessions in memory, history on disk)."""

    async def not_found(self, request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        detail = exc.detail if isinstance(exc, HTTPException) else "Something went wrong."
        return self.page(request, "error.html", status, status=status, detail=detail)


def build_app(settings: ServeSettings, guard: Guard) -> tuple[GuardMiddleware, QuizApp]:
    """The app behind its guard (outermost, so even an error page is guarded and carries the headers),
    and the state it serves (closed by the caller at the end)."""
    quiz = QuizApp(settings, guard)
    quiz.prepare()

    def isolated(handler: Any, remember: Any = None, reuse: Any = None) -> Any:
        return isolation.page_in_child(
            handler, cpu_seconds=settings.time_limit, remember=remember, reuse=reuse
        )

    def preview_key(request: Request) -> Any:
        return preview_pages.preview_key(quiz, request)

    def home_key(request: Request) -> Any:
        return home_pages.home_key(quiz, request)

    def stats_key(request: Request) -> Any:
        return review_pages.stats_key(quiz, request)

    def review_key(request: Request) -> Any:
        return review_pages.review_key(quiz, request)

    routes = [
        Route("/", isolated(quiz.home, reuse=home_key)),
        Route("/start", quiz.start, methods=["POST"]),
        Route("/resume", quiz.resume_exam, methods=["POST"]),
        Route("/s/{sid}", quiz.question),
        Route("/s/{sid}/answer", quiz.answer, methods=["POST"]),
        Route("/s/{sid}/skip", quiz.skip, methods=["POST"]),
        Route("/s/{sid}/rate", quiz.rate, methods=["POST"]),
        Route("/s/{sid}/hint", quiz.hint, methods=["POST"]),
        Route("/s/{sid}/go", quiz.go, methods=["POST"]),
        Route("/s/{sid}/finish", quiz.finish, methods=["POST"]),
        Route("/s/{sid}/leave", quiz.leave, methods=["POST"]),
        Route("/s/{sid}/another", quiz.another, methods=["POST"]),
        Route("/s/{sid}/read", quiz.read, methods=["POST"]),
        Route("/s/{sid}/again", quiz.again, methods=["POST"]),
        Route("/s/{sid}/submit", quiz.submit_page),
        Route("/s/{sid}/rerate", quiz.rerate, methods=["POST"]),
        Route("/s/{sid}/feedback/{position:int}", quiz.feedback),
        Route("/s/{sid}/summary", quiz.summary),
        Route("/review", isolated(quiz.review_page, reuse=review_key)),
        Route("/review/start", quiz.review_start, methods=["POST"]),
        Route("/stats", isolated(quiz.stats, reuse=stats_key)),
        Route("/preview", quiz.preview_index),
        Route("/preview/{bank}", isolated(quiz.preview_bank, preview_key)),
        Route("/preview/{bank}/stamp", quiz.preview_stamp),
        Route("/preview/{bank}/{item}", isolated(quiz.preview_item, preview_key)),
        Assets(HERE / "static").route("/static"),
    ]
    if settings.scan is not None:
        from attnquiz.web import scan_review

        review = scan_review.ScanReviewPage(
            answers=settings.scan,
            review=scan_review.default_review(settings.scan),
            render=quiz.page,
            read_form=quiz.form,
            csrf=guard.csrf_token(scan_review.SCOPE),
            cpu_seconds=settings.time_limit,
        )
        routes[-1:-1] = scan_review.routes(review)
    app = Starlette(
        routes=routes,
        exception_handlers={HTTPException: quiz.not_found, 500: quiz.not_found},
    )
    return GuardMiddleware(app, guard), quiz


__all__ = ["QuizApp", "build_app"]
