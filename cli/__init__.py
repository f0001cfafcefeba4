"""quiz: exam practice for a course on attention and Transformers.

Installed, this package holds everything: the command line (these modules, from the repository's
``cli/`` folder), the library ``attnquiz.engine`` (``engine/``, no terminal code) and the banks
``attnquiz.questions`` (``questions/``). The ``quiz`` script is ``attnquiz.main:main``.
"""
