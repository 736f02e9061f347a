"""Kconfig text: .config files and config fragments.  Pure functions.

`parse_config` reads either into {symbol: value} ('# CONFIG_X is not set' is
"n"); `merge_fragment` applies a fragment to .config text the way
scripts/kconfig/merge_config.sh -m does; `dropped_symbols` lists what a config
step (olddefconfig, oldconfig) did not keep."""

from __future__ import annotations

import re

FRAG_RE = re.compile(r"^(CONFIG_[A-Za-z0-9_]+)=(.*)$")
UNSET_RE = re.compile(r"^# (CONFIG_[A-Za-z0-9_]+) is not set$")


def parse_config(text: str) -> dict:
    """.config or fragment text -> {symbol: value}; 'is not set' -> 'n'."""
    out = {}
    for line in text.splitlines():
        line = line.strip()
        m = FRAG_RE.match(line)
        if m:
            out[m.group(1)] = m.group(2)
            continue
        m = UNSET_RE.match(line)
        if m:
            out[m.group(1)] = "n"
    return out


def merge_fragment(config: str, fragment: dict) -> str:
    """Apply a fragment's values to .config text (what merge_config.sh -m does)."""
    lines = []
    for line in config.splitlines():
        m = FRAG_RE.match(line.strip()) or UNSET_RE.match(line.strip())
        if m and m.group(1) in fragment:
            continue
        lines.append(line)
    for sym, val in fragment.items():
        lines.append(f"# {sym} is not set" if val == "n" else f"{sym}={val}")
    return "\n".join(lines) + "\n"


def dropped_symbols(final: dict, wanted: dict, fname: str, step: str) -> list[dict]:
    """Fragment values that the config step did not keep."""
    out = []
    for sym, val in wanted.items():
        got = final.get(sym, "n")
        if got != val:
            out.append({"file": fname, "symbol": sym, "wanted": val, "got": got, "step": step})
    return out
