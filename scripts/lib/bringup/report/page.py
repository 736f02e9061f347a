"""The study as a page: logs/<board>/report/index.html (one self-contained file:
inline CSS and SVG charts, no network needed) and report.md (charts as SVG files
next to it).

Reads records only (build.json, boot-timing.json + boot run records,
footprint.json, lmbench.json, vmlinux/config artifacts), never consoles or
other logs.  Every number links to the record it came from, and to its line in
a console log or lmbench.txt where the record says which line that is.

A record that does not read (not JSON, wrong schema, a field missing or
mistyped, an artifact outside its directory) is left out: the report goes on
with the others and says, in one line per record, what it left out and why.
A record or kernel directory that cannot be read at all (a permission error)
is a fault: the report refuses in one line before it writes anything
(report/reading.py).  The model is typed, a section per module (report/model.py).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import jinja2

from bringup import records, stats
from bringup.errors import BringupError
from bringup.model.board import Board
from bringup.report import (
    bootsection,
    buildsection,
    charts,
    clocknote,
    environment,
    inputs,
    marks,
    measuresection,
    reproduce,
    summary,
    workloads,
)
from bringup.report.model import Head, ReportModel
from bringup.report.reading import Unreadable
from bringup.report.tables import fmt_delta
from bringup.util import clock, paths

TEMPLATES = Path(__file__).parent / "templates"


def collect(board: Board, logs: Path, top: int = 12, own_floors: bool = True) -> dict:
    """The report model of one board's records, as the templates read it (ReportModel.as_dict()).
    own_floors=False: deterministic findings are judged against the shipped A/A floors
    only (the A/A check itself; model/clocks.py floors())."""
    return build_model(board, logs, top, own_floors).as_dict()


def build_model(board: Board, logs: Path, top: int = 12, own_floors: bool = True) -> ReportModel:
    """The typed report model: each section made by its own module (report/model.py)."""
    g = inputs.gather(board, logs)
    clocks = clocknote.section(board, logs, g.inputs, own_floors)
    model = ReportModel(
        head=Head(board=board.name, description=board.description, kernels=g.kernels, generated=clock.now()),
        inputs=g.inputs,
        clock=clocks,
        build=buildsection.section(g, top),
        boot=bootsection.section(board, g, clocks.floors),
        memory=measuresection.memory(g.inputs.footprint, g.kernels),
        lmbench=measuresection.lmbench(g.inputs.lmbench, g.kernels),
        workloads=workloads.section(g.inputs.workloads, g.kernels, clocks.floors),
        env=environment.for_report(g.inputs, g.live_nfs),
        reproduce=reproduce.steps(board.name, g.inputs, g.live_nfs),
        findings=[],
    )
    flat = model.as_dict()
    model.findings.extend(summary.summarize(flat))
    marks.explained_findings(flat)
    marks.mark_from_family(flat)
    return model


@functools.cache
def _env(html: bool = True) -> jinja2.Environment:
    """One environment per kind of output and process: Jinja compiles each template once (about
    0.25 s each), not at every report."""
    e = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=jinja2.select_autoescape(["html", "j2"]) if html else False,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    e.globals["test_rule"] = stats.RULE  # the study's test in words, for the legends

    def num(v, digits=1):
        if v is None:
            return "–"
        if isinstance(v, int) or abs(v) >= 1000:
            return f"{v:.0f}"
        return f"{v:.{digits}f}" if abs(v) >= 1 or v == 0 else f"{v:.3g}"

    def delta(d):
        return fmt_delta(d, minus="−")

    e.filters.update(num=num, delta=delta)
    return e


def render(model: dict, chart_svgs: dict) -> tuple[str, str]:
    html = _env().get_template("report.html.j2").render(m=model, charts=chart_svgs)
    md = (
        _env(html=False)
        .get_template("report.md.j2")
        .render(m=model, charts={k: v is not None for k, v in chart_svgs.items()})
    )
    md = "\n".join(line.rstrip() for line in md.splitlines()) + "\n"
    return html, md


def make_charts(model: dict) -> dict:
    ks = model["kernels"]
    boot = model["boot"]
    means, cis = {}, {}
    if boot:
        for k in ks:
            if k in boot.kernels:
                mm = boot.kernels[k].milestones
                shown = [m["name"] for m in model["boot_milestones"] if m["name"] in mm]
                means[k] = {n: h.mean for n in shown if (h := boot.times(mm[n])) is not None}
                cis[k] = {n: h.ci95 for n in shown if (h := boot.times(mm[n])) is not None}
    return {
        "sizes": charts.sizes([k for k in ks if k in model["sizes"]], model["sizes"], model["images"]),
        "boot": charts.boot_timeline(ks, model["boot_milestones"], means, cis),
        **{
            f"initcalls-{k}": charts.initcall_timeline(k, calls, model["boot_explained"]["levels"])
            for k, calls in (model["boot_explained"] or {}).get("timeline", {}).items()
        },
        "bw_mem": charts.bw_mem_cascade(ks, model["bw_mem"]),
        "workloads": charts.relative_performance(model["workload_relative"]),
    }


@dataclass(frozen=True)
class Report:
    """What write() made: the page, the Markdown, and the model both were rendered from."""

    index: Path
    markdown: Path
    model: dict

    @property
    def left_out(self) -> list[str]:
        return self.model["left_out"]

    def summary(self) -> str:
        return summary_text(self.model)


def summary_text(model: dict) -> str:
    """The management summary as plain text (what `make all` shows at the end)."""
    if not model["findings"]:
        return "Management summary: only one kernel has records, nothing to compare."
    lines = []
    for f in model["findings"]:
        lines.append(f"Management summary: {f['kernel']} against {f['against']}")
        for title, items in f["sections"]:
            lines.append(f"{title}:")
            lines += [f"- {it['claim']}" for it in items]
    pl = model.get("places")
    if pl:
        lines.append(
            f"Places ({', '.join(pl['places'])}; place as a factor, {pl['tests']} test(s), apart from the kernels):"
        )
        lines += [f"- {c}" for c in pl["claims"]] or ["- no difference between places shown"]
    return "\n".join(lines)


def write(board: Board, logs: Path, say=print) -> Report:
    """Write logs/<board>/report/{index.html,report.md,model.json,charts/*.svg}.  A record or
    directory that cannot be read refuses the report before anything is written (the last
    report stays as it was); one that is absent is a kernel or step not measured."""
    try:
        model = collect(board, logs)
    except Unreadable as e:
        raise Unreadable(f"report: {e}") from None
    for why in model["left_out"]:
        say(f"report: left out {why}")
    for st in (x for x in model["sets"] if x["step"] != "report"):
        say(f"report: read {records.sets.describe(st)}")
    if not model["kernels"]:
        why = f"; left out: {model['left_out'][0]}" if model["left_out"] else f" (run: make all BOARD={board.name})"
        raise BringupError(f"board {board.name}: no records under {Path(logs) / board.name}{why}")
    svgs = make_charts(model)
    html, md = render(model, svgs)
    out = Path(logs) / board.name / "report"
    # the page, the Markdown, the model and the charts land together or not at all (records/sets.py)
    with records.ResultSet(Path(logs) / board.name, "report") as rset:
        for name, svg in svgs.items():
            if svg:
                rset.write_text(out / "charts" / f"{name}.svg", svg)
            else:  # nothing to draw this time: no chart left over from an earlier report
                rset.remove(out / "charts" / f"{name}.svg")
        rset.write_text(out / "report.md", md)
        rset.write_text(out / "index.html", html)
        rset.write_json(
            out / "model.json",
            {k: v for k, v in model.items() if k not in ("build", "boot", "live_boot", "build_cost")},
        )
    say(f"report: {paths.rel(out / 'index.html')} (and report.md; report set {rset.id})")
    return Report(index=out / "index.html", markdown=out / "report.md", model=model)
