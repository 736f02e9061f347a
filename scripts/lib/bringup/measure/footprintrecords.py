"""The footprint's records (measure/footprint.py): the build records it reads
(build_records), the headline values of its rounds (headline), each kernel's
footprint.json and lmbench.json from its rounds (kernel_records), the failure record
of a kernel the step left out (failure_record), several lmbench passes in one
(merge_runs), and why lmbench's binaries could not run at all (cannot_run); a kernel's
two records as the step wrote them (KernelFootprint)."""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from bringup import records
from bringup.boot import rounds
from bringup.errors import BootFailed, BringupError
from bringup.model.benchset import BenchSet
from bringup.model.board import Board
from bringup.model.clocks import clock_of
from bringup.parse import lmbench as lp
from bringup.parse import meminfo
from bringup.records.measure import MEM_EAT_CHUNK_KB
from bringup.util import clock, environment, paths


@dataclass(frozen=True)
class GuestOutputs:
    """What a footprint boot's steps printed (footprint.measure, measure_autorun): free,
    /proc/meminfo, mem_eat and its exit status, the lmbench passes (None: not run), each
    parsed once, and the benchmarks run once more; the console's text."""

    free: str
    meminfo: str
    mem_eat: str
    mem_eat_rc: int
    console_text: str = ""
    lmbench: list[str] | None = None
    lmbench_parsed: list[dict[str, Any]] | None = None
    lmbench_retried: list[str] | None = None

    def steps_text(self) -> str:
        """steps.txt of the run: each step's output under its name (the console's is console.log)."""
        parts: list[tuple[str, object]] = [
            ("free", self.free),
            ("meminfo", self.meminfo),
            ("mem_eat", self.mem_eat),
            ("mem_eat_rc", self.mem_eat_rc),
        ]
        if self.lmbench is not None:
            parts += [
                ("lmbench", self.lmbench),
                ("lmbench_parsed", self.lmbench_parsed),
                ("lmbench_retried", self.lmbench_retried),
            ]
        return "\n".join(f"=== {k}\n{v}" for k, v in parts)


@dataclass(frozen=True)
class MeasuredBoot:
    """One boot of a measuring step (the footprint, the workloads), kept for the records: its
    run directory, why it failed (None: it did not), and, once the round engine kept it
    (MeasuringStep.rounds), its round and the host-load guard's verdict."""

    run_dir: Path
    failed: str | None = None
    round: int = 0
    host: dict[str, Any] | None = None


@dataclass(frozen=True)
class FootprintBoot(MeasuredBoot):
    """A footprint boot: the guest's outputs (footprint.measure), mem_eat and the lmbench pass
    parsed as the boot ended."""

    after: GuestOutputs | None = None
    eat: dict[str, Any] | None = None
    lmbench: dict[str, Any] | None = None


BootT = TypeVar("BootT", bound=MeasuredBoot)


@dataclass(frozen=True)
class KernelRounds(Generic[BootT]):
    """A kernel's boots the round engine kept, in round order, and how many were done again."""

    rounds: list[BootT]
    disturbed: int


@dataclass(frozen=True)
class KernelFootprint:
    """What footprint() measured of one kernel: its two records, as written."""

    footprint: records.Footprint
    lmbench: records.Lmbench


@dataclass
class Payload:
    """The footprint's ramdisk and what went into it: the lmbench set, where lmbench came
    from (lm_info) or why it cannot be measured (lm_missing), and whether the ramdisk runs
    the steps by itself (autorun: the instruction clock)."""

    rootfs: records.Rootfs
    bset: BenchSet
    lm_info: dict
    lm_missing: str | None
    autorun: bool


def headline(kept: list[rounds.Done[FootprintBoot]], kernels: list[str]) -> dict[str, dict[str, dict[int, float]]]:
    """The headline values of the footprint for --until-ci, as metric -> kernel ->
    round -> value: what the management summary tests, i.e. the memory available to
    malloc() (mem_eat's total, kB) and every lmbench metric (one pass per round), from
    the values each boot parsed.  Kernel Code + Data and total "free" are not among
    them: the summary states them as sizes, untested."""
    out: dict[str, dict[str, dict[int, float]]] = {}
    for d in kept:
        eat, passed = d.result.eat, d.result.lmbench
        if eat:
            out.setdefault("memory available to malloc()", {k: {} for k in kernels})[d.kernel][d.round] = eat["kb"]
        for b in (passed or {}).values():
            for m in b["metrics"]:
                out.setdefault(f"lmbench {m['name']}", {k: {} for k in kernels})[d.kernel][d.round] = m["value"]
    return out


def build_records(board: Board, kernels: list[str], logs: Path) -> dict[str, records.Build]:
    """The build record of each kernel; a kernel not built is one line saying what to run."""
    builds = {}
    for kernel_id in kernels:
        f = Path(logs) / board.name / kernel_id / "build.json"
        if not f.exists():
            raise BringupError(
                f"{board.name}/{kernel_id}: no build record {f} (run: make build-all BOARD={board.name})"
            )
        builds[kernel_id] = records.read(f, records.Build)
    return builds


def failure_record(board: Board, kernel_id: str, bad: MeasuredBoot, recdir: Path) -> dict:
    """The failure record of a kernel the step left out."""
    keep = recdir / "footprint.json"
    return {
        "step": "footprint",
        "board": board.name,
        "kernel": kernel_id,
        "created": clock.now(),
        "error": records.plain_text(bad.failed or "", 2000),
        "run": str(Path(bad.run_dir).relative_to(recdir)) if bad.run_dir else None,
        "kept": "footprint.json" if keep.exists() else None,
    }


LOADER_FAILED = re.compile(
    r"error while loading shared libraries: [^\r\n]*|cannot execute binary file[^\r\n]*|"
    r"FATAL: kernel too old|Illegal instruction"
)


def cannot_run(texts: list[str], parsed: list[dict] | None = None) -> str | None:
    """Why the lmbench binaries could not run at all in this boot (every benchmark exited
    126/127 or the loader refused them, with no number), or None.  parsed: the texts
    already parsed (lp.parse_runner), so they are not parsed again."""
    results = parsed if parsed is not None else [lp.parse_runner(x) for x in texts]
    if not results or any(m for r in results for b in r.values() for m in b["metrics"]):
        return None
    if not any(r for r in results):
        return None
    m = next((LOADER_FAILED.search(x) for x in texts if LOADER_FAILED.search(x)), None)
    if m is None and not all(b.get("rc") in (126, 127) for r in results for b in r.values()):
        return None
    why = m.group(0).strip() if m else "every benchmark exited 126/127"
    return f"the lmbench binaries cannot run on this kernel ({why}); build lmbench static with LMBENCH_SRC="


def kernel_records(
    board: Board,
    kernel_id: str,
    build: records.Build,
    recdir: Path,
    done: KernelRounds[FootprintBoot],
    payload,
    mode: str,
) -> tuple[dict, dict]:
    """footprint.json and lmbench.json of one kernel from its rounds (done: footprint._rounds'
    of the kernel); payload: the ramdisk and its lmbench (footprint.Payload)."""
    rs = done.rounds
    footprint_record = _footprint_record(board, kernel_id, build, recdir, done, payload.rootfs)
    lmbench_record = {
        "board": board.name,
        "kernel": kernel_id,
        "created": clock.now(),
        "build_key": build.key,
        "mode": mode,
        "source": payload.lm_info,
        "run": footprint_record["run"],
        "clock": clock_of(board).record(),
        "environment": environment.of_board(board),
    }
    if payload.lm_missing or mode == "none":
        lmbench_record.update(
            measured=False, reason=payload.lm_missing or "not requested", runs=0, retried=[], benchmarks={}
        )
        return footprint_record, lmbench_record
    lmbench_record.update(_lmbench_passes(rs, payload.bset))
    return footprint_record, lmbench_record


def _footprint_record(
    board: Board,
    kernel_id: str,
    build: records.Build,
    recdir: Path,
    done: KernelRounds[FootprintBoot],
    ramdisk: records.Rootfs,
) -> dict:
    """footprint.json of one kernel: its first round's outputs, and every round's values."""
    rs = done.rounds
    first = _after(rs[0])
    mem_line = meminfo.parse_memory_line(first.console_text)
    frees = [meminfo.parse_free(_after(r).free) for r in rs]
    eats = [r.eat for r in rs]  # parsed as each boot ended
    for r, eat in zip(rs, eats, strict=True):
        if eat is None:
            raise BootFailed(f"{board.name}/{kernel_id}: mem_eat printed no total (see {paths.rel(r.run_dir)})")
    eaten = [e for e in eats if e]
    malloc = [e["kb"] for e in eaten]
    rel = [r.run_dir.relative_to(recdir).as_posix() for r in rs]
    return {
        "board": board.name,
        "kernel": kernel_id,
        "kernelrelease": build.kernelrelease,
        "build_key": build.key,
        "created": clock.now(),
        "run": rel[0],
        "memory_mb": board.memory_mb,
        "memory_line": mem_line,
        "free": frees[0],
        "meminfo": meminfo.parse_meminfo(first.meminfo),
        "mem_eat": {**eaten[0], "chunk_kb": MEM_EAT_CHUNK_KB},
        "kernel_code_data_kb": mem_line["kernel_code_data_kb"] if mem_line else None,
        "total_free_kb": frees[0]["total_kb"] if frees[0] else None,
        "malloc_kb": int(statistics.median(malloc)),
        "rootfs": ramdisk.ref().model_dump(),
        "rounds": [r.round for r in rs],
        "malloc_kb_values": malloc,
        "total_free_kb_values": [f["total_kb"] for f in frees if f],
        "runs": rel,
        "host": [r.host for r in rs if r.host],
        "disturbed": done.disturbed,
        "clock": clock_of(board).record(),
        "environment": environment.of_board(board),
    }


def _after(boot: FootprintBoot) -> GuestOutputs:
    """The guest's outputs of a boot that did not fail."""
    if boot.after is None:  # not reached: a failed boot leaves its kernel out before its records
        raise BootFailed(f"{paths.rel(boot.run_dir)}: no outputs ({boot.failed})")
    return boot.after


def _lmbench_passes(rs: list[FootprintBoot], bset: BenchSet) -> dict:
    """lmbench.json's measurement from the rounds' passes (parsed as each boot ended), their
    text in the first run's lmbench.txt; not measured when the binaries could not run."""
    first = rs[0]
    texts = [(_after(r).lmbench or [""])[0] for r in rs]
    passes = [r.lmbench or {} for r in rs]
    cannot = cannot_run(texts, passes)
    if cannot:  # e.g. Debian's dynamic binaries on a 2.6.32 kernel: not measured, and why
        (first.run_dir / "lmbench.txt").write_text("\n".join(texts))
        return {"measured": False, "reason": cannot, "runs": 0, "retried": [], "benchmarks": {}}
    raw = "".join(
        f"=== lmbench run {i + 1} (round {r.round})\n{x}\n" for i, (r, x) in enumerate(zip(rs, texts, strict=True))
    )
    (first.run_dir / "lmbench.txt").write_text(raw)
    blocks = lp.block_lines(raw)  # where each benchmark's blocks begin: the report links there
    parsed = merge_runs(passes, [r.round for r in rs])
    groups = {b.name: b.group for b in bset.bench}
    for name, v in parsed.items():
        v["group"] = groups.get(name, "")
        v["raw_lines"] = blocks.get(name, [])
        v.pop("text", None)
    retried = sorted({n for r in rs for n in _after(r).lmbench_retried or []})
    return {"measured": True, "reason": None, "runs": len(rs), "benchmarks": parsed, "retried": retried}


def merge_runs(runs: list[dict], labels: list[int] | None = None) -> dict:
    """Benchmarks of several runner passes in one: each metric keeps every
    run's value in "values" (for the report's significance test), the round of
    each value in "rounds" (when labels are given), and their median in "value"."""
    if len(runs) == 1 and labels is None:
        return runs[0]
    out: dict = {}
    for i, r in enumerate(runs):
        for name, b in r.items():
            if name not in out:
                out[name] = {**b, "metrics": []}
            seen = {m["name"]: m for m in out[name]["metrics"]}
            for m in b["metrics"]:
                if m["name"] not in seen:
                    mm = {**m, "values": []}
                    if labels is not None:
                        mm["rounds"] = []
                    out[name]["metrics"].append(mm)
                    seen[m["name"]] = mm
                seen[m["name"]]["values"].append(m["value"])
                if labels is not None:
                    seen[m["name"]]["rounds"].append(labels[i])
            if b.get("rc"):
                out[name]["rc"] = b["rc"]
    for b in out.values():
        for m in b["metrics"]:
            m["value"] = statistics.median(m["values"])
    return out


def left_out(step: str, why: dict[str, str]) -> BootFailed:
    """The error a measuring step ends with when it left kernels out (kernel -> why): their
    earlier records are kept, failure records beside them."""
    detail = "; ".join(f"{k}: {w}" for k, w in why.items())
    return BootFailed(
        f"{step}: left out {', '.join(why)} (earlier records kept, failure records beside them): {detail}"
    )
