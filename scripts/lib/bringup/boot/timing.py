"""Boot timing: boot each kernel several times over its serial console and
time the milestones.

  boot_once()    one boot of one kernel: target up, optional U-Boot dialogue,
                 milestones scanned as lines arrive, faults end the run.
  boot_timing()  runs interleaved across kernels (A B A B ...), statistics,
                 logs/<board>/boot-timing.json and the seed-002 table.

The engine talks to a Target (targets.py) and a Console (console.py); it does
not know whether the target is QEMU or a board on the bench.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import time
from pathlib import Path

from bringup import records
from bringup.boot import nfsroot, targets, uboot
from bringup.boot.console import Console
from bringup.build import rootfs
from bringup.errors import BootFailed, BringupError
from bringup.model.board import Board
from bringup.model.milestones import load_rules
from bringup.parse import milestones as ms
from bringup.report import stats
from bringup.util import clock


def boot_files(board: Board, build_rec: dict, recdir: Path, path: str) -> dict:
    """The image files a boot needs, from the build record's artifacts."""
    art = build_rec["artifacts"]
    target = board.image.target
    if path == "u-boot":
        key = "uImage" if "uImage" in art else target if target == "uImage" else None
        if key is None:
            raise BringupError(
                f"board {board.name}: booting through U-Boot needs a uImage; set "
                f"image.uimage = true in {board.file.name} and rebuild"
            )
    else:
        key = target
        if key not in art:
            raise BringupError(f"{recdir}/build.json: no {key} artifact")
    files = {"kernel": recdir / art[key]}
    if "dtb" in art:
        files["dtb"] = recdir / art["dtb"]
    for name, f in files.items():
        if not f.exists():
            raise BringupError(f"{f}: missing (the build record lists it; rebuild with FORCE=1)")
    return files


def make_uinitrd(board: Board, initrd: Path, out: Path) -> Path:
    argv = [
        "mkimage",
        "-A",
        board.arch.mkimage_arch or board.arch.kernel_arch,
        "-O",
        "linux",
        "-T",
        "ramdisk",
        "-C",
        "none",
        "-n",
        "bringup initramfs",
        "-d",
        str(initrd),
        str(out),
    ]
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        raise BringupError(f"mkimage (ramdisk) failed: {p.stderr.strip()}")
    return out


def boot_once(
    board: Board,
    kernel_id: str,
    build_rec: dict,
    recdir: Path,
    initrd: Path,
    run_dir: Path,
    path: str,
    rules: ms.Rules,
    timeout_factor: float = 1.0,
    target: targets.Target | None = None,
    run_index: int = 0,
    say=print,
    then=None,
    root: str = "ramdisk",
) -> dict:
    """One boot.  `then(console)`, if given, runs once the boot reached its end
    milestone, while the target is still up; its result goes to rec["after"]."""
    run_dir.mkdir(parents=True, exist_ok=True)
    kernel = board.kernel(kernel_id)
    files = boot_files(board, build_rec, recdir, path)
    nfs = None
    if root == "nfs":
        nfs = nfsroot.NfsRoot(board, kernel_id, initrd, run_dir)
        cmdline = targets.kernel_cmdline(board, kernel.cmdline, nfs.cmdline)
    else:
        cmdline = targets.kernel_cmdline(board, kernel.cmdline)
        files["initrd"] = initrd
    tftp_names = None
    tftp_dir = None
    net = {"serverip": "10.0.2.2", "use_dhcp": True, "ipaddr": None}  # QEMU user networking
    if path == "u-boot":
        prefix = ""
        if board.qemu:
            tftp_dir = run_dir / "tftp"  # QEMU's built-in TFTP server serves it
        elif board.tftp:
            prefix = f"bringup/{board.name}/{kernel_id}/"
            tftp_dir = Path(board.tftp.dir) / prefix  # the bench's TFTP server serves it
            net = {
                "serverip": board.tftp.serverip or None,
                "use_dhcp": board.tftp.dhcp,
                "ipaddr": board.tftp.ipaddr or None,
            }
        else:
            raise BringupError(
                f"board {board.name}: booting a real board through U-Boot needs a [tftp] "
                f"table (the host's TFTP directory)"
            )
        tftp_dir.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(files["kernel"], tftp_dir / "uImage")
        tftp_names = {"kernel": prefix + "uImage"}
        if nfs is None:
            make_uinitrd(board, initrd, tftp_dir / "uInitrd")
            tftp_names["initrd"] = prefix + "uInitrd"
        if "dtb" in files:
            shutil.copyfile(files["dtb"], tftp_dir / files["dtb"].name)
            tftp_names["dtb"] = prefix + files["dtb"].name
    if target is None:
        if board.qemu:
            target = targets.QemuTarget(
                board, lambda port: targets.qemu_argv(board, port, path, files, cmdline, tftp_dir), run_dir
            )
        else:
            target = targets.SerialTarget(board, say=say)
    rec = {
        "board": board.name,
        "kernel": kernel_id,
        "run_id": run_dir.name,
        "run_index": run_index,
        "status": "fail",
        "error": None,
        "path": path,
        "started": clock.now(),
        "kernelrelease": build_rec.get("kernelrelease"),
        "build_key": build_rec.get("key"),
        "root": root,
        "initrd": str(initrd),
        "cmdline": cmdline,
        "t0": "QEMU spawn" if isinstance(target, targets.QemuTarget) else "power-on",
        "log": "console.log",
        "raw": "console.raw",
    }
    scan = ms.Scan(rules)
    console = None
    try:
        with contextlib.ExitStack() as stack:
            if nfs is not None:
                stack.enter_context(nfs)  # fails at once, in one line, if the server cannot start
                rec["nfs"] = nfs.info()
            stack.enter_context(target)
            target.start()
            rec["qemu_argv"] = getattr(target, "argv", None)
            console = Console(
                target.console_url,
                target.baud,
                t0=target.t0,
                log_path=run_dir / "console.log",
                raw_path=run_dir / "console.raw",
            )
            rec["console"] = target.console_url
            if path == "u-boot":
                exp = console.expect(timeout=30 * timeout_factor)
                try:
                    uboot.run(exp, board.uboot, tftp_names, cmdline, timeout=60 * timeout_factor, **net)
                except BootFailed as e:
                    why = _cause(target, console)
                    raise BootFailed(f"{e}" + (f" ({why})" if why else ""))
            _watch(console, target, scan, rules, timeout_factor)
            if then is not None:
                rec["after"] = then(console)
            rec["status"] = "ok"
    except BootFailed as e:
        rec["error"] = str(e)
    except BringupError as e:  # set-up faults (power command, missing QEMU): recorded, then raised
        rec["error"] = str(e)
        raise
    except KeyboardInterrupt:
        rec["status"], rec["error"] = "interrupted", "interrupted by the user"
        raise
    finally:
        if console is not None:
            console.close()
        res = scan.result()
        rec.update(res)
        rec["finished"] = clock.now()
        records.write(run_dir / "boot.json", {k: v for k, v in rec.items() if k != "after"}, records.Boot)
    return rec


def _watch(console: Console, target, scan: ms.Scan, rules: ms.Rules, factor: float) -> None:
    """Feed lines to the scanner until the end milestone; fail on a fault, a
    timeout (naming the milestone), QEMU dying or the console closing."""
    fed = 0
    last_t = 0.0
    while True:
        console.wait(fed, timeout=0.05)
        lines = console.lines
        while fed < len(lines):
            line = lines[fed]
            scan.feed(line.n, line.t, line.text)
            fed += 1
            if scan.fault:
                f = scan.fault
                raise BootFailed(f"{f['message']} at line {f['line']}: {f['text'].strip()!r}")
        if scan.found:
            last_t = max(f.host for f in scan.found.values() if f.host is not None)
        part = console.partial()
        if part is not None and not scan.done():
            end = [m for m in rules.milestones if m.end]
            for m in end:
                if m.regex.search(part.text) and m.name not in scan.found:
                    scan.found[m.name] = ms.Found(m.name, part.t, ms.printk_time(part.text), part.n, part.text)
        if scan.done():
            missing = [m.label for m in rules.milestones if m.required and m.name not in scan.found]
            if missing:
                raise BootFailed(f"reached the end milestone without {', '.join(missing)}")
            return
        nxt = scan.next_required()
        if nxt is not None and console.now() - last_t > nxt.timeout * factor:
            last = max(scan.found.values(), key=lambda f: f.host or 0, default=None)
            after = f" (last milestone: {last.name} at {last.host:.2f}s)" if last else ""
            raise BootFailed(f"no {nxt.label} within {nxt.timeout * factor:.0f}s{after}")
        why = _cause(target, console)
        if why:
            raise BootFailed(f"{why}, before {nxt.label if nxt else 'the end'}")


def _cause(target, console, grace: float = 1.0) -> str | None:
    """Why the boot cannot go on, naming the root cause: when the console closed because
    QEMU died, the socket closes a moment before the process can be reaped, so give
    the target a moment to say so."""
    why = target.alive()
    if why or not console.closed_reason:
        return why
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        why = target.alive()
        if why:
            return f"{why} ({console.closed_reason})"
        time.sleep(0.02)
    return console.closed_reason


# --- runs, statistics, summary ---------------------------------------------


def reference(rec: dict, rules: ms.Rules) -> tuple[str, float]:
    """Times are reported from the reference milestone (the start of loading the kernel
    when a bootloader loaded it: seed 002's reference) when the boot reached it, else from t0."""
    ref = rules.reference()
    m = rec.get("milestones", {})
    if ref is not None and ref.name in m and m[ref.name]["host_s"] is not None:
        return ref.name, m[ref.name]["host_s"]
    return "t0", 0.0


def summarize(board: Board, recs: list[dict], rules: ms.Rules, kernels: list[str]) -> dict:
    out = {"board": board.name, "created": clock.now(), "kernels": {}}
    for kid in kernels:
        runs = [r for r in recs if r["kernel"] == kid]
        ok = [r for r in runs if r["status"] == "ok"]
        per = {}
        refs = {reference(r, rules)[0] for r in ok}
        for m in rules.milestones:
            vals = []
            pk = []
            for r in ok:
                f = r["milestones"].get(m.name)
                if f and f["host_s"] is not None:
                    vals.append(f["host_s"] - reference(r, rules)[1])
                    if f["printk_s"] is not None:
                        pk.append(f["printk_s"])
            if vals:
                per[m.name] = {
                    "label": m.label,
                    "host": stats.summarize(vals),
                    "printk": stats.summarize(pk),
                    "values": [round(v, 6) for v in vals],
                }
        hidden = [r["hidden_at_zero_s"] for r in ok if r.get("hidden_at_zero_s") is not None]
        lags = [r["printk_lag_ms"] for r in ok if r.get("printk_lag_ms")]
        out["kernels"][kid] = {
            "runs": len(runs),
            "ok": len(ok),
            "failed": len(runs) - len(ok),
            "reference": refs.pop() if len(refs) == 1 else ("mixed" if refs else None),
            "kernelrelease": ok[0]["kernelrelease"] if ok else None,
            "milestones": per,
            "hidden_at_zero_s": stats.summarize(hidden),
            "printk_lag_ms": {
                "median": stats.summarize([x["median"] for x in lags]),
                "p95": stats.summarize([x["p95"] for x in lags]),
            }
            if lags
            else None,
            "failures": [{"run_id": r["run_id"], "error": r["error"]} for r in runs if r["status"] != "ok"],
            "run_ids": [r["run_id"] for r in runs],
        }
    return out


def boot_timing(
    board: Board,
    logs: Path,
    cache: Path,
    runs: int = 5,
    path: str | None = None,
    only: list | None = None,
    until_ci: float | None = None,
    max_runs: int = 20,
    timeout_factor: float = 1.0,
    root: str = "ramdisk",
    say=print,
) -> dict:
    path = path or board.boot
    if root not in ("ramdisk", "nfs"):
        raise BringupError(f"root {root!r}: use 'ramdisk' or 'nfs'")
    if path not in ("direct", "u-boot"):
        raise BringupError(f"boot path {path!r}: use 'direct' or 'u-boot'")
    if path == "u-boot" and not board.uboot:
        raise BringupError(f"board {board.name}: no [uboot] table, so it cannot boot through U-Boot")
    kernels = [k.id for k in board.kernels if not only or k.id in only]
    if only and set(only) - set(kernels):
        raise BringupError(f"board {board.name}: no kernel {sorted(set(only) - set(kernels))[0]!r}")
    builds = {}
    for kid in kernels:
        recdir = Path(logs) / board.name / kid
        f = recdir / "build.json"
        if not f.exists():
            raise BringupError(f"{board.name}/{kid}: no build record {f} (run: make build-all BOARD={board.name})")
        builds[kid] = (records.read_json(f, "bringup.build"), recdir)
    rules = load_rules(board.milestones)
    rules = rules.for_root(root)  # e.g. an NFS boot must show the mount
    rd = rootfs.build(board, logs, cache, say=say)
    initrd = Path(logs) / board.name / "rootfs" / rd.file
    stamp = clock.stamp()
    recs = []
    rnd = 0
    limit = max_runs if until_ci else runs
    while rnd < limit:
        rnd += 1
        for kid in kernels:
            rec_b, recdir = builds[kid]
            run_dir = recdir / "boot" / f"{stamp}-{path}{'-nfs' if root == 'nfs' else ''}-r{rnd:02d}"
            r = boot_once(
                board,
                kid,
                rec_b,
                recdir,
                initrd,
                run_dir,
                path,
                rules,
                timeout_factor,
                run_index=rnd,
                say=say,
                root=root,
            )
            recs.append(r)
            say(_run_line(r, rnd, limit, rules))
        if until_ci and rnd >= max(runs, 3) and _precise_enough(recs, kernels, rules, until_ci):
            say(f"95 % confidence intervals within ±{until_ci}% after {rnd} rounds")
            break
    summary = summarize(board, recs, rules, kernels)
    summary["path"] = path
    summary["root"] = root
    summary["runs_requested"] = runs
    for kid in kernels:
        summary["kernels"][kid]["build_key"] = builds[kid][0].get("key")
    summary["rootfs"] = rd.ref().model_dump()
    failed = sum(k["failed"] for k in summary["kernels"].values())
    records.write(
        Path(logs) / board.name / records.boot_timing_name(root, failed=failed > 0), summary, records.BootTiming
    )
    return summary


def _precise_enough(recs, kernels, rules, pct) -> bool:
    end = [m.name for m in rules.milestones if m.end]
    for kid in kernels:
        vals = [
            r["milestones"][end[0]]["host_s"] - reference(r, rules)[1]
            for r in recs
            if r["kernel"] == kid and r["status"] == "ok" and end[0] in r["milestones"]
        ]
        s = stats.summarize(vals)
        if not s or s["ci95_half_pct"] is None or s["ci95_half_pct"] > pct:
            return False
    return True


def _run_line(r: dict, rnd: int, limit: int, rules: ms.Rules) -> str:
    if r["status"] != "ok":
        return f"  run {rnd}/{limit} {r['kernel']}: FAILED: {r['error']}"
    ref_name, ref = reference(r, rules)
    m = r["milestones"]
    parts = []
    for x in rules.flagged("progress"):
        if x.name in m:
            parts.append(f"{x.name} {m[x.name]['host_s'] - ref:.2f}s")
    return f"  run {rnd}/{limit} {r['kernel']}: ok ({', '.join(parts)}; from {ref_name})"


def render_table(summary: dict, rules: ms.Rules) -> str:
    kern = list(summary["kernels"])
    refs = {v["reference"] for v in summary["kernels"].values() if v["reference"]}
    ref = rules.reference()
    ref_label = (
        f"{ref.label} (the bootloader's load command)"
        if ref is not None and refs == {ref.name}
        else "QEMU start / power-on"
        if refs == {"t0"}
        else "(no successful run)"
        if not refs
        else "mixed references"
    )
    heads = ["", *kern, *(["Delta"] if len(kern) == 2 else [f"Delta {k}" for k in kern[1:]])]
    rows = []
    for m in rules.shown(refs):
        cells, meds = [], []
        for k in kern:
            st = summary["kernels"][k]["milestones"].get(m.name)
            if st:
                h = st["host"]
                ci = f" ±{(h['ci95'][1] - h['ci95'][0]) / 2:.2f}" if h["ci95"] else ""
                cells.append(f"{h['median']:.2f}s{ci}")
                meds.append(h["median"])
            else:
                cells.append("-")
                meds.append(None)
        if all(c == "-" for c in cells):
            continue
        deltas = []
        base = summary["kernels"][kern[0]]["milestones"].get(m.name, {}).get("values")
        for k, v in zip(kern[1:], meds[1:]):
            if v is None or meds[0] in (None, 0):
                deltas.append("n/a")
                continue
            d = (v - meds[0]) / meds[0] * 100
            test = stats.mann_whitney(base or [], summary["kernels"][k]["milestones"][m.name].get("values") or [])
            mark = "" if test is None else " *" if test["p"] < 0.05 else " (n.s.)"
            deltas.append(f"{'+' if d >= 0 else '-'} {abs(d):.0f} %{mark}")
        rows.append([f"... until {m.label}", *cells, *deltas])
    widths = [max(len(r[i]) for r in [heads, *rows]) for i in range(len(heads))]
    out = [
        f"Boot timing for {summary['board']} ({summary.get('path')}): medians of "
        + ", ".join(f"{k} n={summary['kernels'][k]['ok']}" for k in kern)
        + "; ± is the 95 % confidence half-width; * marks a delta significant at p < 0.05 "
        "(Mann-Whitney U, two-sided, over the runs), (n.s.) one that is not",
        f"Time from the {ref_label}:",
        "",
    ]
    out.append("| " + " | ".join(h.ljust(w) for h, w in zip(heads, widths)) + " |")
    out.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        out.append(
            "| " + " | ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))) + " |"
        )
    out.append("")
    for k in kern:
        v = summary["kernels"][k]
        h = v["hidden_at_zero_s"]
        lag = v["printk_lag_ms"]
        extra = []
        if h:
            extra.append(f"time hidden at [0.000000] (kernel printing before its clock ran): median {h['median']:.3f}s")
        if lag and lag["median"]:
            extra.append(f"printk lag median {lag['median']['median']:.1f} ms, p95 {lag['p95']['median']:.1f} ms")
        if v["failed"]:
            extra.append(
                f"{v['failed']} failed run(s), not in the statistics: "
                + "; ".join(f"{f['run_id']}: {f['error']}" for f in v["failures"][:3])
            )
        if extra:
            out.append(f"{k}: " + "; ".join(extra))
    return "\n".join(out) + "\n"
