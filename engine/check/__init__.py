"""``quiz check``: every item of a bank built and graded over many seeds, in a child process for banks with
plugins, and its report."""
