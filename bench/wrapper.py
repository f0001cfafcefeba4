"""A small fresh process that runs one command and writes what its whole process tree used.

``python -I -S bench/wrapper.py USAGE_FILE COMMAND...``: starts COMMAND, waits for it, then reaps
every process it left behind (this process is their subreaper, so a worker or fork server orphaned
by its parent is reaped here, not by init), and writes to USAGE_FILE, as JSON, the exit status and
``getrusage(RUSAGE_CHILDREN)``: the CPU seconds of every process of the tree that was reaped (each
parent's reaped children add to it) and the largest peak resident set of any one of them.

Measured from here and not from the bench because a forked child's peak memory starts at its
parent's size (Linux carries the pre-exec address space's high-water mark over exec): forked from
this small interpreter (run without site, under 10 MB), the figure is quiz's own.
"""

import ctypes
import json
import os
import resource
import sys

PR_SET_CHILD_SUBREAPER = 36


def main() -> int:
    usage_file, command = sys.argv[1], sys.argv[2:]
    try:
        subreaper = ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        subreaper = False  # not Linux: orphans go to init, and their CPU is not counted (said in the JSON)
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(command[0], command)
        finally:
            os._exit(127)
    _, status = os.waitpid(pid, 0)
    while True:  # the orphans it left, now this process's children
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    figures = {"cpu": usage.ru_utime + usage.ru_stime, "maxrss_kb": usage.ru_maxrss, "subreaper": subreaper}
    descriptor = os.open(usage_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(descriptor, json.dumps(figures).encode())
    finally:
        os.close(descriptor)
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main())
