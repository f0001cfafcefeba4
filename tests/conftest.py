"""Test-wide settings: quiz's files (history, bank cache) go to a throw-away folder, never the user's."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile

import pytest

_HOME = tempfile.mkdtemp(prefix="quiz-tests-")


def pytest_configure(config: pytest.Config) -> None:
    # Set before any test runs, so in-process commands and every subprocess inherit it; tests of
    # QUIZ_HOME itself override it with monkeypatch.
    os.environ["QUIZ_HOME"] = _HOME
    # A shell starts a command run in the background (`cmd &`, `nohup cmd &`) with SIGINT ignored,
    # and an ignored signal stays ignored in every process started after: the tests of Ctrl-C (in
    # this process and in the commands they start) would then see nothing. Python's own handler
    # is what a terminal gives, and the commands the tests start get the default from it.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(_HOME, ignore_errors=True)
