"""The `quiz serve --scan ANSWERS` page: settle what `quiz scan` left for review, as `quiz scan --fix` does.

Each open item of the review file is shown with its page, its field, the scan's cropped image and
what the bubbles read; the instructor picks a reading (or "no answer"), or types the answer as the
student wrote it, or names whose page an unreadable page is. What is chosen goes through
`attnquiz.engine.scan.settle.settle_answer`, the function `--fix` calls: the same checks, the same
``answers.csv`` and review file written.

The server's guard applies as on every page (token, Host, Origin, CSRF on each form). Settling runs
in a forked child under the page time limit (re-reading a page decodes an image), one at a time,
so two forms sent together cannot write the files over each other. An image is served only when
the review names it, it lies inside the review file's folder once every link is resolved, and it
is a PNG of bounded size.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from attnquiz.engine.typed_numbers import whole
from attnquiz.web import isolation

if TYPE_CHECKING:
    from starlette.datastructures import FormData

    from attnquiz.engine.scan.review import ReviewItem

SCOPE = "scan-review"
"""The CSRF scope of the review page's forms."""
MAX_IMAGE_BYTES = 20 << 20
"""A crop larger than this is not served (a field's crop is a few tens of kilobytes; a page, a few MB)."""
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
NO_ANSWER = "blank"
TYPED = "typed"


@dataclass
class ScanReviewPage:
    """The review page's three endpoints, over one answers file and its review file."""

    answers: Path
    review: Path
    render: Callable[..., Response]
    read_form: Callable[[Request, str], Any]
    csrf: str
    cpu_seconds: int
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def load(self) -> tuple[dict[str, Any], list[ReviewItem], str]:
        """The review as it is on disk now (re-read on every request: `--fix` may run beside it)."""
        from attnquiz.engine.scan.layout import ScanError
        from attnquiz.engine.scan.review import load_review

        try:
            doc, items = load_review(self.review)
        except ScanError as exc:
            return {}, [], str(exc)
        except (KeyError, TypeError, ValueError) as exc:
            return {}, [], f"{self.review}: not a review file written by `quiz scan` ({exc})"
        return doc, items, ""

    def show(
        self, request: Request, status: int = 200, *, errors: dict[int, str] | None = None, typed: str = ""
    ) -> Response:
        from attnquiz.engine.scan.settle import ABSENT, STRAY, readings

        _, items, problem = self.load()
        pending = [item for item in items if item.value is None]
        settled = [_card(item, []) for item in items if item.value is not None]
        done = _query_int(request, "done")
        return self.render(
            request,
            "scan_review.html",
            status,
            answers=str(self.answers),
            review=str(self.review),
            problem=problem,
            pending=[_card(item, readings(item)) for item in pending],
            settled=settled,
            done=next((card for card in settled if card["n"] == done), None),
            errors=errors or {},
            typed=typed,
            csrf=self.csrf,
            NO_ANSWER=NO_ANSWER,
            TYPED=TYPED,
            STRAY=STRAY,
            ABSENT=ABSENT,
        )

    async def page(self, request: Request) -> Response:
        return self.show(request)

    async def settle(self, request: Request) -> Response:
        from attnquiz.engine.scan.layout import ScanError
        from attnquiz.engine.scan.settle import readings, settle_answer

        form: FormData = await self.read_form(request, SCOPE)
        n = int(request.path_params["n"])
        async with self.lock:
            doc, items, problem = self.load()
            if problem:
                raise HTTPException(409, problem)
            item = next((i for i in items if i.n == n), None)
            if item is None:
                raise HTTPException(404, f"the review has no item {n}")
            if item.value is not None:
                return RedirectResponse(f"/scan?done={n}#settled-{n}", status_code=303)
            value, refused = _value(item, form, readings(item))
            if refused:
                return self.show(request, 400, errors={n: refused}, typed=_text(form, "typed"))

            def work() -> int:
                return len(settle_answer(self.review, self.answers, item, value, items, doc))

            outcome = await isolation.in_child(work, cpu_seconds=self.cpu_seconds)
        if outcome.kind == "done":
            return RedirectResponse(f"/scan?done={n}#result", status_code=303)
        if isinstance(outcome.exception, ScanError):
            return self.show(request, 400, errors={n: str(outcome.exception)}, typed=_text(form, "typed"))
        raise HTTPException(503, f"This answer could not be recorded: {outcome.error}")

    async def image(self, request: Request) -> Response:
        n = int(request.path_params["n"])
        _, items, problem = self.load()
        item = next((i for i in items if i.n == n), None)
        if problem or item is None or not item.crop:
            raise HTTPException(404, f"the review has no image for item {n}")
        data = _crop_bytes(self.review.parent, item.crop)
        if data is None:
            raise HTTPException(404, f"the image of item {n} is not a PNG inside the review's folder")
        return Response(data, media_type="image/png")


def _crop_bytes(folder: Path, name: str) -> bytes | None:
    """The PNG ``name`` (relative to ``folder``), or None when it is not one inside that folder."""
    try:
        root = folder.resolve(strict=True)
        path = (root / name).resolve(strict=True)
    except (OSError, RuntimeError, ValueError):
        return None
    if not path.is_relative_to(root) or path.suffix.lower() != ".png" or not path.is_file():
        return None
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_IMAGE_BYTES + 1)
    except OSError:
        return None
    if len(data) > MAX_IMAGE_BYTES or not data.startswith(PNG_SIGNATURE):
        return None
    return data


def _value(item: ReviewItem, form: FormData, readings: list[str]) -> tuple[str, str]:
    """The answer the form gives for ``item``, or an empty answer and why it is refused."""
    from attnquiz.engine.scan.settle import ABSENT, STRAY

    choice = _text(form, "choice")
    if item.kind == "page" and choice == STRAY:
        return STRAY, ""
    if item.kind == "missing":
        if choice == ABSENT:
            return ABSENT, ""
        return "", "this page can only be recorded as not handed in, or scanned again"
    if item.kind == "page":
        student, page = _text(form, "student"), _text(form, "sheet_page")
        if not student or not page:
            return "", "give the student number and the page of their sheet"
        return f"{student} {page}", ""
    if item.kind != "field":
        return "", "this page can only be scanned again"
    if choice == NO_ANSWER:
        return "", ""
    if choice == TYPED:
        typed = _text(form, "typed")
        if not typed.strip():
            return "", 'type the answer, or choose "no answer"'
        return typed, ""
    if choice.startswith("read:") and choice[5:] in readings:
        return choice[5:], ""
    return "", "choose a reading, no answer, or type the answer"


def _card(item: ReviewItem, readings: list[str]) -> dict[str, Any]:
    where = (
        (f"student {item.student}" + (f", page {item.sheet_page}" if item.sheet_page is not None else ""))
        if item.student is not None
        else item.source or "a page"
    )
    return {
        "n": item.n,
        "kind": item.kind,
        "where": where,
        "source": item.source,
        "column": item.column,
        "field": item.field,
        "reason": item.reason,
        "read": item.read,
        "image": bool(item.crop),
        "no_image": "" if item.crop else item.no_crop,
        "value": item.value,
        "readings": readings,
        "likely": item.likely,
        "rereadable": item.rereadable,
    }


def _text(form: FormData, name: str) -> str:
    value = form.get(name, "")
    return value if isinstance(value, str) else ""


def _query_int(request: Request, name: str) -> int | None:
    raw = request.query_params.get(name, "")
    return whole(raw)


def default_review(answers: Path) -> Path:
    """The review file `quiz scan` writes beside ``answers`` (named as the engine names it)."""
    from attnquiz.engine.scan import review

    return review.default_review(answers)


def routes(page: ScanReviewPage) -> list[Route]:
    return [
        Route("/scan", page.page),
        Route("/scan/{n:int}", page.settle, methods=["POST"]),
        Route("/scan/image/{n:int}", page.image),
    ]


__all__ = ["SCOPE", "ScanReviewPage", "default_review", "routes"]
