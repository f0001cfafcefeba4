"""`attnquiz.web.isolation`: work in a forked child under a CPU-time limit, whatever the work does.

Run in a fresh interpreter of one thread, as the server is (forking a process with threads, such as
pytest's, is what the module's design rules out)."""

from __future__ import annotations

import json
import subprocess
import sys

SCRIPT = r"""
import asyncio, json, os, time
from attnquiz.web.isolation import in_child

def sleeper():
    time.sleep(3600)

def big():
    return 10 ** 10 ** 9  # one C call: no Python-level alarm or thread stops it

def bad():
    raise ValueError("a bank's bug")

def rude():
    os.close(1)  # closes what it was not given; the result still comes back
    return "still here"

async def main():
    outcomes = {}
    began = time.monotonic()
    ticks = 0

    async def ticker():
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    beat = asyncio.create_task(ticker())
    for name, work, seconds in [
        ("value", lambda: {"a": [1, 2]}, 5),
        ("big", big, 1),
        ("raised", bad, 5),
        ("rude", rude, 5),
        ("exit", lambda: os._exit(3), 5),
        ("asleep", sleeper, 1),  # uses no CPU: the wall clock (6 x 1 + 10 s) stops it
    ]:
        outcome = await in_child(work, cpu_seconds=seconds)
        outcomes[name] = [outcome.kind, outcome.value if outcome.kind == "done" else outcome.error]
    beat.cancel()
    outcomes["ticks while children worked"] = ticks
    outcomes["children left"] = len([p for p in os.listdir("/proc") if p.isdigit() and
                                     open(f"/proc/{p}/stat").read().split()[3] == str(os.getpid())])
    print(json.dumps(outcomes))

asyncio.run(main())
"""


def test_a_child_returns_its_value_or_is_stopped_and_the_loop_keeps_running() -> None:
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300, check=False
    )
    assert run.returncode == 0, run.stderr
    outcomes = json.loads(run.stdout)
    assert outcomes["value"] == ["done", {"a": [1, 2]}]
    assert outcomes["big"] == ["stopped", "it took more than 1 s of computing"]
    assert outcomes["raised"] == ["raised", "a bank's bug"]
    assert outcomes["rude"] == ["done", "still here"]
    assert outcomes["exit"][0] == "stopped"
    assert "exit status 3" in outcomes["exit"][1]
    assert outcomes["asleep"] == ["stopped", "it took longer than 16 s"]
    assert outcomes["ticks while children worked"] > 10  # the event loop ran all along
    assert outcomes["children left"] == 0
