"""The connections `quiz serve` keeps: limited in number, in the time to send a request, and in idleness.

uvicorn starts its keep-alive timer only after a first response, so a client that connects and
sends nothing (or a header a byte a minute) keeps its connection, and a file descriptor, for ever:
a few hundred such half-open connections, no token needed, and the server can accept no one. This
protocol (uvicorn's own h11 one, with these limits added) closes:

- a connection that has not sent a whole request (its headers and body) `REQUEST_SECONDS` after
  it opened or after its last response;
- a kept-alive connection idle for `IDLE_SECONDS` (uvicorn's keep-alive timeout);
- beyond `ANONYMOUS_CONNECTIONS` connections that have not yet presented the token (cookie or
  ``?token=``), the oldest of them: a newcomer is always let in. Every new connection, the user's
  browser's too, is anonymous until its first request is read, so refusing newcomers (as a plain
  cap does) lets anyone who can reach the port, holding connections open and re-opening them as
  they are closed, refuse the user's every page. Evicting the oldest instead means a hostile
  client churns only its own connections: the user's request is read within a turn or two of the
  event loop, long before that many newer connections have pushed it out, and from then on the
  connection is the user's and no anonymous one can take its place;
- beyond `MAX_CONNECTIONS` in all (a bound on file descriptors), a newcomer, when no anonymous
  connection is left to evict: only the token holder's own connections are then open.

It also sets ``TCP_NODELAY`` on every connection: a response is a few small writes, and without it
each waits for the browser's delayed acknowledgement (about 40 ms a page on a kept-alive
connection instead of under a millisecond).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import socket
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

if TYPE_CHECKING:
    from starlette.types import Scope

try:  # FIONREAD: the bytes waiting in a socket (POSIX); elsewhere no connection is passed over
    import fcntl
    import termios

    _FIONREAD: int | None = termios.FIONREAD
except ImportError:  # pragma: no cover - Windows
    _FIONREAD = None
_PASSED_OVER = 16

ANONYMOUS_CONNECTIONS = 256
MAX_CONNECTIONS = 512
REQUEST_SECONDS = 10.0
IDLE_SECONDS = 5.0

_RECEIVED = (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.ERROR)
"""States of the client's side once its whole request has been read (or the connection is over)."""


@dataclass
class Budget:
    """One server's: the token check, and its connections that have not presented the token,
    oldest first (a dict keeps the order)."""

    presents_token: Callable[[Scope], bool]
    anonymous: dict[GuardedProtocol, None] = field(default_factory=dict)

    def evictable(self) -> GuardedProtocol | None:
        """The anonymous connection to close for a newcomer: the oldest, unless a request waits
        unread in its socket. Under a flood of new connections the event loop may accept hundreds
        before it reads the user's request, which then waits in the kernel: such a connection is
        passed over (moved to the newest end) for the next oldest, up to `_PASSED_OVER` of them."""
        for candidate in list(itertools.islice(self.anonymous, _PASSED_OVER)):
            if not candidate.unread():
                return candidate
            del self.anonymous[candidate]
            self.anonymous[candidate] = None
        return next(iter(self.anonymous), None)


class GuardedProtocol(H11Protocol):
    """uvicorn's h11 protocol with connection budgets, a request deadline and TCP_NODELAY.

    Made for one server by `guarded_protocol`, which gives it the token check and the server's
    own budget of anonymous connections."""

    budget: ClassVar[Budget]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.request_deadline: asyncio.TimerHandle | None = None
        self.trusted = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.budget.anonymous) >= ANONYMOUS_CONNECTIONS or len(self.connections) > MAX_CONNECTIONS:
            oldest = self.budget.evictable()
            if oldest is None:  # the token holder's own connections fill the server: refused
                transport.abort()  # connection_lost follows and forgets it
                return
            oldest.evict()
        self.budget.anonymous[self] = None
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._arm()

    def unread(self) -> bool:
        """Whether bytes wait in this connection's socket that the event loop has not read yet."""
        sock = self.transport.get_extra_info("socket")
        if sock is None or _FIONREAD is None:
            return False
        try:
            waiting = fcntl.ioctl(sock.fileno(), _FIONREAD, b"\0\0\0\0")
        except OSError:
            return False
        return int.from_bytes(waiting, sys.byteorder) > 0

    def evict(self) -> None:
        """Close this anonymous connection now, for a newer one."""
        self.budget.anonymous.pop(self, None)
        self._disarm()
        self.transport.abort()

    def handle_events(self) -> None:
        super().handle_events()
        scope = getattr(self, "scope", None)  # set by uvicorn once a request's headers are read
        if not self.trusted and scope is not None and self.budget.presents_token(scope):
            self.trusted = True
            self.budget.anonymous.pop(self, None)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state in _RECEIVED:
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self.budget.anonymous.pop(self, None)
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self.request_deadline = self.loop.call_later(REQUEST_SECONDS, self._too_slow)

    def _disarm(self) -> None:
        if self.request_deadline is not None:
            self.request_deadline.cancel()
            self.request_deadline = None

    def _too_slow(self) -> None:
        """No whole request in time: the connection is closed (a request being answered never is)."""
        self.request_deadline = None
        if self.conn.their_state not in _RECEIVED and not self.transport.is_closing():
            self.transport.close()


def guarded_protocol(presents_token: Callable[[Scope], bool]) -> type[GuardedProtocol]:
    """The protocol class of one server: ``presents_token`` tells whether a request carries the
    server's token; the budget of anonymous connections is this server's own."""
    return type("ServerProtocol", (GuardedProtocol,), {"budget": Budget(presents_token)})


__all__ = [
    "ANONYMOUS_CONNECTIONS",
    "IDLE_SECONDS",
    "MAX_CONNECTIONS",
    "REQUEST_SECONDS",
    "GuardedProtocol",
    "guarded_protocol",
]
