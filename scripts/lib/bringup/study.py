"""The whole study in one command (make all / make study): build-all,
boot-timing, footprint-report and report, in that order, skipping a step whose
records are already there and up to date.

Up to date means:
- build: build-all's own content key (source, config inputs, toolchain, recipe);
- boot timing: boot-timing.json (boot-timing-nfs.json for root=nfs) was made
  from the current builds (build keys), with the same ramdisk, the same boot
  path, and at least as many runs;
- footprint: footprint.json and lmbench.json of every kernel were made from the
  current build, in the same lmbench mode, with at least as many lmbench runs;
- report: always rewritten (it takes a few seconds).
force=True runs every step.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from bringup import records, targets
from bringup.boot import timing as boottiming
from bringup.build import kernel as build
from bringup.build import rootfs
from bringup.measure import footprint
from bringup.model.board import Board
from bringup.report import page as report


def _read(f: Path, kind: str) -> dict | None:
    try:
        return records.read_json(f, kind) if f.is_file() else None
    except Exception:
        return None


def build_keys(board: Board, logs: Path) -> dict:
    return {
        k.id: (_read(Path(logs) / board.name / k.id / "build.json", "bringup.build") or {}).get("key")
        for k in board.kernels
    }


def boot_fresh(
    board: Board, logs: Path, cache: Path, runs: int, path: str, root: str = "ramdisk", say=print
) -> str | None:
    """None when boot-timing.json (boot-timing-nfs.json) is up to date, else why not."""
    name = records.boot_timing_name(root)
    s = _read(Path(logs) / board.name / name, "bringup.boot-timing")
    if s is None:
        return f"no {name}"
    if s.get("path") != path:
        return f"made with boot path {s.get('path')}, not {path}"
    keys = build_keys(board, logs)
    for kid, key in keys.items():
        k = s["kernels"].get(kid)
        if k is None:
            return f"no runs of {kid}"
        if k["ok"] < runs:
            return f"{kid}: {k['ok']} good runs, {runs} wanted"
        if key is None or k.get("build_key") != key:
            return f"{kid} was rebuilt since"
    rd = rootfs.build(board, logs, cache, say=lambda m: None)
    if (s.get("rootfs") or {}).get("sha256") != rd["sha256"]:
        return "the ramdisk changed since"
    return None


def footprint_fresh(board: Board, logs: Path, mode: str, lmbench_runs: int = 1) -> str | None:
    keys = build_keys(board, logs)
    for kid, key in keys.items():
        fp = _read(Path(logs) / board.name / kid / "footprint.json", "bringup.footprint")
        lm = _read(Path(logs) / board.name / kid / "lmbench.json", "bringup.lmbench")
        if fp is None or lm is None:
            return f"no footprint records for {kid}"
        if key is None or fp.get("build_key") != key:
            return f"{kid} was rebuilt since"
        if lm.get("mode") != mode:
            return f"{kid}: lmbench {lm.get('mode')}, {mode} wanted"
        if lm.get("measured") and lm.get("runs", 1) < lmbench_runs:
            return f"{kid}: {lm.get('runs', 1)} lmbench run(s), {lmbench_runs} wanted"
    return None


def run(
    board: Board,
    logs: Path,
    cache: Path,
    runs: int = 5,
    path: str | None = None,
    lmbench: str = "quick",
    jobs: int | None = None,
    force: bool = False,
    lmbench_source: dict | None = None,
    lmbench_runs: int = 1,
    root: str = "ramdisk",
    say=print,
) -> Path:
    path = path or board.boot
    steps = 4
    say(f"== [1/{steps}] build-all {board.name}: {', '.join(k.id for k in board.kernels)}")
    build.build_all(board, logs, cache, force=force, jobs=jobs, say=say)

    why = "FORCE" if force else boot_fresh(board, logs, cache, runs, path, root, say)
    if why is None:
        say(f"== [2/{steps}] boot-timing ({root} root): up to date, skipped")
    else:
        say(f"== [2/{steps}] boot-timing {board.name}: {runs} runs per kernel, {path}, {root} root ({why})")
        rd = rootfs.build(board, logs, cache, say=say)
        summary = boottiming.boot_timing(
            board,
            logs,
            Path(logs) / board.name / "rootfs" / rd["file"],
            partial(targets.for_board, board, say=say),
            runs=runs,
            path=path,
            root=root,
            say=say,
        )
        failed = sum(k["failed"] for k in summary["kernels"].values())
        if failed:
            from bringup.errors import BootFailed

            raise BootFailed(f"{failed} boot run(s) failed; see {summary['_file']}")

    why = "FORCE" if force else footprint_fresh(board, logs, lmbench, lmbench_runs)
    if why is None:
        say(f"== [3/{steps}] footprint-report: up to date, skipped")
    else:
        say(f"== [3/{steps}] footprint-report {board.name}: lmbench {lmbench} ({why})")
        footprint.footprint(
            board, logs, cache, mode=lmbench, lmbench_source=lmbench_source, lmbench_runs=lmbench_runs, say=say
        )

    say(f"== [4/{steps}] report {board.name}")
    return report.write(board, logs, say=say)
