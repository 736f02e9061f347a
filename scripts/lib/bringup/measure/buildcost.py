"""The cold build cost of a board's kernels: seed 002's first table ("time make"),
measured like for like.

The study's own builds (builder/kernel.py) run through ccache, so their times depend
on the hit rate each happened to get, and there is one of each.  Here every kernel
is built again, only to be timed:

- in a scratch build directory of its own (`<cache>/build-cost/<board>/`), removed
  after each run: the study's build directory, build.json and images are never
  touched; the source tree is the one the study builds from (make writes only to O=;
  a 2.4-era tree is copied into the scratch directory, as its own build does);
- the same configuration steps (the .config's sha256 is checked against the study's
  build.json), the same make targets, the same -j as the study's build;
- without ccache (CC and HOSTCC as the toolchain gives them);
- the make steps of the image timed: wall time, and the CPU time (user + sys) of
  each make's whole process tree, from wait4(); CPU time is the primary figure (it
  hardly depends on what else the host runs), wall time is given beside it;
- in rounds on the round engine (boot/rounds.py), each round building every kernel
  once in a Williams order (A B C, B C A, ...), with the host-load guard when it is
  on, and --until-ci over the CPU times (stats.UntilCI).

The result is logs/<board>/build-cost.json (records/buildcost.py), written once
every round is done (an interrupted or failed measurement leaves the last good one
as it was), and kept in the cache under the kernels' build keys and -j: a later
study, another checkout or a test's logs directory asking for the same builds gets
that record instead of building again (FORCE=1 measures again).  The last run's
build log of each kernel is logs/<board>/build-cost/<kernel>/build.log
(build-failed.log when it failed).  report/buildcost.py compares the kernels.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bringup import records, stats
from bringup.boot import rounds
from bringup.builder import collect, context, erafixes, make, sources, toolchain
from bringup.builder import kernel as kbuild
from bringup.errors import BringupError, BuildFailed
from bringup.model.board import Board, EraFix, Kernel
from bringup.records.buildcost import BuildCost
from bringup.util import clock, lock, paths
from bringup.util.progress import Progress

RECORD = "build-cost.json"
DEFAULT_ROUNDS = 3  # rounds by default: CPU time varies by about 1 % between cold builds (docs/building.md)
DEFAULT_MAX_ROUNDS = 6  # --until-ci's default maximum for builds (a round of big kernels takes minutes)
ARMS = ("a", "b")  # the A/A check's two arms


@dataclass
class Plan:
    """One kernel to time: its source, toolchain (no ccache), era fixes, build key, and
    the study's build of that key when its build.json is there."""

    kernel: Kernel
    src: sources.SourceTree
    tc: toolchain.Toolchain
    fixes: list[EraFix]
    key: str | None
    study: records.Build | None


def record_path(logs: Path, board: Board) -> Path:
    return Path(logs) / board.name / RECORD


def aa_board(board: Board, kernel_id: str) -> Board:
    """The A/A board of the build cost: `<board>-aa` with two kernels `a` and `b`, both
    the board's kernel `kernel_id` (the same source, config and toolchain: one build key)."""
    k = board.kernel(kernel_id)
    arms = [dataclasses.replace(k, id=a, description=f"{kernel_id} (A/A arm {a})") for a in ARMS]
    return board.model_copy(update={"name": f"{board.name}-aa", "kernels": arms})


def plan(board: Board, logs: Path, cache: Path, study: tuple[str, str] | None = None, say=print) -> list[Plan]:
    """Every kernel's sources prepared (downloaded and unpacked once, in the cache) and
    its build key; refused in one line before any build when a toolchain is missing.
    study: (board, kernel) whose build.json every kernel's study build is (the A/A
    board's arms are one kernel of the board); default: each kernel's own."""
    out = []
    for k in board.kernels:
        try:
            tc = toolchain.find(k.cross_compile, k.arch, use_ccache=False)
        except BringupError as e:
            raise BringupError(f"{board.name}/{k.id}: {e}") from None
        src = sources.prepare(k.source, cache, log=lambda m: say(f"  {m}"))
        fixes = erafixes.select_fixes(k, src, tc)
        key = kbuild.build_key(board, k, src, tc, fixes=fixes)
        board_name, kernel_id = study or (board.name, k.id)
        out.append(Plan(k, src, tc, fixes, key, _study_build(Path(logs) / board_name / kernel_id / "build.json", key)))
    return out


def _study_build(f: Path, key: str | None) -> records.Build | None:
    """The study's build.json of a kernel when it was made from the same key."""
    if key is None or not f.exists():
        return None
    try:
        rec = records.read(f, records.Build)
    except BringupError:
        return None
    return rec if rec.key == key else None


def store_key(board: Board, plans: list[Plan], jobs: int) -> str | None:
    """The key a measurement is kept under in the cache: the kernels, their build keys, -j."""
    if any(kernel_plan.key is None for kernel_plan in plans):
        return None
    material = {
        "board": board.name,
        "kernels": [[kernel_plan.kernel.id, kernel_plan.key] for kernel_plan in plans],
        "jobs": jobs,
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


def fresh(rec: BuildCost | None, plans: list[Plan], jobs: int, runs: int) -> str | None:
    """None when `rec` measured these builds (same kernels, build keys and -j) with at least
    `runs` rounds; else why not."""
    if rec is None:
        return "no build-cost.json"
    if [kernel_plan.kernel.id for kernel_plan in plans] != list(rec.kernels):
        return "measured other kernels"
    if rec.jobs != jobs:
        return f"measured with -j{rec.jobs}, -j{jobs} wanted"
    for kernel_plan in plans:
        if kernel_plan.key is None or rec.kernels[kernel_plan.kernel.id].build_key != kernel_plan.key:
            return f"{kernel_plan.kernel.id} changed since (build key)"
    if rec.rounds < runs:
        return f"{rec.rounds} round(s), {runs} wanted"
    return None


def _read(f: Path) -> BuildCost | None:
    if not f.exists():
        return None
    try:
        return records.read(f, BuildCost)
    except BringupError:
        return None


def measure(
    board: Board,
    logs: Path,
    cache: Path,
    runs: int = DEFAULT_ROUNDS,
    until_ci: float | None = None,
    max_rounds: int = DEFAULT_MAX_ROUNDS,
    jobs: int | None = None,
    guard: bool = False,
    force: bool = False,
    study: tuple[str, str] | None = None,
    parallel: int = 1,
    say: Callable[[str], object] = print,
) -> tuple[BuildCost, Path, bool]:
    """Time a cold build of every kernel of the board, `runs` rounds (with until_ci: more
    until the CPU time differences' 95 % intervals are within ±until_ci %, at most
    max_rounds).  jobs: make -j (default: the study's build's, else the CPUs).  parallel:
    builds at once (local workers of the round engine, in round order; refused with the
    guard): each build's CPU time stays its own, its wall time is shared with the others.
    Returns the record, its file and whether it was reused (up to date, or from the cache)."""
    rule = rounds.rule(runs, until_ci, max_rounds)  # refused here, before any work
    rounds.check([rounds.Plain(_no_target)], parallel, guard)  # --parallel with the guard: refused here
    if not board.kernels:
        raise BringupError(f"board {board.name}: no kernels")
    plans = plan(board, logs, cache, study, say=say)
    study_jobs = [kernel_plan.study.jobs for kernel_plan in plans if kernel_plan.study is not None]
    j = jobs or next(iter(study_jobs), None) or os.cpu_count() or 1
    out = record_path(logs, board)
    wanted = runs
    if not force:
        why = fresh(_read(out), plans, j, wanted)
        if why is None:
            say(f"  build cost up to date: {paths.rel(out)} kept (FORCE=1 measures again)")
            return _read(out), out, True  # type: ignore[return-value]
        skey = store_key(board, plans, j)
        stored = _store_dir(cache, board) / skey / RECORD if skey else None
        if stored is not None and fresh(_read(stored), plans, j, wanted) is None:
            rec = _read(stored)
            assert rec is not None
            records.write(out, rec)
            say(
                f"  build cost measured before with the same builds and -j{j} ({rec.rounds} rounds on "
                f"{rec.created[:10]}): copied to {paths.rel(out)} (FORCE=1 measures again)"
            )
            return rec, out, True
    say(
        f"  build cost of {', '.join(kernel_plan.kernel.id for kernel_plan in plans)}: "
        "cold make of the image without ccache, "
        f"-j{j}, {rule.limit if until_ci is None else f'{rule.first_check} to {rule.limit}'} round(s) interleaved"
        f"{', host-load guard on' if guard else ''}{f', {parallel} builds at once' if parallel > 1 else ''}"
    )
    rec = _run(board, logs, cache, plans, rule, until_ci, j, guard, parallel, say)
    records.write(out, rec)  # atomic: a failed or interrupted run never got here
    skey = store_key(board, plans, j)
    if skey:
        _store(cache, board, skey, out)
    return rec, out, False


def _store_dir(cache: Path, board: Board) -> Path:
    return Path(cache) / "build-cost" / board.name / "results"


def _store(cache: Path, board: Board, skey: str, rec_file: Path) -> None:
    d = _store_dir(cache, board) / skey
    try:
        d.mkdir(parents=True, exist_ok=True)
        tmp = d / f".{RECORD}.{os.getpid()}"
        shutil.copyfile(rec_file, tmp)
        os.replace(tmp, d / RECORD)
    except OSError:
        pass  # the store is a convenience: the record itself is written


def _run(
    board, logs, cache, plans: list[Plan], rule, until_ci, jobs: int, guard: bool, parallel: int, say
) -> BuildCost:
    by_id = {kernel_plan.kernel.id: kernel_plan for kernel_plan in plans}
    created = clock.now()
    scratch_root = Path(cache) / "build-cost" / board.name
    scratch_root.mkdir(parents=True, exist_ok=True)
    configs: dict[str, str] = {}

    def build(run: rounds.Run) -> dict[str, Any]:
        kernel_plan = by_id[run.kernel]
        res = _one(board, logs, cache, kernel_plan, jobs, scratch_root, run)
        configs.setdefault(run.kernel, res["config_sha256"])
        if res["config_sha256"] != configs[run.kernel]:
            raise BuildFailed(f"build cost of {board.name}/{run.kernel}: the .config differs between rounds")
        return res

    # one measurement of a board at a time, across checkouts (two would disturb each other)
    with lock.exclusive(scratch_root / "measure.lock", f"build cost of {board.name}", say):
        for left in scratch_root.iterdir():  # scratch directories of a run that was killed
            if left.is_dir() and left.name != "results":
                shutil.rmtree(left, ignore_errors=True)
        out = rounds.run(
            [kernel_plan.kernel.id for kernel_plan in plans],
            rule,
            build,
            places=[rounds.Plain(_no_target)],
            jobs=parallel,
            guard=guard,
            headline=_headline,
            on_done=_say_round,
            label="  build-cost rounds",
            work=rounds.BUILDS,
            say=say,
        )
    kernels = {
        kernel_plan.kernel.id: _kernel_entry(logs, kernel_plan, out, configs[kernel_plan.kernel.id])
        for kernel_plan in plans
    }
    data = {
        "board": board.name,
        "created": created,
        "finished": clock.now(),
        "jobs": jobs,
        "ccache": False,
        "gcc": {kernel_plan.kernel.id: kernel_plan.tc.version for kernel_plan in plans},
        "rounds": len(out.rounds()),
        "order": {str(r): ks for r, ks in out.order.items()},
        "stopped": out.stopped,
        "until_ci_pct": until_ci,
        "guard": guard,
        "parallel": parallel,
        "scratch": str(scratch_root),
        "kernels": kernels,
    }
    return records.validate(data, BuildCost, str(record_path(logs, board)))


def _headline(kept: list[rounds.Done[dict[str, Any]]]) -> stats.Headline:
    """The values --until-ci judges: each kernel's CPU time by round."""
    cpu: dict[str, dict[int, float]] = {}
    for d in kept:
        cpu.setdefault(d.kernel, {})[d.round] = d.result["cpu"]
    return {"cpu": cpu}


def _say_round(d: rounds.Done[dict[str, Any]]) -> None:
    """A build's line as it ends."""
    r = d.result
    host = f"; host disturbed: {d.host['disturbed']}" if d.host and d.host.get("disturbed") else ""
    d.run.say(
        f"  round {d.round} {d.kernel}: {r['cpu']:.1f} s CPU (user {r['user']:.1f} s, sys {r['sys']:.1f} s), "
        f"{r['real']:.1f} s wall{host}"
    )


def _kernel_entry(logs, kernel_plan: Plan, out: rounds.Outcome[dict[str, Any]], config: str) -> dict[str, Any]:
    """One kernel's part of the record: its builds (every attempt) and the study's build beside them."""
    runs = [
        {
            "round": d.round,
            "attempt": d.attempt,
            "redone": d.redone,
            **{k: v for k, v in d.result.items() if k not in ("config_sha256", "targets")},
            "host": d.host,
        }
        for d in out.runs
        if d.kernel == kernel_plan.kernel.id
    ]
    study = kernel_plan.study
    return {
        "build_key": kernel_plan.key,
        "version": kernel_plan.src.version,
        "config_sha256": config,
        "config_matches_study": _matches_study(logs, study, config),
        "targets": next((d.result["targets"] for d in out.runs if d.kernel == kernel_plan.kernel.id), []),
        "runs": runs,
        "study_build": None
        if study is None
        else {
            "real": study.time.real,
            "user": study.time.user,
            "sys": study.time.sys,
            "jobs": study.jobs,
            "ccache_hit_rate": study.ccache.hit_rate if study.ccache else None,
        },
    }


def config_sha256(text: str) -> str:
    """The sha256 of a .config's settings: its lines without the comments kconfig writes
    around them (2.6-era kconfig puts the date in its header), "# CONFIG_X is not set" kept."""
    keep = [ln for ln in text.splitlines() if ln.strip() and (not ln.startswith("#") or ln.startswith("# CONFIG_"))]
    return hashlib.sha256(("\n".join(keep) + "\n").encode()).hexdigest()


def _matches_study(logs: Path, study: records.Build | None, sha: str) -> bool | None:
    """Whether the scratch builds' .config has the settings of the study build's (its
    images/config); None without a study build of the same key or its config file."""
    if study is None or "config" not in study.artifacts:
        return None
    f = Path(logs) / study.board / study.kernel / "build.json"
    try:
        text = records.artifact(f, study.artifacts["config"], "artifacts").read_text(errors="replace")
    except (BringupError, OSError):
        return None
    return config_sha256(text) == sha


def _no_target(run_dir: Path):  # noqa: ANN202 -- the engine's target factory: builds boot nothing
    raise BringupError("a build-cost run has no target")


def _ctx(
    board: Board, logs: Path, cache: Path, kernel_plan: Plan, jobs: int, builddir: Path, log_name: str
) -> context.Ctx:
    """The build engine's context of one scratch build: its own build directory and log (two
    rounds of one kernel may build at once with --parallel)."""
    recdir = Path(logs) / board.name / "build-cost" / kernel_plan.kernel.id
    return context.Ctx(
        board=board,
        kernel=kernel_plan.kernel,
        src=kernel_plan.src,
        tc=kernel_plan.tc,
        cache=Path(cache),
        recdir=recdir,
        builddir=builddir,
        tree=kernel_plan.src.path,
        jobs=jobs,
        log_path=recdir / log_name,
        fixes=kernel_plan.fixes,
    )


def _one(
    board: Board, logs: Path, cache: Path, kernel_plan: Plan, jobs: int, scratch_root: Path, run: rounds.Run
) -> dict:
    """One cold build of one kernel in a fresh scratch directory: its times."""
    scratch = Path(tempfile.mkdtemp(prefix=f"{kernel_plan.kernel.id}{run.suffix}-", dir=scratch_root))
    ctx = _ctx(board, logs, cache, kernel_plan, jobs, scratch / "build", f"build{run.suffix}.log.partial")
    ctx.say = run.say
    ctx.builddir.mkdir()
    ctx.recdir.mkdir(parents=True, exist_ok=True)
    started = clock.now()
    ctx.log_path.write_text(
        f"# bringup build cost of {board.name}/{kernel_plan.kernel.id}, round {run.round}, {started}\n"
    )
    total = kernel_plan.study.kbuild_commands if kernel_plan.study is not None else None
    ctx.progress = Progress(f"  {kernel_plan.kernel.id} (cold)", total=total, unit="commands", say=run.say)
    ok = False
    try:
        ctx.tree = kbuild._prepare_tree(ctx)
        kbuild._configure(ctx)
        n_config = len(ctx.steps)
        for target in kbuild._expand_steps(ctx):
            make._make(ctx, [target], f"make {target}")
        config_sha = config_sha256(collect.dot_config(ctx).read_text(errors="replace"))
        ok = True
    finally:
        ctx.progress.close()
        if ctx.log_path.exists():
            os.replace(ctx.log_path, ctx.recdir / ("build.log" if ok else "build-failed.log"))
        shutil.rmtree(scratch, ignore_errors=True)
    image = ctx.steps[n_config:]
    user = sum(s.user for s in image)
    sys_ = sum(s.sys for s in image)
    return {
        "started": started,
        "real": round(sum(s.real for s in image), 3),
        "user": round(user, 3),
        "sys": round(sys_, 3),
        "cpu": round(user + sys_, 3),
        "configure_real": round(sum(s.real for s in ctx.steps[:n_config]), 3),
        "steps": [
            {"name": s.name, "real": round(s.real, 3), "user": round(s.user, 3), "sys": round(s.sys, 3)} for s in image
        ],
        "config_sha256": config_sha,
        "targets": [s.name.removeprefix("make ") for s in image],
    }
