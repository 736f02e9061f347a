"""Files the measuring steps put into the ramdisk: a Debian package's files
(deb_entries; docs and headers left out), the lmbench runner's list and environment
(bench_files), and the steps the ramdisk runs by itself on the instruction clock
(autorun_steps; measure/footprint.py: AUTORUN)."""

from __future__ import annotations

from pathlib import Path

from bringup.model.benchset import BenchSet
from bringup.records.measure import MEM_EAT_CHUNK_KB
from bringup.util import cpio, debs

SKIP_PREFIXES = (
    "usr/share/doc",
    "usr/share/man",
    "usr/share/locale",
    "usr/share/lintian",
    "usr/share/info",
    "usr/include",
    "usr/share/bug",
)


def deb_entries(deb: Path, remap=None) -> list[cpio.Entry]:
    """A .deb's files as cpio entries (docs and headers left out)."""
    out, data = [], {}
    for member in debs.members(deb):
        m, name = member.info, member.name
        if not name or name.startswith(SKIP_PREFIXES):
            continue
        if remap:
            name = remap(name)
            if name is None:
                continue
        if m.isdir():
            out.append(cpio.directory(name, m.mode & 0o7777))
        elif m.issym():
            out.append(cpio.symlink(name, m.linkname))
        elif m.isfile():
            data[name] = member.read()
            out.append(cpio.file(name, data[name], m.mode & 0o7777))
        elif m.islnk():
            target = debs.path_in_deb(m.linkname)
            if target in data:
                out.append(cpio.file(name, data[target], m.mode & 0o7777))
    return out


def bench_files(bset: BenchSet, mode: str, instruction_clock: bool = False) -> list[cpio.Entry]:
    """The runner's benchmark list and environment; on the instruction clock the quick set
    exports instruction_clock_env after quick_env (a longer interval: docs/clock.md)."""
    q = bset.quick_flags if mode == "quick" else ""
    lines = []
    for b in bset.bench:
        if mode == "quick" and not b.quick:
            continue
        lines.append(f"{b.name}\t{b.cmd.replace('{q}', q)}")
    env = ["LMBENCH_BIN=/usr/lib/lmbench/bin", f"BENCH_SETUP='{bset.setup}'"]
    if mode == "quick" and bset.quick_env:
        env.append(f"export {bset.quick_env}")
    if mode == "quick" and instruction_clock and bset.instruction_clock_env:
        env.append(f"export {bset.instruction_clock_env}")
    return [
        cpio.directory("etc/bringup"),
        cpio.file("etc/bringup/bench.list", ("\n".join(lines) + "\n").encode()),
        cpio.file("etc/bringup/bench.env", ("\n".join(env) + "\n").encode()),
    ]


# the footprint's mem_eat command (the record keeps its chunk: records.measure.MemEat.chunk_kb)
MEM_EAT = f"mem_eat {MEM_EAT_CHUNK_KB}"


def autorun_steps(lmbench: bool) -> list[cpio.Entry]:
    """The ramdisk's steps.list: free, /proc/meminfo, mem_eat, and the lmbench pass."""
    steps = [("free", "free"), ("meminfo", "cat /proc/meminfo"), ("mem_eat", MEM_EAT)]
    steps += [("lmbench", "bringup-bench")] if lmbench else []
    return [
        cpio.directory("etc/bringup"),
        cpio.file("etc/bringup/steps.list", "".join(f"{n}\t{c}\n" for n, c in steps).encode()),
    ]
