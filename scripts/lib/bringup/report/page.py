"""The study as a page: logs/<board>/report/index.html (one self-contained file:
inline CSS and SVG charts, no network needed) and report.md (charts as SVG files
next to it).

Reads records only (build.json, boot-timing.json + boot run records,
footprint.json, lmbench.json, vmlinux/config artifacts), never consoles.  Every
number links to the record it came from, and to its console line where there
is one.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
from pathlib import Path

import jinja2

from bringup import records
from bringup.model.board import Board
from bringup.model.milestones import load_rules
from bringup.parse import sizediff
from bringup.report import buildtable as buildreport
from bringup.report import charts, compare, findings, stats
from bringup.util import clock, paths

TEMPLATES = Path(__file__).parent / "templates"
SIZE_RE = re.compile(r"^bw_mem_(rd|wr|bcopy) (\d+)([KMG]?)$")
UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}


def _read(f: Path, kind: str) -> dict | None:
    return records.read_json(f, kind) if f.is_file() else None


def collect(board: Board, logs: Path, top: int = 12) -> dict:
    """The report model: plain data from the records of one board."""
    logs = Path(logs)
    bdir = logs / board.name
    ids = [k.id for k in board.kernels]
    build = {k: r for k in ids if (r := _read(bdir / k / "build.json", "bringup.build"))}
    fp = {k: r for k in ids if (r := _read(bdir / k / "footprint.json", "bringup.footprint"))}
    lm = {k: r for k in ids if (r := _read(bdir / k / "lmbench.json", "bringup.lmbench"))}
    boot = _read(bdir / records.boot_timing_name(), "bringup.boot-timing")
    kernels = [k for k in ids if k in build or k in fp or (boot and k in boot["kernels"])]
    model = {
        "board": board.name,
        "description": board.description,
        "kernels": kernels,
        "generated": clock.now(),
        "build": build,
        "footprint": fp,
        "lmbench": lm,
        "boot": boot,
        "missing": {
            "build": [k for k in kernels if k not in build],
            "boot": [k for k in kernels if not boot or k not in boot["kernels"]],
            "footprint": [k for k in kernels if k not in fp],
        },
    }
    model["build_table"] = _build_table(build, kernels)
    model["sizes"] = {k: build[k]["sizes"]["groups"] for k in kernels if k in build}
    model["images"] = {
        k: {
            f"{build[k]['sizes'][n]['file']} ({n.split('_')[0]})": build[k]["sizes"][n]["bytes"]
            for n in ("compressed_image", "uncompressed_image")
            if build[k]["sizes"].get(n)
        }
        for k in kernels
        if k in build
    }
    model["sizediff"] = _sizediffs(bdir, build, kernels, top)
    rules = load_rules(board.milestones)
    model["boot_milestones"] = _boot_milestones(boot, rules) if boot else []
    model["boot_rows"] = (
        _boot_rows(boot, model["boot_milestones"], kernels, bdir, records.boot_timing_name()) if boot else []
    )
    nfs = _read(bdir / records.boot_timing_name("nfs"), "bringup.boot-timing")
    model["boot_nfs"] = None
    if nfs:
        mil = _boot_milestones(nfs, rules)
        model["boot_nfs"] = {
            "summary": nfs,
            "milestones": mil,
            "rows": _boot_rows(nfs, mil, kernels, bdir, records.boot_timing_name("nfs")),
        }
    model["footprint_rows"] = _footprint_rows(fp, kernels, bdir)
    model["lmbench_groups"] = _lmbench_groups(lm, kernels, bdir)
    model["bw_mem"] = _bw_mem(lm, kernels)
    model["env"] = _environment(board, build)
    model["reproduce"] = _reproduce(board, model)
    model["findings"] = findings.summarize(model)
    return model


def _delta(a, b):
    d = findings.pct(a, b)
    return None if d is None else round(d, 1)


def _build_table(build: dict, kernels: list[str]) -> list[dict]:
    ks = [k for k in kernels if k in build]
    if not ks:
        return []
    t = buildreport.table([build[k] for k in ks])
    keys = {
        "real": "time.real",
        "user": "time.user",
        "sys": "time.sys",
        "Compressed kernel": "sizes.compressed_image.bytes",
        "Uncompressed kernel": "sizes.berkeley.dec",
        "text": "sizes.berkeley.text",
        "data": "sizes.berkeley.data",
        "bss": "sizes.berkeley.bss",
    }
    rows = []
    for r in t["rows"]:
        rows.append(
            {
                "label": r["label"],
                "unit": r["unit"],
                "cells": [
                    {"kernel": k, "value": v, "link": f"../{k}/build.json", "title": f"build.json: {keys[r['label']]}"}
                    for k, v in zip(ks, r["values"])
                ],
                "deltas": [None if d is None else round(d, 1) for d in r["deltas"]],
            }
        )
    hits = [(build[k].get("ccache") or {}).get("hit_rate") for k in ks]
    rows.append(
        {
            "label": "ccache hits",
            "unit": "%",
            "info": True,
            "cells": [
                {
                    "kernel": k,
                    "value": None if h is None else h * 100,
                    "link": f"../{k}/build.json",
                    "title": "build.json: ccache.hit_rate",
                }
                for k, h in zip(ks, hits)
            ],
            "deltas": [None] * (len(ks) - 1),
        }
    )
    return rows


def _sizediffs(bdir: Path, build: dict, kernels: list[str], top: int) -> list[dict]:
    ks = [k for k in kernels if k in build]
    out = []
    for k in ks[1:]:
        c = compare.compare(bdir / ks[0] / "build.json", bdir / k / "build.json")
        entry = {"a": ks[0], "b": k, "rows": c["rows"]}
        if "symbols" in c:
            s = c["symbols"]
            entry["symbols"] = {
                **{
                    x: s[x]
                    for x in ("added", "removed", "grown", "shrunk", "up", "down", "total_before", "total_after")
                },
                "grown_rows": [r for r in s["rows"] if r["delta"] > 0][:top],
                "shrunk_rows": [r for r in s["rows"] if r["delta"] < 0][:top],
                "text": sizediff.render(s, top),
            }
        if "config" in c:
            cd = c["config"]
            entry["config"] = {
                "added": cd["added"],
                "removed": cd["removed"],
                "changed": cd["changed"],
                "text": sizediff.render_config_diff(cd, 3 * top),
            }
        out.append(entry)
    return out


def _boot_milestones(boot: dict, rules) -> list[dict]:
    refs = {v["reference"] for v in boot["kernels"].values() if v.get("reference")}
    return [
        {"name": m.name, "label": m.label, "summary": m.summary}
        for m in rules.shown(refs)
        if any(m.name in v["milestones"] for v in boot["kernels"].values())
    ]


def _median_run(bdir: Path, kernel: str, kinfo: dict, name: str, value: float) -> dict | None:
    """The run whose value is the median (or nearest), with its console line."""
    values = kinfo["milestones"][name].get("values") or []
    ids = kinfo.get("run_ids") or []
    if not values or len(values) != len(ids):
        return None
    i = min(range(len(values)), key=lambda j: abs(values[j] - value))
    rec = _read(bdir / kernel / "boot" / ids[i] / "boot.json", "bringup.boot")
    if not rec:
        return None
    m = (rec.get("milestones") or {}).get(name) or {}
    return {
        "link": f"../{kernel}/boot/{ids[i]}/console.log",
        "title": f"run {ids[i]}, console.log line {m.get('line')}: {m.get('text', '')}",
    }


def _boot_rows(boot: dict, milestones: list[dict], kernels: list[str], bdir: Path, fname: str) -> list[dict]:
    ks = [k for k in kernels if k in boot["kernels"]]
    rows = []
    for m in milestones:
        cells, base_vals = [], None
        for k in ks:
            st = boot["kernels"][k]["milestones"].get(m["name"])
            if not st:
                cells.append(None)
                continue
            h = st["host"]
            cell = {
                "kernel": k,
                "median": h["median"],
                "mean": h["mean"],
                "ci": h["ci95"],
                "n": h["n"],
                "half": None if not h["ci95"] else (h["ci95"][1] - h["ci95"][0]) / 2,
                "link": f"../{fname}",
                "title": f"{fname}: kernels.{k}.milestones.{m['name']}",
            }
            run = _median_run(bdir, k, boot["kernels"][k], m["name"], h["median"])
            if run:
                cell.update(run)
            cells.append(cell)
        deltas = []
        base = cells[0]
        base_vals = boot["kernels"][ks[0]]["milestones"].get(m["name"], {}).get("values") if ks else None
        for k, c in zip(ks[1:], cells[1:]):
            if not c or not base:
                deltas.append(None)
                continue
            t = stats.mann_whitney(base_vals or [], boot["kernels"][k]["milestones"][m["name"]].get("values") or [])
            deltas.append(
                {
                    "pct": _delta(base["median"], c["median"]),
                    "p": None if t is None else t["p"],
                    "significant": None if t is None else t["p"] < findings.ALPHA,
                }
            )
        rows.append({"name": m["name"], "label": m["label"], "cells": cells, "deltas": deltas})
    return rows


def _run_file(run: str | None, name: str) -> Path | None:
    """A file of a footprint run; records keep the run directory relative to the
    project root (paths.rel), or absolute when logs live elsewhere."""
    return paths.ROOT / run / name if run else None


def _console_line(bdir: Path, run: str | None, text: str | None) -> dict:
    if not run or not text:
        return {}
    log = _run_file(run, "console.log")
    run_rel = Path(run).name
    line_no = None
    if log.is_file():
        for i, line in enumerate(log.read_text(errors="replace").splitlines(), 1):
            if text.strip() and text.strip() in line:
                line_no = i
                break
    return {
        "link": os.path.relpath(log, bdir / "report") if log.is_file() else None,
        "title": f"footprint run {run_rel}, console.log line {line_no}: {text.strip()}",
    }


def _footprint_rows(fp: dict, kernels: list[str], bdir: Path) -> list[dict]:
    ks = [k for k in kernels if k in fp]
    rows = []
    for label, key in (
        ("Kernel Code + Data", "kernel_code_data_kb"),
        ('total "free"', "total_free_kb"),
        ("Available for malloc()", "malloc_kb"),
    ):
        cells = []
        for k in ks:
            r = fp[k]
            cell = {
                "kernel": k,
                "value": r.get(key),
                "link": f"../{k}/footprint.json",
                "title": f"footprint.json: {key}",
            }
            if key == "kernel_code_data_kb" and r.get("memory_line"):
                cell.update(
                    {k2: v for k2, v in _console_line(bdir, r.get("run"), r["memory_line"]["line"]).items() if v}
                )
            elif key == "malloc_kb" and r.get("mem_eat"):
                cell["title"] = f"footprint.json: mem_eat: {r['mem_eat'].get('line', '')}"
            cells.append(cell)
        vals = [c["value"] for c in cells]
        deltas = [
            None if v is None or not vals[0] else {"pct": _delta(vals[0], v), "kb": v - vals[0]} for v in vals[1:]
        ]
        rows.append({"label": label, "cells": cells, "deltas": deltas})
    return rows


def _lmbench_cell(rec: dict, k: str, row: dict, value, bdir: Path) -> dict:
    """A value links to the raw lmbench output it was parsed from, when kept; the
    title names the record field."""
    cell = {
        "kernel": k,
        "value": value,
        "link": f"../{k}/lmbench.json",
        "title": f"lmbench.json: benchmarks.{row['bench']}",
    }
    raw = _run_file(rec.get("run"), "lmbench.txt")
    if raw is not None and raw.is_file():
        cell["link"] = os.path.relpath(raw, bdir / "report")
        runs = row["runs"].get(k) or []
        cell["title"] += f"; raw output: lmbench.txt, block '@@@ BEGIN {row['bench']}'" + (
            f"; median of {runs}" if len(runs) > 1 else ""
        )
    return cell


def _lmbench_groups(lm: dict, kernels: list[str], bdir: Path | None = None) -> dict:
    measured = [k for k in kernels if lm.get(k, {}).get("measured")]
    groups: dict = {}
    for k in measured:
        for bname, b in lm[k]["benchmarks"].items():
            for m in b["metrics"]:
                row = groups.setdefault(b.get("group") or "other", {}).setdefault(
                    m["name"],
                    {
                        "name": m["name"],
                        "unit": m["unit"],
                        "better": m["better"],
                        "bench": bname,
                        "values": {},
                        "runs": {},
                    },
                )
                row["values"][k] = m["value"]
                row["runs"][k] = m.get("values") or [m["value"]]
    out = {
        "kernels": measured,
        "not_measured": {k: lm[k].get("reason") for k in kernels if k in lm and not lm[k].get("measured")},
        "missing": [k for k in kernels if k not in lm],
        "groups": [],
    }
    for g, rows in groups.items():
        rs = []
        for r in rows.values():
            vals = [r["values"].get(k) for k in measured]
            deltas = []
            for k, v in zip(measured[1:], vals[1:]):
                d = None if v is None else _delta(vals[0], v)
                worse = None if d is None else (d > 0) == (r["better"] == "lower")
                t = stats.mann_whitney(r["runs"].get(measured[0], []), r["runs"].get(k, []))
                deltas.append(
                    None
                    if d is None
                    else {
                        "pct": d,
                        "worse": worse,
                        "p": t and t["p"],
                        "significant": None if t is None else t["p"] < findings.ALPHA,
                    }
                )
            rs.append(
                {**r, "cells": [_lmbench_cell(lm[k], k, r, v, bdir) for k, v in zip(measured, vals)], "deltas": deltas}
            )
        out["groups"].append({"name": g, "rows": rs})
    return out


def _bw_mem(lm: dict, kernels: list[str]) -> dict:
    series: dict = {}
    for k in kernels:
        if not lm.get(k, {}).get("measured"):
            continue
        for b in lm[k]["benchmarks"].values():
            for m in b["metrics"]:
                mm = SIZE_RE.match(m["name"])
                if mm:
                    series.setdefault(mm.group(1), {}).setdefault(k, []).append(
                        (int(mm.group(2)) * UNITS[mm.group(3)], m["value"])
                    )
    return series


def _version(argv: list[str]) -> str:
    if not shutil.which(argv[0]):
        return "not installed"
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=20).stdout
        return out.splitlines()[0].strip() if out else "unknown"
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


def _environment(board: Board, build: dict) -> dict:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    commit = "unknown"
    if shutil.which("git"):
        p = subprocess.run(
            ["git", "-C", str(paths.ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        )
        if p.returncode == 0:
            commit = p.stdout.strip()
            if subprocess.run(["git", "-C", str(paths.ROOT), "diff", "--quiet", "HEAD"]).returncode:
                commit += " (with uncommitted changes)"
    env = {
        "machine": f"{platform.system()} {platform.release()} {platform.machine()}, {cpu}, {os.cpu_count()} CPUs",
        "bringup": commit,
        "python": platform.python_version(),
    }
    if board.qemu:
        env["qemu"] = _version([board.qemu.binary, "--version"])
    env["toolchains"] = sorted({r["toolchain"]["version"] for r in build.values()})
    env["kernels"] = [
        {
            "kernel": k,
            "release": r["kernelrelease"],
            "source": " ".join(
                str(v)
                for kk, v in r["source"].items()
                if kk in ("kind", "package", "package_version", "suite", "url", "tarball", "path")
            ),
        }
        for k, r in build.items()
    ]
    return env


def _reproduce(board: Board, model: dict) -> list[dict]:
    b = board.name
    steps = [
        {
            "step": "build",
            "command": f"make build-all BOARD={b}",
            "detail": [r["reproduce"] for r in model["build"].values() if r.get("reproduce")],
        }
    ]
    boot = model["boot"]
    if boot:
        steps.append(
            {
                "step": "boot timing",
                "command": f"make boot-timing BOARD={b} RUNS={boot['runs_requested']} BOOT_PATH={boot['path']}",
                "detail": [],
            }
        )
    if model.get("boot_nfs"):
        s = model["boot_nfs"]["summary"]
        steps.append(
            {
                "step": "boot timing, NFS root",
                "command": f"make boot-timing BOARD={b} ROOT=nfs RUNS={s['runs_requested']} BOOT_PATH={s['path']}",
                "detail": [],
            }
        )
    lm_modes = {r.get("mode") for r in model["lmbench"].values()}
    if model["footprint"]:
        mode = lm_modes.pop() if len(lm_modes) == 1 else "quick"
        steps.append(
            {
                "step": "footprint and lmbench",
                "command": f"make footprint-report BOARD={b} LMBENCH={mode}",
                "detail": [],
            }
        )
    steps.append({"step": "this report", "command": f"make report BOARD={b}", "detail": []})
    return steps


def _env() -> jinja2.Environment:
    e = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )

    def num(v, digits=1):
        if v is None:
            return "–"
        if isinstance(v, int) or abs(v) >= 1000:
            return f"{v:.0f}"
        return f"{v:.{digits}f}" if abs(v) >= 1 or v == 0 else f"{v:.3g}"

    def delta(d):
        if d is None:
            return "n/a"
        return f"{'+' if d >= 0 else '−'} {abs(d):.0f} %"

    e.filters.update(num=num, delta=delta)
    return e


def render(model: dict, chart_svgs: dict) -> tuple[str, str]:
    env = _env()
    html = env.get_template("report.html.j2").render(m=model, charts=chart_svgs)
    md_env = _env()
    md_env.autoescape = False
    md = md_env.get_template("report.md.j2").render(m=model, charts={k: v is not None for k, v in chart_svgs.items()})
    md = "\n".join(line.rstrip() for line in md.splitlines()) + "\n"
    return html, md


def make_charts(model: dict) -> dict:
    ks = model["kernels"]
    boot = model["boot"]
    means, cis = {}, {}
    if boot:
        for k in ks:
            if k in boot["kernels"]:
                mm = boot["kernels"][k]["milestones"]
                means[k] = {
                    m["name"]: mm[m["name"]]["host"]["mean"] for m in model["boot_milestones"] if m["name"] in mm
                }
                cis[k] = {m["name"]: mm[m["name"]]["host"]["ci95"] for m in model["boot_milestones"] if m["name"] in mm}
    return {
        "sizes": charts.sizes([k for k in ks if k in model["sizes"]], model["sizes"], model["images"]),
        "boot": charts.boot_timeline(ks, model["boot_milestones"], means, cis),
        "bw_mem": charts.bw_mem_cascade(ks, model["bw_mem"]),
    }


def write(board: Board, logs: Path, say=print) -> Path:
    """Write logs/<board>/report/{index.html,report.md,charts/*.svg}; returns index.html."""
    model = collect(board, logs)
    if not model["kernels"]:
        from bringup.errors import BringupError

        raise BringupError(
            f"board {board.name}: no records under {Path(logs) / board.name} (run: make all BOARD={board.name})"
        )
    svgs = make_charts(model)
    html, md = render(model, svgs)
    out = Path(logs) / board.name / "report"
    for name, svg in svgs.items():
        if svg:
            records.write_text(out / "charts" / f"{name}.svg", svg)
    records.write_text(out / "report.md", md)
    records.write_text(out / "index.html", html)
    records.write_json(out / "model.json", {k: v for k, v in model.items() if k not in ("build", "boot")})
    say(f"report: {paths.rel(out / 'index.html')} (and report.md)")
    return out / "index.html"
