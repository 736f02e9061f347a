"""util/progress.py: percent and time left from the counts callers pass; plain lines
when the output is not a terminal, a tqdm bar when it is."""

import io

from bringup.util.progress import Progress, fmt_duration


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def plain(total, every=20.0):
    lines: list[str] = []
    clock = Clock()
    p = Progress(
        "  5.10: make zImage", total=total, unit="commands", say=lines.append, every=every, clock=clock, tty=False
    )
    return p, lines, clock


def test_plain_line_has_percent_count_elapsed_and_time_left():
    p, lines, clock = plain(100)
    clock.t += 10
    p.update(25, "  CC      kernel/fork.o")
    assert lines == []  # not before `every` seconds
    clock.t += 20  # 30 s in, 40 done: 45 s left at that rate
    p.update(40, "  CC      kernel/fork.o")
    assert lines == ["  5.10: make zImage: 40 % (40/100 commands), 0m30s, about 0m45s left  CC      kernel/fork.o"]
    clock.t += 5
    p.update(50)
    assert len(lines) == 1, "at most one plain line every 20 s"


def test_without_a_total_only_count_and_elapsed():
    p, lines, clock = plain(None, every=0)
    clock.t += 75
    p.update(12)
    assert lines == ["  5.10: make zImage: 12 commands, 1m15s"]
    assert p.fraction() is None and p.remaining() is None


def test_a_total_exceeded_is_raised_so_percent_stays_at_most_100():
    p, lines, clock = plain(10, every=0)
    clock.t += 10
    p.update(15)
    assert p.total == 15 and p.fraction() == 1.0
    assert lines[-1].startswith("  5.10: make zImage: 100 % (15/15 commands), 0m10s, about 0m00s left")


def test_advance_and_boot_rounds_eta():
    lines: list[str] = []
    clock = Clock()
    p = Progress("  boot rounds", total=10, unit="boots", say=lines.append, every=0, clock=clock, tty=False)
    for _ in range(4):
        clock.t += 6
        p.advance()
    assert lines[-1] == "  boot rounds: 40 % (4/10 boots), 0m24s, about 0m36s left"


def test_a_terminal_gets_a_bar_and_callers_lines_above_it():
    out = io.StringIO()
    said: list[str] = []
    with Progress("  5.10: make zImage", total=200, unit="commands", say=said.append, stream=out, tty=True) as p:
        p.update(50)
        p.say("  run 1/5 5.10: ok")
    text = out.getvalue()
    assert "5.10: make zImage" in text and "25%" in text and "50/200" in text
    assert said == ["  run 1/5 5.10: ok"]


def test_durations():
    assert fmt_duration(0) == "0m00s" and fmt_duration(61.9) == "1m01s" and fmt_duration(3725) == "1h02m"
