"""``python -m attnquiz``: the same as the ``quiz`` script."""

from attnquiz.main import main

main()
