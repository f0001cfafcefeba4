"""The server's stylesheet and script, sent from memory.

Starlette's `StaticFiles` hands every step of sending a file (stat, open, read, close) to a worker
thread: some sixteen thread hops and 1 ms of the one event loop per request, which eight clients
at once turn into a queue. These are two small files of the package, so they are read once and
sent as bytes; a file that changes on disk (an edited stylesheet while developing) is read again
at its next request, as its size and times tell. Each carries an ETag, and a browser that already
has the version asks with If-None-Match and gets 304 Not Modified.
"""

from __future__ import annotations

import hashlib
import mimetypes
from dataclasses import dataclass
from pathlib import Path

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

CACHE_CONTROL = "no-cache"
"""The browser keeps a copy but asks whether it is current (a 304 costs no body)."""


@dataclass(frozen=True, slots=True)
class _Asset:
    stamp: tuple[int, int, int, int]
    body: bytes
    etag: str
    media_type: str


class Assets:
    """The regular files directly in ``folder`` (by name only: no sub-folder, no path), from memory."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.names = frozenset(p.name for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
        self._read: dict[str, _Asset] = {}

    def asset(self, name: str) -> _Asset:
        """The file ``name`` as it is now (read again only when stat says it changed)."""
        if name not in self.names:
            raise HTTPException(404, f"No file {name!r} here.")
        path = self.folder / name
        try:
            info = path.stat()
            stamp = (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
            known = self._read.get(name)
            if known is not None and known.stamp == stamp:
                return known
            body = path.read_bytes()
        except OSError:
            raise HTTPException(404, f"No file {name!r} here.") from None
        media_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
        if media_type.startswith("text/") or media_type.endswith("javascript"):
            media_type += "; charset=utf-8"
        etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
        self._read[name] = found = _Asset(stamp, body, etag, media_type)
        return found

    async def endpoint(self, request: Request) -> Response:
        found = self.asset(request.path_params["name"])
        headers = {"ETag": found.etag, "Cache-Control": CACHE_CONTROL}
        asked = _etags(request.headers.get("if-none-match", ""))
        if found.etag in asked or "*" in asked:
            return Response(status_code=304, headers=headers)
        body = b"" if request.method == "HEAD" else found.body
        response = Response(body, media_type=found.media_type, headers=headers)
        if request.method == "HEAD":
            response.headers["content-length"] = str(len(found.body))
        return response

    def route(self, prefix: str = "/static") -> Route:
        return Route(prefix + "/{name}", self.endpoint, methods=["GET", "HEAD"])


def _etags(header: str) -> set[str]:
    """The entity tags of an If-None-Match header (weak ones compared by their opaque part)."""
    return {tag.strip().removeprefix("W/") for tag in header.split(",") if tag.strip()}


__all__ = ["Assets"]
