"""The host-load guard: /proc parsing on known text, and a real CPU hog beside a
measured window is caught."""

import os
import subprocess
import sys
import time

from bringup.util import hostload

STAT = """cpu  1000 50 300 9000 100 20 30 40 0 0
cpu0 500 25 150 4500 50 10 15 20 0 0
intr 12345
"""


def test_parse_stat_and_loadavg():
    c = hostload.parse_stat(STAT)
    assert (c.busy, c.idle, c.steal) == (1000 + 50 + 300 + 20 + 30, 9000 + 100, 40)
    assert hostload.parse_loadavg("0.52 0.58 0.59 2/345 12345\n") == 0.52


def test_parse_pid_stat_with_a_space_in_the_name():
    line = "4242 (qemu system arm) S 4200 4242 4200 0 -1 4194560 100 0 0 0 700 300 5 7 20 0 3 0 1 2 3"
    assert hostload.parse_pid_stat(line) == (4200, 700 + 300 + 5 + 7)


def snap(t, busy, ours, calib, steal=0):
    return hostload.Snapshot(
        t=t, load1=1.0, cpu=hostload.CpuTimes(busy=busy, idle=0, steal=steal), ours=ours, calibration=calib, ncpu=2
    )


def test_judge_separates_our_work_from_others():
    tick = hostload.TICK
    quiet = hostload.judge(snap(0, 0, 0, 1000), snap(10, 10 * tick, 9 * tick, 990))  # we used 0.9 CPU, others 0.1
    assert quiet["other_cpu_pct"] == 10.0 and quiet["disturbed"] is None
    busy = hostload.judge(snap(0, 0, 0, 1000), snap(10, 20 * tick, 9 * tick, 990))  # others 1.1 CPU
    assert busy["other_cpu_pct"] == 110.0 and "other processes used 110 %" in busy["disturbed"]
    slow = hostload.judge(snap(0, 0, 0, 1000), snap(10, 0, 0, 600))
    assert "calibration loop ran at 0.60" in slow["disturbed"]
    stolen = hostload.judge(snap(0, 0, 0, 1000), snap(10, 0, 0, 1000, steal=3 * tick))
    assert "steal time 30 %" in stolen["disturbed"]


def test_a_real_cpu_hog_is_seen_as_other_load():
    before = hostload.snapshot()
    # the hog burns a fixed CPU time (not a wall time: on a busy host it would get too
    # little of a CPU to judge), at most 30 s of wall time
    hog = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time\nt=time.time()\nwhile time.process_time()<0.8 and time.time()-t<30: pass",
        ]
    )
    _, _, ru = os.wait4(hog.pid, 0)
    hog.returncode = 0
    time.sleep(0.05)
    after = hostload.snapshot()
    hog_pct = 100 * (ru.ru_utime + ru.ru_stime) / (after.t - before.t)  # the hog's share of one CPU
    # the hog is our child here, so it counts as ours; judged from the point of view of
    # a process that is not its parent, it is another process's load
    from_init = hostload.judge(
        before, hostload.Snapshot(after.t, after.load1, after.cpu, before.ours, after.calibration, after.ncpu)
    )
    assert ru.ru_utime + ru.ru_stime >= 0.7, "the hog did not burn its CPU time"
    assert from_init["other_cpu_pct"] >= 0.8 * hog_pct, (from_init, hog_pct)
    # the hog's CPU and whatever else ran beside it: others' load either way
    assert from_init["other_cpu_pct"] > hostload.OTHER_CPU_PCT and from_init["disturbed"], (from_init, hog_pct)
    # from our own point of view the hog was our work (a reaped child), not a disturbance
    ours = hostload.judge(before, after)
    assert ours["other_cpu_pct"] <= from_init["other_cpu_pct"] - 0.8 * hog_pct
