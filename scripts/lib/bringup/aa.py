"""The A/A check: a kernel compared with itself must show no difference.

`bringup aa --board B --kernel K` builds nothing: it takes K's build record and
image files, makes a board `B-aa` whose two kernels `a` and `b` are that same
build (the image files hard-linked, so both arms boot the same bytes), runs
boot timing and the footprint in rounds (A B, B A, ...; host-load guard on), and
asks the report what its management summary would claim.  The answer must be
nothing.  It also reports the per-metric false-positive rate before and after the
Benjamini-Hochberg correction.  The result goes to logs/B-aa/aa.json.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from functools import partial
from pathlib import Path
from typing import Any

from bringup import records, targets
from bringup.boot import timing as boottiming
from bringup.boot.session import ROOTS
from bringup.build import rootfs
from bringup.errors import BringupError
from bringup.measure import footprint
from bringup.model.board import Board
from bringup.report import page as report
from bringup.util import clock

ARMS = ("a", "b")


def aa_board(board: Board, kernel_id: str) -> Board:
    """The A/A board: two kernels, `a` and `b`, both the board's kernel `kernel_id`."""
    k = board.kernel(kernel_id)
    return dataclasses.replace(
        board,
        name=f"{board.name}-aa",
        kernels=[dataclasses.replace(k, id=arm, description=f"{kernel_id} (A/A arm {arm})") for arm in ARMS],
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


def run(
    board: Board,
    kernel_id: str,
    logs: Path,
    cache: Path,
    runs: int = 5,
    lmbench: str = "quick",
    lmbench_runs: int = 5,
    path: str | None = None,
    say=print,
    guard: bool = True,
    root: str = "ramdisk",
) -> dict[str, Any]:
    """The A/A check; root: the boot-timing root (ramdisk, or nfs: boot-timing-nfs.json,
    and the summary's "Boot, root over NFS" section).  The footprint always boots the
    ramdisk."""
    if not (Path(logs) / board.name / kernel_id / "build.json").exists():
        raise BringupError(
            f"{board.name}/{kernel_id}: no build record (run: make build-all BOARD={board.name} KERNEL={kernel_id})"
        )
    path = path or board.boot
    boottiming.plan(board, logs, path, root, [kernel_id])  # root and path refused before anything is linked
    aa = aa_board(board, kernel_id)
    link_build(logs, board, kernel_id, aa)
    say(f"A/A check: {board.name}/{kernel_id} as arms {' and '.join(ARMS)} (board {aa.name})")
    boottiming.plan(aa, logs, path, root)
    for r in ROOTS:  # only this check's boot timing is judged: none left from an earlier one
        for failed in (False, True):
            (Path(logs) / aa.name / records.boot_timing_name(r, failed=failed)).unlink(missing_ok=True)
    rd = rootfs.build(aa, logs, cache, say=say)
    say(f"boot timing: {runs} rounds, root {root}")
    boottiming.boot_timing(
        aa,
        logs,
        Path(logs) / aa.name / "rootfs" / rd.file,
        partial(targets.for_board, aa, say=say),
        runs=runs,
        path=path,
        say=say,
        rootfs_ref=rd.ref(),
        guard=guard,
        root=root,
    )
    say(f"footprint: {lmbench_runs} rounds, lmbench {lmbench}")
    footprint.footprint(aa, logs, cache, mode=lmbench, lmbench_runs=lmbench_runs, say=say, guard=guard)
    model = report.collect(aa, logs)
    result = judge(model)
    result.update(
        board=board.name,
        kernel=kernel_id,
        created=clock.now(),
        runs=runs,
        root=root,
        lmbench=lmbench,
        lmbench_runs=lmbench_runs,
    )
    records.write_text(Path(logs) / aa.name / "aa.json", json.dumps(result, indent=2) + "\n")
    return result


def judge(model: dict) -> dict[str, Any]:
    """What the summary claims of two identical arms, and the false-positive rates."""
    claims, tested = [], []
    for f in model["findings"]:
        for _, items in f["sections"]:
            claims += [it["claim"] for it in items if it.get("kind") == "tested" and it.get("significant")]
        tested += list(f.get("tested", {}).items())
    raw = sum(1 for _, t in tested if t["p"] < 0.05)
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
    lines = [
        f"A/A check of {result['board']}/{result['kernel']}: {result['runs']} boot rounds "
        f"(root {result.get('root', 'ramdisk')}), "
        f"{result['lmbench_runs']} footprint rounds (lmbench {result['lmbench']})",
        f"  metrics tested: {result['tested']}",
        f"  p < 0.05 before correction: {result['raw_false_positives']} ({_pct(result['raw_rate'])})",
        f"  significant after Benjamini-Hochberg: {result['corrected_false_positives']} "
        f"({_pct(result['corrected_rate'])})",
        f"  differences the summary claims: {len(result['claims'])} (must be 0)",
    ]
    lines += [f"    - {c}" for c in result["claims"]]
    return "\n".join(lines) + "\n"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f} %"
