"""``python -m attnquiz``: the same as the ``quiz`` script.

One difference is CPython's own: under ``-m``, a Ctrl-C that lands while code built by a string
``exec`` runs (dataclasses, typing) makes the interpreter end itself with SIGINT after quiz has
cleaned up and chosen status 130, so the parent sees "killed by SIGINT" (a shell shows 130 either
way). The ``quiz`` script always exits with 130."""

from attnquiz.main import main

main()
