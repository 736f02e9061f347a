"""Outputs of workload steps (docs/workloads.md): the elapsed-time marker the
runner prints after each step, and a metric read by its regular expression."""

from __future__ import annotations

import re

from bringup.parse.errors import integer

# printed by the guest after each step: uptime before, uptime after, exit status; not
# always at the start of a line (a program's last line may lack its newline: PostMark's "pm>")
ELAPSED = re.compile(r"@@@ ELAPSED ([0-9]+(?:\.[0-9]+)?) ([0-9]+(?:\.[0-9]+)?) rc=(-?[0-9]+)\s*$", re.M)


def wrap(cmd: str) -> str:
    """The guest command of a step: its output (stdout and stderr) and then the marker.
    /proc/uptime has 10 ms resolution; the step runs in a subshell."""
    return (
        "t0=$(cat /proc/uptime); ( " + cmd + " ) 2>&1; rc=$?; t1=$(cat /proc/uptime); "
        'echo "@@@ ELAPSED ${t0%% *} ${t1%% *} rc=$rc"'
    )


def split(text: str) -> tuple[str, float | None, int | None]:
    """A step's console text as (its own output, elapsed seconds, exit status);
    None, None when the marker is missing (the step never ended)."""
    found = list(ELAPSED.finditer(text))
    if not found:
        return text, None, None
    m = found[-1]
    return text[: m.start()], round(float(m.group(2)) - float(m.group(1)), 3), integer(m.group(3))


# a clock time as GStreamer prints one ("Execution ended after 0:00:12.345678901"): h:mm:ss[.f]
CLOCK = re.compile(r"([0-9]+):([0-5][0-9]):([0-5][0-9](?:\.[0-9]+)?)")


def number(s: str) -> float | None:
    """A captured number; a clock time h:mm:ss[.f] is read as seconds.  None when it is neither."""
    c = CLOCK.fullmatch(s.strip())
    if c:
        return int(c.group(1)) * 3600 + int(c.group(2)) * 60 + float(c.group(3))
    try:
        v = float(s)
    except ValueError:
        return None
    return v if v == v and v not in (float("inf"), float("-inf")) else None


def metric(text: str, regex: str, scale: float = 1.0) -> float | None:
    """The number the regex's one group captures at its first match (a clock time h:mm:ss[.f]
    in seconds), times scale; None when nothing matches or the group is not a number."""
    m = re.search(regex, text, re.M)
    if m is None:
        return None
    try:
        g = m.group(1)
    except IndexError:  # no group
        return None
    v = None if g is None else number(g)
    return None if v is None else v * scale


def rate(count: float, v: float | None) -> float | None:
    """count / v: a rate from the time it took (frames per second); None for no time or 0."""
    return None if v is None or v <= 0 else count / v


ERROR_WORDS = re.compile(r"error|invalid|not found|no such|cannot|can't|fail|denied|killed|unknown", re.I)


def last_line(text: str, limit: int = 160) -> str:
    """The line of an output that says why a step failed, shortened: the first one with
    an error word (a usage text that follows it says less), else the last non-empty one."""
    lines = [x.strip() for x in text.splitlines() if x.strip()]
    s = next((x for x in lines if ERROR_WORDS.search(x)), lines[-1] if lines else "(no output)")
    return s if len(s) <= limit else s[: limit - 1] + "…"
