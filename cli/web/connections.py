"""The connections `quiz serve` keeps: limited in number, in the time to send a request, and in idleness.

uvicorn starts its keep-alive timer only after a first response, so a client that connects and
sends nothing (or a header a byte a minute) keeps its connection, and a file descriptor, for ever:
a few hundred such half-open connections, no token needed, and the server can accept no one. This
protocol (uvicorn's own h11 one, with three limits added) closes:

- a connection beyond `MAX_CONNECTIONS` at once (a browser opens about six per site);
- a connection that has not sent a whole request (its headers and body) `REQUEST_SECONDS` after
  it opened or after its last response;
- a kept-alive connection idle for `IDLE_SECONDS` (uvicorn's keep-alive timeout).

It also sets ``TCP_NODELAY`` on every connection: a response is a few small writes, and without it
each waits for the browser's delayed acknowledgement (about 40 ms a page on a kept-alive
connection instead of under a millisecond).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

MAX_CONNECTIONS = 64
REQUEST_SECONDS = 10.0
IDLE_SECONDS = 5.0

_RECEIVED = (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.ERROR)
"""States of the client's side once its whole request has been read (or the connection is over)."""


class GuardedProtocol(H11Protocol):
    """uvicorn's h11 protocol with a connection limit, a request deadline and TCP_NODELAY."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.request_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        over = len(self.connections) >= MAX_CONNECTIONS
        super().connection_made(transport)
        if over:
            transport.abort()  # connection_lost follows and forgets it
            return
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state in _RECEIVED:
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
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


__all__ = ["IDLE_SECONDS", "MAX_CONNECTIONS", "REQUEST_SECONDS", "GuardedProtocol"]
