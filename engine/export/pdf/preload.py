"""What the PDF workers' fork server imports once (see `pdf_workers.context`), so that every worker
forked from it starts with it: the export modules, the bank loader, every built-in generator (each
registered through the registry, as a bank's load would) and the Typst compiler.

Imported by the fork server only: nothing else imports this module (it would import every
generator module for nothing). Typst compiles nothing here: a compile starts Typst's threads,
and a process is forked from here.

It also sets SIGINT ignored in the fork server before the server notes its handlers: each worker is
forked with them, so Ctrl-C at a terminal (sent to the whole process group) can never reach a worker
still starting, before `pdf_workers.serve` ignores it, and kill it with a traceback.
"""

from __future__ import annotations

import signal

import typst  # noqa: F401  (imported for the workers forked from here)

from attnquiz.engine.bank import finding as banks  # noqa: F401
from attnquiz.engine.export.pdf import workers as pdf_workers  # noqa: F401
from attnquiz.engine.generators import MODULES
from attnquiz.engine.registry import generators

for _name in MODULES:
    generators.get(_name)

signal.signal(signal.SIGINT, signal.SIG_IGN)  # the fork server's, so every worker's from its fork
