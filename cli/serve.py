"""The `quiz serve` command: practice, review, stats and the authors' preview in a local browser.

Only typer is imported at the top: the web stack (starlette, uvicorn, jinja2) is imported when the
command runs, so no other command pays for it.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from attnquiz.common import fail, say, user_errors

if TYPE_CHECKING:
    import socket

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
    time_limit: Annotated[
        int,
        typer.Option(
            "--time-limit",
            min=1,
            max=3600,
            help="CPU seconds a page may compute (loading banks, a plugin's import, the preview's variants) "
            "before it is stopped with a message; grading one answer has 5.",
        ),
    ] = 20,
    db: Annotated[
        Path | None,
        typer.Option(
            "--db",
            help="History database file (default: $QUIZ_HOME/history.sqlite3, else the user data folder).",
            dir_okay=False,
        ),
    ] = None,
    scan: Annotated[
        Path | None,
        typer.Option(
            "--scan",
            help="The answers.csv of a `quiz scan`: its review (ANSWERS.review.json) can be settled "
            "at /scan, as `quiz scan --fix` does.",
            dir_okay=False,
        ),
    ] = None,
) -> None:
    """Practise, review, see your stats and preview banks in a web browser on this computer.

    The link printed at start carries a secret token: only someone with that link can use the
    server. Answers go to the same history as quiz run; Ctrl-C stops the server.

    Example: quiz serve week1 week2 --open
    """
    from attnquiz.engine.bank import finding as banks

    if scan is not None and not scan.is_file():
        fail(f"{scan}: no answers file (run `quiz scan` first)", 2)
    for name in bank or ():
        banks.find(name)  # an unknown bank is one clear line now, not an error page later
    if host not in LOOPBACK_NAMES:
        say(
            f"quiz: warning: listening on {host}, not {LOOPBACK}: other computers that can reach this "
            "address can connect (the token still guards every page; anyone who sees the link can use it)",
            err=True,
        )
    try:
        listener = listen(host, port)
    except (OSError, OverflowError) as exc:
        fail(f"cannot listen on {host}:{port}: {getattr(exc, 'strerror', None) or exc}")
    bound_port = listener.getsockname()[1]
    serve(
        listener,
        host,
        bound_port,
        tuple(bank or ()),
        db,
        open_browser=open_browser,
        time_limit=time_limit,
        scan=scan.resolve() if scan is not None else None,
    )


def listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host``:``port`` (0: any free port)."""
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named, so that asyncio knows the accepted sockets for TCP ones and sets
    # TCP_NODELAY on them (it checks the socket's protocol, which is 0 when left unsaid).
    listener = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((host, port))
        listener.listen(128)
    except BaseException:
        listener.close()
        raise
    return listener


def serve(
    listener: object,
    host: str,
    port: int,
    bank_refs: tuple[str, ...],
    db: Path | None,
    *,
    open_browser: bool,
    time_limit: int = 20,
    scan: Path | None = None,
) -> None:
    """Run the server on an already listening socket until Ctrl-C (or SIGTERM)."""
    import socket

    import uvicorn

    from attnquiz.web.app import build_app
    from attnquiz.web.connections import IDLE_SECONDS, guarded_protocol
    from attnquiz.web.security import Guard, allowed_hosts, new_token
    from attnquiz.web.state import ServeSettings

    assert isinstance(listener, socket.socket)
    guard = Guard(token=new_token(), port=port, hosts=allowed_hosts(host, port))
    app, state = build_app(ServeSettings(banks=bank_refs, db=db, time_limit=time_limit, scan=scan), guard)
    shown = f"[{host}]" if ":" in host else host
    if host in {"0.0.0.0", "::"}:
        shown = LOOPBACK if host == "0.0.0.0" else "[::1]"
    url = f"http://{shown}:{port}/?token={guard.token}"
    say("quiz serve: open this link in a browser (Ctrl-C stops the server):")
    say(f"    {url}")
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="off",
        server_header=False,
        date_header=False,
        # Nothing stands in front of this server: X-Forwarded-* headers are a client's claims.
        proxy_headers=False,
        http=guarded_protocol(guard.presents_token),
        timeout_keep_alive=int(IDLE_SECONDS),
    )
    server = uvicorn.Server(config)
    # The redirect file's folder exists from here on, and is removed however the server stops (Ctrl-C
    # may come while the browser is still being started).
    opener: Path | None = None
    try:
        if open_browser:
            try:
                opener = _private_folder()
                _open_in_browser(url, opener)
            except OSError as exc:
                say(f"quiz serve: cannot open a browser ({exc.strerror or exc}): open the link", err=True)
        server.run(sockets=[listener])
    finally:
        state.close()
        listener.close()
        if opener is not None:
            shutil.rmtree(opener, ignore_errors=True)
        say("quiz serve: stopped (every answer given is in the history)")


def _private_folder() -> Path:
    """A new folder only this user can enter (mode 0700)."""
    import tempfile

    return Path(tempfile.mkdtemp(prefix="quiz-serve-"))


def _open_in_browser(url: str, folder: Path) -> None:
    """Open ``url`` in the default browser through a private redirect file, as Jupyter does: the
    browser's command line, which every local user can read in the process list for as long as
    the browser runs, names the file, never the token. The file is readable by this user only, in
    a folder of its own (removed when the server stops), and it holds the link."""
    import html
    import os
    import webbrowser

    page = folder / "open.html"
    link = html.escape(url, quote=True)
    descriptor = os.open(page, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(
            '<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
            f'<meta http-equiv="refresh" content="0;url={link}"><title>quiz serve</title></head>'
            f'<body><p><a href="{link}">Open quiz</a></p></body></html>\n'
        )
    webbrowser.open(page.as_uri())


__all__ = ["serve_command"]
