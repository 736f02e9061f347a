"""util.lock: one build of a board's kernel at a time, across processes."""

import subprocess
import sys
import threading
import time

from bringup.util import lock


def test_a_second_holder_waits_and_says_for_whom(tmp_path):
    f = tmp_path / "b" / "5.10.lock"
    said, order = [], []
    with lock.exclusive(f, "qemu-arm/5.10", say=said.append):
        assert said == [] and f.read_text() == f"pid {__import__('os').getpid()}\n"

        def second():
            with lock.exclusive(f, "qemu-arm/5.10", say=said.append):
                order.append("second")

        t = threading.Thread(target=second)
        t.start()
        time.sleep(0.3)
        assert t.is_alive() and order == [], "the second waits while the first holds the lock"
        order.append("first done")
    t.join(5)
    assert order == ["first done", "second"]
    assert len(said) == 1 and said[0].startswith("  waiting for pid ") and "building qemu-arm/5.10" in said[0]


def test_a_killed_holder_leaves_no_lock(tmp_path):
    f = tmp_path / "x.lock"
    code = (
        "from bringup.util import lock; import os, pathlib\n"
        f"with lock.exclusive(pathlib.Path({str(f)!r}), 'x'):\n    os._exit(9)"
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 9
    said = []
    with lock.exclusive(f, "x", say=said.append):
        pass
    assert said == []


# a holder of a board for several steps (as a study is): it takes the board, then goes into
# the steps one line on its standard input at a time: a step that takes the board again, then
# a step of its own (lock.doing) with one taking the board again inside it
STEPPING = """
import sys
from bringup.util import lock
d = sys.argv[1]
def next_step(line):
    print(line, flush=True)
    sys.stdin.readline()
with lock.board(d, "study"):
    next_step("held")
    with lock.board(d, "boot-timing"):  # a step taking the board again (as aa's boot timing does)
        next_step("in boot-timing")
    with lock.doing(d, "footprint-report"), lock.board(d, "footprint"):
        next_step("in footprint")
    next_step("between")
"""


def test_the_board_lock_says_the_step_its_holder_is_in_and_a_waiting_run_follows_it(tmp_path, monkeypatch):
    """The study's lock keeps its pid and since as the study moves from step to step; the file
    says the step (the study's own, not a step re-taking the board inside it) and a run
    waiting for the board says each change."""
    import os
    import re

    d = tmp_path / "qemu-arm"
    f = d / ".lock"
    p = subprocess.Popen(
        [sys.executable, "-c", STEPPING, str(d)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    monkeypatch.setattr(lock, "POLL", 0.05)
    said: list[str] = []
    got: list[str] = []
    waiter = None

    def go_on(expected: str) -> str:
        if expected != "held":
            p.stdin.write("\n")
            p.stdin.flush()
        assert p.stdout.readline().strip() == expected
        return f.read_text()

    try:
        first = go_on("held")
        m = re.fullmatch(rf"pid {p.pid}, study, since (\S+)\n", first)
        assert m, first
        since = m.group(1)

        def second():
            with lock.board(d, "boot-timing", say=said.append):
                got.append(f.read_text())

        waiter = threading.Thread(target=second)
        waiter.start()
        deadline = time.monotonic() + 60  # a loaded host: the thread may take a while to look
        while not said and time.monotonic() < deadline:
            time.sleep(0.05)
        assert said and said[0].startswith(f"  waiting for pid {p.pid}, study, since {since}, which measures")
        assert go_on("in boot-timing") == f"pid {p.pid}, study: boot-timing, since {since}\n"
        assert go_on("in footprint") == f"pid {p.pid}, study: footprint-report, since {since}\n"
        deadline = time.monotonic() + 60  # a loaded host: the waiter looks every POLL seconds
        while not any("study: footprint-report," in s for s in said) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert go_on("between") == first  # out of the steps: as it was, pid and since kept
        assert waiter.is_alive() and got == []
        p.stdin.write("\n")
        p.stdin.flush()
        assert p.wait(30) == 0
        waiter.join(10)
    finally:
        if p.poll() is None:
            p.kill()
    assert "which measures board qemu-arm" in said[0]
    assert f"  still waiting for pid {p.pid}, study: footprint-report, since {since}" in said
    assert got == [f"pid {os.getpid()}, boot-timing, since {got[0].split('since ')[1]}"]
