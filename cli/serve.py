"""The `quiz serve` command: practice, review, stats and the authors' preview in a local browser.

Only typer is imported at the top: the web stack (starlette, uvicorn, jinja2) is imported when the
command runs, so no other command pays for it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from attnquiz.common import fail, say, user_errors

LOOPBACK = "127.0.0.1"
LOOPBACK_NAMES = {LOOPBACK, "localhost", "::1"}
"""Addresses only this computer can reach (no warning)."""


@user_errors
def serve_command(
    bank: Annotated[
        list[str] | None,
        typer.Argument(
            help="Banks to offer, by name or path (default: every bank found).",
            show_default=False,
        ),
    ] = None,
    port: Annotated[
        int, typer.Option("--port", "-p", min=0, max=65535, help="Port to listen on (0: any free port).")
    ] = 0,
    host: Annotated[
        str,
        typer.Option(
            "--host",
            help="Address to listen on. Anything but 127.0.0.1 lets other machines reach the server "
            "(they still need the token).",
        ),
    ] = LOOPBACK,
    open_browser: Annotated[
        bool, typer.Option("--open", help="Open the start page in the default web browser.")
    ] = False,
    db: Annotated[
        Path | None,
        typer.Option(
            "--db",
            help="History database file (default: $QUIZ_HOME/history.sqlite3, else the user data folder).",
            dir_okay=False,
        ),
    ] = None,
) -> None:
    """Practise, review, see your stats and preview banks in a web browser on this computer.

    The link printed at start carries a secret token: only someone with that link can use the
    server. Answers go to the same history as quiz run; Ctrl-C stops the server.

    Example: quiz serve week1 week2 --open
    """
    import socket

    from attnquiz.engine import banks

    for name in bank or ():
        banks.find(name)  # an unknown bank is one clear line now, not an error page later
    if host not in LOOPBACK_NAMES:
        say(
            f"quiz: warning: listening on {host}, not {LOOPBACK}: other computers that can reach this "
            "address can connect (the token still guards every page; anyone who sees the link can use it)",
            err=True,
        )
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        listener = socket.socket(family, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((host, port))
        listener.listen(128)
    except (OSError, OverflowError) as exc:
        fail(f"cannot listen on {host}:{port}: {getattr(exc, 'strerror', None) or exc}")
    bound_port = listener.getsockname()[1]
    serve(listener, host, bound_port, tuple(bank or ()), db, open_browser=open_browser)


def serve(
    listener: object, host: str, port: int, bank_refs: tuple[str, ...], db: Path | None, *, open_browser: bool
) -> None:
    """Run the server on an already listening socket until Ctrl-C (or SIGTERM)."""
    import socket

    import uvicorn

    from attnquiz.web.app import ServeSettings, build_app
    from attnquiz.web.security import Guard, allowed_hosts, new_token

    assert isinstance(listener, socket.socket)
    guard = Guard(token=new_token(), port=port, hosts=allowed_hosts(host, port))
    app, state = build_app(ServeSettings(banks=bank_refs, db=db), guard)
    shown = f"[{host}]" if ":" in host else host
    if host in {"0.0.0.0", "::"}:
        shown = LOOPBACK if host == "0.0.0.0" else "[::1]"
    url = f"http://{shown}:{port}/?token={guard.token}"
    say("quiz serve: open this link in a browser (Ctrl-C stops the server):")
    say(f"    {url}")
    if open_browser:
        import webbrowser

        webbrowser.open(url)
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="off",
        server_header=False,
        date_header=False,
        # Nothing stands in front of this server: X-Forwarded-* headers are a client's claims.
        proxy_headers=False,
    )
    server = uvicorn.Server(config)
    try:
        server.run(sockets=[listener])
    finally:
        state.close()
        listener.close()
        say("quiz serve: stopped (every answer given is in the history)")


__all__ = ["serve_command"]
