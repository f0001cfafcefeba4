"""The authors' preview: a bank's items at a seed, or its load errors, reloaded when its file changes."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from attnquiz.engine.bank import finding as bank_files
from attnquiz.engine.errors import BankError, QuizError, excerpt
from attnquiz.web.forms import query_int
from attnquiz.web.state import BankRef, QuizState

if TYPE_CHECKING:
    from attnquiz.engine.bank.loaded import Bank


class PreviewPages(QuizState):
    """The preview's index, a bank's page, an item's page, and the stamp its script polls."""

    async def preview_index(self, request: Request) -> Response:
        return self.page(request, "preview_index.html", refs=self.refs)

    def _preview_bank(self, ref: BankRef) -> tuple[Bank | None, list[dict[str, Any]], str]:
        """The bank, or its load errors (one per problem: file:line: field: message, and its excerpt)."""
        try:
            return bank_files.load(ref.ref, plugins=True), [], ""
        except BankError as exc:
            issues = [{"line": str(i), "excerpt": "\n".join(excerpt(exc.source, i))} for i in exc.issues]
            return None, issues, exc.summary
        except QuizError as exc:
            return None, [{"line": str(exc), "excerpt": ""}], ""

    async def preview_bank(self, request: Request) -> Response:
        return self._preview(request, item=None)

    async def preview_item(self, request: Request) -> Response:
        return self._preview(request, item=request.path_params["item"])

    def _preview(self, request: Request, *, item: str | None) -> Response:
        """A bank's items (``item`` None) or one of them, at the seed asked for, or its load errors."""
        ref = self.bank_ref(request.path_params["bank"])
        bank, issues, summary = self._preview_bank(ref)
        seed = query_int(request, "seed", 0, 2**32 - 1)
        seed = 1 if seed is None else seed
        cards = []
        if bank is not None and item is None:
            cards = [_preview_card(entry, seed) for entry in bank.items]
        elif bank is not None and item is not None:
            try:
                cards = [_preview_card(bank.get(item), seed)]
            except QuizError as exc:
                raise HTTPException(404, str(exc)) from None
        return self.page(
            request,
            "preview_bank.html",
            ref=ref,
            bank=bank,
            issues=issues,
            summary=summary,
            cards=cards,
            seed=seed,
            stamp=_stamp(ref),
            one=item is not None,
        )

    async def preview_stamp(self, request: Request) -> Response:
        ref = self.bank_ref(request.path_params["bank"])
        return JSONResponse({"stamp": _stamp(ref)})


def _stamp(ref: BankRef) -> str:
    """What changes when the bank's file does: its size, time and a hash of its bytes."""
    try:
        path = bank_files.find(ref.ref).path
        info = path.stat()
        with path.open("rb") as handle:
            digest = hashlib.sha256(handle.read(bank_files.MAX_BANK_BYTES + 1)).hexdigest()[:16]
    except (OSError, QuizError):
        return "missing"
    return f"{info.st_mtime_ns}-{info.st_size}-{digest}"


def _preview_card(entry: Any, seed: int) -> dict[str, Any]:
    """One item as the preview shows it: the variant for ``seed`` and the original, or why they fail."""
    card: dict[str, Any] = {"entry": entry, "seed": seed, "variant": None, "original": None, "errors": []}
    try:
        card["variant"] = entry.question(seed)
    except QuizError as exc:
        card["errors"].append(f"seed {seed}: {exc}")
    if entry.has_original:
        try:
            card["original"] = entry.original()
        except QuizError as exc:
            card["errors"].append(f"original: {exc}")
    return card


def preview_key(quiz: QuizState, request: Request) -> tuple[str, str, tuple[str, ...]] | None:
    """What a preview page depends on, to remember one that was stopped: the page asked for, the
    bank's file and its plugins' files as they are now (editing any of them tries again)."""
    ref = request.path_params.get("bank", "")
    try:
        found = bank_files.find(quiz.bank_ref(ref).ref)
        plugins = bank_files.load(str(found.path)).plugins
        stamps = tuple(f"{p}:{p.stat().st_mtime_ns}:{p.stat().st_size}" for p in (found.path, *plugins))
    except (OSError, QuizError, HTTPException):
        return None
    return (request.url.path + "?" + request.url.query, ref, stamps)


__all__ = ["PreviewPages", "preview_key"]
