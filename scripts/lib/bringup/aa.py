"""The A/A check: a kernel compared with itself must show no difference.

`bringup aa --board B --kernel K` builds nothing: it takes K's build record and
image files, makes a board `B-aa` whose two kernels `a` and `b` are that same
build (the image files hard-linked, so both arms boot the same bytes), runs
boot timing and the footprint in rounds (A B, B A, ...; host-load guard on), and
asks the report what its management summary would claim.  The answer must be
nothing.  It also reports the per-metric false-positive rate before and after the
Benjamini-Hochberg correction.  The result goes to logs/B-aa/aa.json.

On the instruction clock (docs/clock.md) it also reports every metric's spread:
the largest relative difference between any two boots of the two arms (boot
milestones as printk times, lmbench, mem_eat), largest first, and how many are
identical.  That spread is the board's A/A floor: the report of board B judges
its deterministic findings against it.

The sensitivity check (`make ab`, delay_ms > 0) is the same with a known cost
added to arm b: its init waits delay_ms before the userspace marker (the
command line's bringup.delay_ms=, read by rootfs-overlay's rcS; arm a gets
bringup.delay_ms=0, so both command lines are the same length).  The summary
must claim that difference, with the right sign and within SENSITIVITY_TOLERANCE
of its size (10 % on the instruction clock, 25 % on the host clock, whose guest sleeps
overshoot), on the milestones from the `delayed` one on, and nothing else.
The board is B-ab and the result logs/B-ab/ab.json.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import statistics
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from bringup import records, stats, study, targets
from bringup.boot import timing as boottiming
from bringup.boot.session import ROOTS
from bringup.errors import BringupError
from bringup.measure import footprint
from bringup.model.board import Board, Kernel
from bringup.model.clocks import clock_of, for_root
from bringup.report import page as report
from bringup.util import clock, lock

ARMS = ("a", "b")
Say = Callable[[str], None]
# how far the sensitivity check's claimed size may be from the known cost, by clock: the
# instruction clock's wait is the wait; on the host clock a TCG guest's sleep overshoots
# (1 s measured as 1.06 s in session 11, 1.11 to 1.13 s with 8 rounds in session 13)
SENSITIVITY_TOLERANCE = {"instructions": 0.10, "host": 0.25}


def aa_board(board: Board, kernel_id: str, delay_ms: int = 0) -> Board:
    """The A/A board: two kernels, `a` and `b`, both the board's kernel `kernel_id`; with
    delay_ms the A/B board of the sensitivity check (arm b waits delay_ms in its init)."""
    k = board.kernel(kernel_id)

    def arm(name: str) -> Kernel:
        if not delay_ms:
            return dataclasses.replace(k, id=name, description=f"{kernel_id} (A/A arm {name})")
        ms = delay_ms if name == "b" else 0
        cmd = " ".join(x for x in (k.cmdline, f"bringup.delay_ms={ms:0{len(str(delay_ms))}d}") if x)
        return dataclasses.replace(k, id=name, description=f"{kernel_id} (A/B arm {name}: +{ms} ms)", cmdline=cmd)

    return board.model_copy(
        update={"name": f"{board.name}-{'ab' if delay_ms else 'aa'}", "kernels": [arm(a) for a in ARMS]}
    )


def link_build(logs: Path, board: Board, kernel_id: str, aa: Board) -> None:
    """Both arms get the kernel's build record and its image files (hard links when
    the file system allows, copies otherwise); nothing is built."""
    src = Path(logs) / board.name / kernel_id
    rec = records.read(src / "build.json", records.Build)
    for arm in ARMS:
        dst = Path(logs) / aa.name / arm
        if dst.exists():
            shutil.rmtree(dst)
        dst.mkdir(parents=True)
        for rel in rec.artifacts.values():
            f = records.artifact(src / "build.json", rel, "artifacts")
            out = dst / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(f, out)
            except OSError:
                shutil.copy2(f, out)
        records.write(dst / "build.json", rec.model_copy(update={"kernel": arm, "board": aa.name}))


@dataclass(frozen=True)
class CheckPlan:
    """What an A/A check is asked: boot rounds on a root (ramdisk, or nfs: boot-timing-nfs.json
    and the summary's "Boot, root over NFS" section), footprint rounds (the footprint always
    boots the ramdisk) in an lmbench mode, the boot path (None: the board's), the host-load
    guard, boots at once, and delay_ms > 0: the sensitivity check (module docstring)."""

    runs: int = 5
    root: str = "ramdisk"
    path: str | None = None
    lmbench: str = "quick"
    lmbench_runs: int = 5
    guard: bool = True
    jobs: int = 1
    delay_ms: int = 0


def run(
    board: Board, kernel_id: str, logs: Path, cache: Path, plan: CheckPlan = CheckPlan(), say: Say = print
) -> dict[str, Any]:
    """The A/A check (or the sensitivity check) of board's kernel kernel_id; its result, also
    written to logs/<board>-aa/aa.json (-ab/ab.json).  The check's board is held (util/lock.py)
    from linking the build to writing the result."""
    if not (Path(logs) / board.name / kernel_id / "build.json").exists():
        raise BringupError(
            f"{board.name}/{kernel_id}: no build record (run: make build-all BOARD={board.name} KERNEL={kernel_id})"
        )
    path = plan.path or board.boot
    boottiming.plan(board, logs, path, plan.root, [kernel_id])  # root and path refused before anything is linked
    aa = aa_board(board, kernel_id, plan.delay_ms)
    check = "ab" if plan.delay_ms else "aa"
    plan = replace(plan, path=path)
    with lock.board(Path(logs) / aa.name, check, say=say):
        _prepare(board, kernel_id, aa, logs, plan, say)
        _measure(aa, logs, cache, plan, say)
        result = _result(board, kernel_id, aa, logs, plan)
        records.write_text(Path(logs) / aa.name / f"{check}.json", json.dumps(result, indent=2) + "\n")
    return result


def _prepare(board: Board, kernel_id: str, aa: Board, logs: Path, plan: CheckPlan, say: Say) -> None:
    """The arms get the kernel's build; no boot timing is left from an earlier check."""
    link_build(logs, board, kernel_id, aa)
    d = plan.delay_ms
    what = f"sensitivity check (arm b +{d} ms before the userspace marker)" if d else "A/A check"
    say(f"{what}: {board.name}/{kernel_id} as arms {' and '.join(ARMS)} (board {aa.name}, {clock_of(aa).label})")
    boottiming.plan(aa, logs, plan.path or aa.boot, plan.root)
    for r in ROOTS:  # only this check's boot timing is judged: none left from an earlier one
        for failed in (False, True):
            (Path(logs) / aa.name / records.boot_timing_name(r, failed=failed)).unlink(missing_ok=True)


def _measure(aa: Board, logs: Path, cache: Path, plan: CheckPlan, say: Say) -> None:
    """Boot timing (on the host clock with an NFS root: model/clocks.py for_root), then the footprint."""
    say(f"boot timing: {plan.runs} rounds, root {plan.root}")
    on = for_root(aa, plan.root, say)
    target_for = partial(targets.for_board, on, say=say)
    boots = study.Boots(plan.runs, plan.path, plan.root, plan.guard, plan.jobs, target_for=target_for)
    study.boot_on_ramdisk(on, logs, cache, boots, say)
    say(f"footprint: {plan.lmbench_runs} rounds, lmbench {plan.lmbench}")
    footprint.footprint(
        aa, logs, cache, mode=plan.lmbench, lmbench_runs=plan.lmbench_runs, say=say, guard=plan.guard, jobs=plan.jobs
    )


def _result(board: Board, kernel_id: str, aa: Board, logs: Path, plan: CheckPlan) -> dict[str, Any]:
    """What the summary claims of the two arms, judged against the shipped floors (never its own)."""
    model = report.collect(aa, logs, own_floors=False)
    result = judge(model)
    result.update(
        board=board.name,
        kernel=kernel_id,
        created=clock.now(),
        runs=plan.runs,
        root=plan.root,
        lmbench=plan.lmbench,
        lmbench_runs=plan.lmbench_runs,
        clock=clock_of(aa).record(),
        spread={} if plan.delay_ms else spreads(aa, logs, plan.root),  # an A/B's spread is its known cost
        arm_difference={} if plan.delay_ms else arm_differences(aa, logs, plan.root),
    )
    if plan.delay_ms:
        result["sensitivity"] = sensitivity(model, plan.delay_ms, clock_of(aa).kind)
    return result


def _rel_spread(vals: list[float]) -> float | None:
    if len(vals) < 2:
        return None
    med = statistics.median(vals)
    return round((max(vals) - min(vals)) / abs(med) * 100, 6) if med else None


# metric key -> arm -> round -> value
Values = dict[str, dict[str, dict[int, float]]]


def spreads(aa: Board, logs: Path, root: str = "ramdisk") -> dict[str, float]:
    """Every metric's spread over all boots of both arms, in % of its median: boot
    milestones on the record's clock (printk times on the instruction clock), mem_eat,
    every lmbench metric; keyed as the summary's findings are (report/findings.py).  On
    the instruction clock each round boots with its own seed, so this is the spread over
    seeds: the floor a difference between two kernels must clear (docs/clock.md)."""
    out = {}
    for k, arms in arm_values(aa, logs, root).items():
        s = _rel_spread([v for rounds in arms.values() for v in rounds.values()])
        if s is not None:
            out[k] = s
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def arm_differences(aa: Board, logs: Path, root: str = "ramdisk") -> dict[str, float]:
    """Every metric's largest difference between the two arms within one round, in % of
    the metric's median: on the instruction clock both arms of a round boot from the same
    seed, so anything but 0 is the host leaking into the measurement."""
    out = {}
    for k, arms in arm_values(aa, logs, root).items():
        a, b = arms.get(ARMS[0], {}), arms.get(ARMS[1], {})
        both = [r for r in a if r in b]
        vals = [v for r in both for v in (a[r], b[r])]
        if not both or not vals:
            continue
        med = statistics.median(vals)
        if med:
            out[k] = round(max(abs(a[r] - b[r]) for r in both) / abs(med) * 100, 6)
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def arm_values(aa: Board, logs: Path, root: str = "ramdisk") -> Values:
    d = Path(logs) / aa.name
    return _boot_values(d, records.boot_timing_name(root)) | _footprint_values(d)


def _boot_values(d: Path, name: str) -> Values:
    """Both arms' milestone values by round, by finding key."""
    out: Values = {}
    if not (d / name).exists():
        return out
    timing = records.read(d / name, records.BootTiming)
    for arm in ARMS:
        kt = timing.kernels.get(arm)
        for milestone, st in (kt.milestones if kt else {}).items():
            rnds = st.rounds or list(range(1, len(st.values or []) + 1))
            out.setdefault(f"{name}:{milestone}", {})[arm] = dict(zip(rnds, st.values or [], strict=False))
    return out


def _footprint_values(d: Path) -> Values:
    """Both arms' mem_eat totals and lmbench values by round, by finding key."""
    out: Values = {}
    for arm in ARMS:
        if (d / arm / "footprint.json").exists():
            footprint_record = records.read(d / arm / "footprint.json", records.Footprint)
            rnds = footprint_record.rounds or list(range(1, len(footprint_record.malloc_kb_values) + 1))
            out.setdefault("footprint:malloc_kb", {})[arm] = {
                r: float(v) for r, v in zip(rnds, footprint_record.malloc_kb_values, strict=False)
            }
        if (d / arm / "lmbench.json").exists():
            rec = records.read(d / arm / "lmbench.json", records.Lmbench)
            for b in rec.benchmarks.values():
                for met in b.metrics:
                    vals = met.values or [met.value]
                    rnds = met.rounds or list(range(1, len(vals) + 1))
                    out.setdefault(f"lmbench:{met.name}", {})[arm] = dict(zip(rnds, vals, strict=False))
    return out


def sensitivity(model: dict, delay_ms: int, clock_kind: str) -> dict[str, Any]:
    """The sensitivity check's verdict: the boot milestones from the `delayed` one on must
    be claimed slower by delay_ms (within the clock's SENSITIVITY_TOLERANCE), and nothing
    else claimed."""
    tolerance = SENSITIVITY_TOLERANCE[clock_kind]
    delayed = set(model.get("delayed_milestones") or [])
    want = delay_ms / 1000
    seen: list[dict] = []
    wrong: list[dict] = []
    other: list[str] = []
    for f in model["findings"]:
        for _, items in f["sections"]:
            for it in items:
                if it.get("kind") not in ("tested", "deterministic") or not it.get("significant"):
                    continue
                key = str(it.get("key", ""))
                milestone = key.rpartition(":")[2] if key.startswith("boot-timing") else None
                if milestone in delayed:
                    got = it.get("shift") if it.get("kind") == "tested" else None
                    if got is None and it.get("a") is not None and it.get("b") is not None:
                        got = it["b"] - it["a"]
                    ci = it.get("shift_ci95") if it.get("kind") == "tested" else None
                    ok = _seen_right(got, ci, want, tolerance)
                    (seen if ok else wrong).append({"claim": it["claim"], "measured_s": got, "ci95_s": ci})
                else:
                    other.append(it["claim"])
    passed = bool(seen) and not wrong and not other
    return {
        "delay_s": want,
        "delayed_milestones": sorted(delayed),
        "claimed_right": seen,
        "claimed_wrong": wrong,
        "claimed_elsewhere": other,
        "passed": passed,
    }


def _seen_right(got: float | None, ci: Any, want: float, tolerance: float) -> bool:
    """A claimed delay is the known one when its estimate is within tolerance (a fraction)
    of it, or (a noisy clock's estimate) when the claim's own 95 % interval holds it: the
    right sign and a size the measurement cannot tell from the known one."""
    if got is None or got <= 0:
        return False
    if abs(got - want) <= tolerance * want:
        return True
    return ci is not None and None not in ci and ci[0] <= want <= ci[1]


def judge(model: dict) -> dict[str, Any]:
    """What the summary claims of two identical arms, and the false-positive rates."""
    claims, tested = [], []
    for f in model["findings"]:
        for _, items in f["sections"]:
            claims += [
                it["claim"] for it in items if it.get("kind") in ("tested", "deterministic") and it.get("significant")
            ]
        tested += list(f.get("tested", {}).items())
    raw = sum(1 for _, t in tested if t["p"] < stats.ALPHA)
    corrected = sum(1 for _, t in tested if t["significant"])
    n = len(tested)
    return {
        "claims": claims,
        "tested": n,
        "raw_false_positives": raw,
        "raw_rate": round(raw / n, 4) if n else None,
        "corrected_false_positives": corrected,
        "corrected_rate": round(corrected / n, 4) if n else None,
        "smallest_p": min((t["p"] for _, t in tested), default=None),
    }


def render(result: dict[str, Any]) -> str:
    sens = result.get("sensitivity")
    ck = result.get("clock") or {}
    on = (
        f"instruction clock, {ck.get('ns_per_instruction')} ns per instruction"
        if ck.get("kind") == "instructions"
        else "host clock"
    )
    lines = [
        f"{'Sensitivity' if sens else 'A/A'} check of {result['board']}/{result['kernel']} ({on}): "
        f"{result['runs']} boot rounds "
        f"(root {result.get('root', 'ramdisk')}), "
        f"{result['lmbench_runs']} footprint rounds (lmbench {result['lmbench']})",
        f"  metrics tested: {result['tested']}",
        f"  p < {stats.ALPHA} before correction: {result['raw_false_positives']} ({_pct(result['raw_rate'])})",
        f"  significant after Benjamini-Hochberg: {result['corrected_false_positives']} "
        f"({_pct(result['corrected_rate'])})",
        f"  differences the summary claims: {len(result['claims'])}"
        + (" (must be the known cost only)" if sens else " (must be 0)"),
    ]
    lines += [f"    - {c}" for c in result["claims"]]
    spread = result.get("spread") or {}
    if spread:
        same = sum(1 for v in spread.values() if v == 0)
        top = list(spread.items())[:8]
        lines.append(
            "  spread over all boots of both arms (on the instruction clock: over the rounds' seeds): "
            f"largest {top[0][1]:.3g} % ({top[0][0]}); "
            f"{same} of {len(spread)} metrics identical"
        )
        lines += [f"    {v:8.3g} %  {k}" for k, v in top]
    diff = result.get("arm_difference") or {}
    if diff:
        same = sum(1 for v in diff.values() if v == 0)
        k0, v0 = next(iter(diff.items()))
        within = sum(1 for v in diff.values() if v <= 0.1)
        lines.append(
            f"  difference between the arms within a round: largest {v0:.3g} % ({k0}); {same} of {len(diff)} "
            f"metrics identical, {within} within 0.1 %"
        )
    if sens:
        verdict = "PASSED" if sens["passed"] else "FAILED"
        lines.append(
            f"  known cost: +{sens['delay_s'] * 1000:.0f} ms on {', '.join(sens['delayed_milestones'])}: {verdict}"
        )
        lines += [f"    seen: {c['claim']}" for c in sens["claimed_right"]]
        lines += [f"    wrong size or sign: {c['claim']}" for c in sens["claimed_wrong"]]
        lines += [f"    claimed where nothing changed: {c}" for c in sens["claimed_elsewhere"]]
        if not sens["claimed_right"] and not sens["claimed_wrong"]:
            lines.append("    the known cost was not claimed: the study cannot see it")
    return "\n".join(lines) + "\n"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f} %"
