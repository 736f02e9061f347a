"""A build's ccache statistics: its own hits and misses (from the build's stats
log, never the shared cache's counters), the settings ccache ran with, and the
file system of the cache and of the build."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from bringup.builder.context import Ctx, _env, _stats_log

CCACHE_CONFIG_KEYS = ("depend_mode", "direct_mode", "compression", "compression_level", "compiler_check")


def ccache_log_counts(text: str) -> dict:
    """Hits and misses from a ccache stats log (`# <input>` lines, then one counter name a
    line per call).  Counted by counter, not by block, so interleaved blocks count alike."""
    names = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]
    hits = names.count("direct_cache_hit") + names.count("preprocessed_cache_hit")
    misses = names.count("cache_miss")
    total = hits + misses
    return {"hits": hits, "misses": misses, "hit_rate": round(hits / total, 4) if total else None}


def _ccache_stats(ctx: Ctx) -> dict | None:
    """This build's hits and misses (its own stats log), and the ccache settings it ran with."""
    if not ctx.tc.ccache:
        return None
    try:
        text = _stats_log(ctx).read_text(errors="replace")
    except OSError:
        text = ""  # no call was cacheable or reached ccache
    return ccache_log_counts(text) | {"settings": _ccache_settings(ctx)}


def _ccache_settings(ctx: Ctx) -> dict | None:
    """The settings that decide ccache's cost and hits, as `ccache --show-config` reports
    them for this build's environment, with its version and the cache's file system."""
    assert ctx.tc.ccache
    env = _env(ctx)
    try:
        ver = subprocess.run([ctx.tc.ccache, "--version"], capture_output=True, text=True, env=env, timeout=30)
        conf = subprocess.run([ctx.tc.ccache, "--show-config"], capture_output=True, text=True, env=env, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    values = parse_ccache_config(conf.stdout)
    if not all(key in values for key in (*CCACHE_CONFIG_KEYS, "cache_dir")):
        return None
    m = re.search(r"ccache version (\S+)", ver.stdout)
    cache_dir = Path(values["cache_dir"])
    return {
        "version": m.group(1) if m else "unknown",
        "depend_mode": values["depend_mode"] == "true",
        "direct_mode": values["direct_mode"] == "true",
        "compression": values["compression"] == "true",
        "compression_level": int(values["compression_level"]),
        "compiler_check": values["compiler_check"],
        "cache_dir": str(cache_dir),
        "filesystem": filesystem_type(cache_dir),
        "same_filesystem_as_build": _same_device(cache_dir, ctx.builddir),
    }


def parse_ccache_config(text: str) -> dict[str, str]:
    """`ccache --show-config` lines, '(origin) key = value', as key -> value."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"\([^)]*\)\s+(\w+)\s+=\s?(.*)$", line.strip())
        if m:
            out[m.group(1)] = m.group(2).strip()
    return out


def filesystem_type(p: Path, mounts: str | None = None) -> str | None:
    """The type of the file system `p` is on: the longest mount point of /proc/mounts above it."""
    if mounts is None:
        try:
            mounts = Path("/proc/mounts").read_text()
        except OSError:
            return None
    p = Path(os.path.realpath(p))
    best, kind = -1, None
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) < 3:
            continue
        mnt = Path(fields[1].replace("\\040", " "))
        if (p == mnt or mnt in p.parents) and len(mnt.parts) > best:
            best, kind = len(mnt.parts), fields[2]
    return kind


def _same_device(a: Path, b: Path) -> bool | None:
    try:
        return os.stat(a).st_dev == os.stat(b).st_dev
    except OSError:
        return None
