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


def metric(text: str, regex: str, scale: float = 1.0) -> float | None:
    """The number the regex's one group captures at its first match, times scale; None
    when nothing matches or the group is not a number."""
    m = re.search(regex, text, re.M)
    if m is None:
        return None
    try:
        v = float(m.group(1))
    except (IndexError, TypeError, ValueError):  # no group, or not a number
        return None
    return v * scale if v == v and v not in (float("inf"), float("-inf")) else None


ERROR_WORDS = re.compile(r"error|invalid|not found|no such|cannot|can't|fail|denied|killed|unknown", re.I)


def last_line(text: str, limit: int = 160) -> str:
    """The line of an output that says why a step failed, shortened: the first one with
    an error word (a usage text that follows it says less), else the last non-empty one."""
    lines = [x.strip() for x in text.splitlines() if x.strip()]
    s = next((x for x in lines if ERROR_WORDS.search(x)), lines[-1] if lines else "(no output)")
    return s if len(s) <= limit else s[: limit - 1] + "…"
