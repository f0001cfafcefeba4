"""Test-wide settings: quiz's files (history, bank cache) go to a throw-away folder, never the user's."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

_HOME = tempfile.mkdtemp(prefix="quiz-tests-")


def pytest_configure(config: pytest.Config) -> None:
    # Set before any test runs, so in-process commands and every subprocess inherit it; tests of
    # QUIZ_HOME itself override it with monkeypatch.
    os.environ["QUIZ_HOME"] = _HOME


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(_HOME, ignore_errors=True)
