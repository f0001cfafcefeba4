"""Who may drive `quiz serve`: the token, the Host and Origin checks, and the headers every response carries.

The server listens on the loopback address, where every local user (and every web page the user
visits, through their browser) can reach it. So, as Jupyter does:

- every request carries a random token: in the URL printed at start (``?token=...``), which is
  swapped for an ``HttpOnly; SameSite=Strict`` cookie and a redirect to the same page without it;
  other local users do not know the token, and other sites' pages get no cookie (403);
- the Host header must name the address the server is bound to, so a DNS-rebinding page (a
  hostile name that resolves to 127.0.0.1) is refused even before the token is looked at;
- a POST must come from the server's own pages (its Origin, and Sec-Fetch-Site when the browser
  sends it), and its form carries a CSRF token (checked by the page that reads the form);
- every response forbids framing, inline scripts and styles, loads from elsewhere, MIME sniffing
  and the Referer header (the token was in a URL once).
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, quote, urlencode

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
"""Only the server's own CSS, JS and fetches (the live reload); no inline code, no framing."""

SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
)
_SAFE_METHODS = {"GET", "HEAD"}
_SAME_SITE_FETCHES = {"same-origin", "none"}
"""Sec-Fetch-Site values of requests from the server's own pages, or typed by the user."""


def new_token() -> str:
    """A fresh random token (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


def allowed_hosts(host: str, port: int) -> frozenset[str] | None:
    """The Host headers that name the bound address (None: any, for a wildcard address).

    The loopback addresses are also reachable as ``localhost``; a wildcard bind (0.0.0.0, ::) is
    reached by every name of the machine, which the server cannot know: there the token alone
    guards it (and `quiz serve` warns).
    """
    if host in {"0.0.0.0", "::", ""}:
        return None
    shown = f"[{host}]" if ":" in host else host
    names = {f"{shown}:{port}"}
    if host in {"127.0.0.1", "::1", "localhost"}:
        names |= {f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}"}
    return frozenset(names)


@dataclass(frozen=True)
class Guard:
    """The server's secrets and where it listens."""

    token: str
    port: int
    hosts: frozenset[str] | None
    csrf_secret: bytes = field(default_factory=lambda: secrets.token_bytes(32))

    @property
    def cookie_name(self) -> str:
        """The cookie holding the token: one per port (cookies are shared by every port of a host)."""
        return f"quiz_token_{self.port}"

    def token_ok(self, given: str | None) -> bool:
        """Whether ``given`` is the server's token (compared in constant time)."""
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def presents_token(self, scope: Scope) -> bool:
        """Whether a request carries the token, in its cookie or its query (``?token=``)."""
        return self.token_ok(_cookie(scope, self.cookie_name)) or self.token_ok(_query_token(scope))

    def csrf_token(self, scope_name: str) -> str:
        """The CSRF token of the forms of one practice session (``scope_name``) or of the start forms."""
        return hmac.new(self.csrf_secret, scope_name.encode(), "sha256").hexdigest()

    def csrf_ok(self, scope_name: str, given: object) -> bool:
        """Whether a form's CSRF field is the one its pages were given."""
        return isinstance(given, str) and hmac.compare_digest(given, self.csrf_token(scope_name))


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return str(value.decode("latin-1"))
    return None


def _query_token(scope: Scope) -> str | None:
    query = scope.get("query_string", b"").decode("latin-1")
    return next((v for k, v in parse_qsl(query, keep_blank_values=True) if k == "token"), None)


def same_server_location(path: str, query: str) -> str:
    """A Location on this server for the decoded request ``path``: quoted, and starting with one
    ``/``, since ``//evil.example/`` (or ``/\\evil.example``, which browsers read alike) would be
    a protocol-relative address of another site."""
    return "/" + quote(path, safe="/").lstrip("/") + (f"?{query}" if query else "")


def _cookie(scope: Scope, name: str) -> str | None:
    raw = _header(scope, b"cookie")
    if raw is None:
        return None
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(raw)
    except Exception:  # a malformed Cookie header is treated as no cookie
        return None
    morsel = jar.get(name)
    return morsel.value if morsel is not None else None


class GuardMiddleware:
    """ASGI middleware: refuses what the module docstring says, and adds the security headers."""

    def __init__(self, app: ASGIApp, guard: Guard) -> None:
        self.app = app
        self.guard = guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        guard = self.guard
        host = _header(scope, b"host")
        if guard.hosts is not None and (host is None or host.lower() not in guard.hosts):
            await _refuse(send, 403, "This address is not the one quiz serve listens on.")
            return
        query = scope.get("query_string", b"").decode("latin-1")
        pairs = parse_qsl(query, keep_blank_values=True)
        given = next((v for k, v in pairs if k == "token"), None)
        if scope["method"] in _SAFE_METHODS and guard.token_ok(given):
            # Swap the token in the URL for a cookie, and show the page without it in the address bar.
            rest = urlencode([(k, v) for k, v in pairs if k != "token"])
            location = same_server_location(scope.get("path", "/"), rest)
            cookie = f"{guard.cookie_name}={guard.token}; Path=/; HttpOnly; SameSite=Strict"
            await _send(send, 303, b"", [(b"location", location.encode()), (b"set-cookie", cookie.encode())])
            return
        if not guard.token_ok(_cookie(scope, guard.cookie_name)):
            await _refuse(
                send,
                403,
                "This quiz server needs its token: open the link that quiz serve printed "
                "(http://...?token=...).",
            )
            return
        if scope["method"] not in _SAFE_METHODS and not _same_origin(scope, host):
            await _refuse(send, 403, "A form of another site cannot be sent to quiz serve.")
            return
        await self.app(scope, receive, _with_headers(send))


def _same_origin(scope: Scope, host: str | None) -> bool:
    """Whether a POST comes from the server's own pages (Origin, and Sec-Fetch-Site if sent).

    Under ``Referrer-Policy: no-referrer`` browsers send ``Origin: null`` even with a form of the
    page's own origin, so "null" is taken only with ``Sec-Fetch-Site: same-origin`` (a header that
    pages cannot set); a sandboxed frame of another site sends "null" with "cross-site".
    """
    fetch_site = _header(scope, b"sec-fetch-site")
    if fetch_site is not None and fetch_site not in _SAME_SITE_FETCHES:
        return False
    origin = _header(scope, b"origin")
    if origin is None:
        # Browsers send Origin with every POST; a client that does not is not a browser page
        # of another site (which cannot omit it), and it still needs the cookie and the CSRF field.
        return True
    if origin == "null":
        return fetch_site == "same-origin"
    return host is not None and origin.lower() == f"http://{host.lower()}"


def _with_headers(send: Send) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            present = {k.lower() for k, _ in message.get("headers", ())}
            extra = [(k, v) for k, v in SECURITY_HEADERS if k not in present]
            message = {**message, "headers": [*message.get("headers", ()), *extra]}
        await send(message)

    return sending


async def _refuse(send: Send, status: int, text: str) -> None:
    await _send(send, status, (text + "\n").encode(), [(b"content-type", b"text/plain; charset=utf-8")])


async def _send(send: Send, status: int, body: bytes, headers: Iterable[tuple[bytes, bytes]]) -> None:
    all_headers = [*headers, *SECURITY_HEADERS, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": all_headers})
    await send({"type": "http.response.body", "body": body})


__all__ = [
    "CONTENT_SECURITY_POLICY",
    "Guard",
    "GuardMiddleware",
    "allowed_hosts",
    "new_token",
    "same_server_location",
]
