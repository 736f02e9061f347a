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
