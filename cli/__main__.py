"""``python -m cli``: the same as the ``quiz`` script."""

from cli.main import main

main()
