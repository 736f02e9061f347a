"""The report rendered from canned records: tables' numbers, the summary's claims
(significant, not significant, not tested, deterministic), links to records."""

import json
import re

import pytest

import recordfactory as rf
from bringup import records
from bringup.model.board import load_board
from bringup.report import findings
from bringup.report import page as report

BOOT_A = [0.700, 0.710, 0.705, 0.715, 0.708]  # login, 5.10
BOOT_B = [0.790, 0.800, 0.795, 0.805, 0.798]  # login, 6.12: clearly slower
FREE_A = [0.400, 0.420, 0.410, 0.430, 0.415]  # freeing_init: overlapping
FREE_B = [0.405, 0.425, 0.395, 0.435, 0.412]


def build_rec(kernel, real, comp, text, data, bss, hits=0.0):
    return rf.build(
        kernel,
        kernelrelease={"5.10": "5.10.262", "6.12": "6.12.95"}[kernel],
        source={"package": f"linux-source-{kernel}", "package_version": "1"},
        time={"real": real, "user": real * 1.6, "sys": real * 0.25},
        ccache={"hits": 0, "misses": 100, "hit_rate": hits},
        sizes={
            "groups": {"text": text, "data": data, "bss": bss},
            "berkeley": {"text": text, "data": data, "bss": bss, "dec": text + data + bss},
            "compressed_image": {"file": "zImage", "bytes": comp},
            "boot_image": {"file": "zImage", "bytes": comp},
            "uncompressed_image": {"file": "Image", "bytes": comp * 3},
        },
        artifacts={},  # no images kept: no symbol or .config diff
    )


def lm_rec(kernel, ctx, bw, measured=True):
    if not measured:
        return rf.not_measured(kernel, "lmbench: Debian has no lmbench binaries for powerpc")
    return rf.lmbench(
        kernel,
        benchmarks={
            "lat_ctx_0k": {
                "group": "Context switching",
                "rc": 0,
                "metrics": [rf.metric("ctx 2p/0K", ctx)],
                "raw_lines": [12],
            },
            "bw_mem_rd": {
                "group": "Memory",
                "rc": 0,
                "metrics": [
                    rf.metric(f"bw_mem_rd {s}", bw * f, "MB/s")
                    for s, f in (("4K", 1.0), ("64K", 0.9), ("1M", 0.5), ("4M", 0.3))
                ],
                "raw_lines": [30],
            },
        },
    )


@pytest.fixture
def logs(tmp_path):
    d = tmp_path / "logs" / "qemu-arm"
    records.write(d / "5.10" / "build.json", build_rec("5.10", 160.0, 1592216, 2017104, 850004, 226004))
    records.write(d / "6.12" / "build.json", build_rec("6.12", 199.3, 1799168, 2263552, 879104, 187802))
    run_ids = {k: [f"r{k}-{i}" for i in range(5)] for k in ("5.10", "6.12")}
    kernels = {}
    for k, fi, lo in (("5.10", FREE_A, BOOT_A), ("6.12", FREE_B, BOOT_B)):
        kernels[k] = rf.kernel_timing(
            {
                "freeing_init": rf.milestone_stats('"Freeing unused kernel memory"', fi),
                "login": rf.milestone_stats('"login:" prompt', lo),
            },
            run_ids[k],
        )
        for i, rid in enumerate(run_ids[k]):
            hit = {"host_s": 1.0 + lo[i], "printk_s": None, "line": 90 + i, "text": "buildroot login:"}
            records.write(d / k / "boot" / rid / "boot.json", rf.boot_run(k, run_id=rid, milestones={"login": hit}))
    records.write(d / "boot-timing.json", rf.boot_timing(kernels=kernels))
    for k, code, free, malloc in (("5.10", 1144, 15032, 9024), ("6.12", 1528, 14676, 8320)):
        records.write(
            d / k / "footprint.json",
            rf.footprint(
                k,
                memory_mb=16,
                memory_line={"kernel_code_data_kb": code, "line": 40 + len(k)},
                kernel_code_data_kb=code,
                total_free_kb=free,
                malloc_kb=malloc,
                mem_eat={"kb": malloc, "bytes": malloc * 1024, "completed": True},
            ),
        )
    records.write(d / "5.10" / "lmbench.json", lm_rec("5.10", 10.0, 20000.0))
    records.write(d / "6.12" / "lmbench.json", lm_rec("6.12", 19.6, 18000.0))
    return tmp_path / "logs"


def claims(model):
    return [it["claim"] for f in model["findings"] for _, items in f["sections"] for it in items]


def test_summary_states_only_what_the_numbers_support(logs):
    m = report.collect(load_board("qemu-arm"), logs)
    c = claims(m)
    # deterministic sizes: stated
    assert "compressed image (zImage): +13 %, larger (1555 → 1757 kB)" in c
    assert "kernel code + data: +34 %, larger (1144 → 1528 kB)" in c
    # boot to login: every 6.12 run slower than every 5.10 run -> significant (exact p = 2/252)
    login = next(x for x in c if x.startswith('boot to "login:"'))
    assert login.startswith('boot to "login:" prompt: 13 % slower (0.708 → 0.798 s; shift 0.09 s (95 % CI '), login
    assert "Welch t-test (logs), n=5, q=" in login  # the fixture's runs carry no rounds: unpaired
    # overlapping runs: must not be claimed
    fi = next(x for x in c if x.startswith('boot to "Freeing'))
    assert fi.startswith('boot to "Freeing unused kernel memory" (enter user space): no significant difference (n=5;')
    # single runs: delta given, flagged as not tested
    assert "build time: 25 % slower (160 → 199 s real; one run each: not tested)" in c
    assert "Context switching: up to 96 % slower (ctx 2p/0K: 10 → 19.6 us; one run each: not tested)" in c
    assert any(x.startswith("memory available to malloc(): 7.8 % less") and "not tested" in x for x in c)


def test_build_time_with_warm_ccache_is_not_compared(logs):
    d = logs / "qemu-arm" / "6.12" / "build.json"
    rec = records.read(d, records.Build)
    assert rec.ccache is not None
    rec.ccache.hit_rate = 0.99
    records.write(d, rec)
    c = claims(report.collect(load_board("qemu-arm"), logs))
    bt = next(x for x in c if x.startswith("build time"))
    assert "not comparable: ccache hits 0 % vs 99 %" in bt


def test_tables_links_and_files(logs):
    board = load_board("qemu-arm")
    said = []
    index = report.write(board, logs, say=said.append).index
    assert not any("left out" in s for s in said), said
    html = index.read_text()
    md = (index.parent / "report.md").read_text()
    # seed 002's footprint row, both renderings; the value links to its Memory: line (the record says which)
    assert "| Kernel Code + Data | 1144 kB | 1528 kB | + 34 % = +384 kB |" in md
    assert (
        'href="../6.12/footprint-runs/20260101T000000Z/console.log#L44" title="footprint run 20260101T000000Z, '
        "console.log line 44: Memory: 505660K/524288K available" in html
    )
    assert 'title="footprint.json: malloc_kb (mem_eat: 8519680 bytes when malloc() failed)">8320 kB' in html
    # build table: value linked to its record field, delta
    assert 'href="../5.10/build.json" title="build.json: time.real">160.0 s</a>' in html
    assert "| Compressed kernel | 1555 kB | 1757 kB | + 13 % |" in md
    # boot: the median links to the median run's console line; significance marks
    assert (
        'href="../6.12/boot/r6.12-4/console.log#L94" title="run r6.12-4, console.log line 94: buildroot login:"' in html
    )
    row = next(line for line in md.splitlines() if line.startswith('| "login:" prompt'))
    assert row.endswith("+ 13 % * |")
    row = next(line for line in md.splitlines() if line.startswith('| "Freeing'))
    assert row.endswith("(n.s.) |")
    # lmbench table with direction, charts, reproduce commands
    assert "| ctx 2p/0K | us | lower | 10.00 | 19.60 | + 96 % |" in md
    # an lmbench value links to the line of lmbench.txt where its block begins, as lmbench.json says
    assert 'href="../6.12/footprint-runs/20260101T000000Z/lmbench.txt#L12"' in html
    assert html.count('data-chart="') == 3
    for name in ("sizes", "boot", "bw_mem"):
        assert (index.parent / "charts" / f"{name}.svg").read_text().startswith("<svg")
    assert "make boot-timing BOARD=qemu-arm RUNS=5 BOOT_PATH=u-boot" in html
    assert not re.search(r'(src|href)="(https?:)?//', html), "the page must not need the network"


def test_lmbench_not_measured_is_not_zero(logs):
    board = load_board("qemu-arm")
    index = report.write(board, logs, say=lambda m: None).index
    assert (index.parent / "charts" / "bw_mem.svg").exists() and "ctx 2p/0K" in index.read_text()
    for k in ("5.10", "6.12"):
        records.write(logs / "qemu-arm" / k / "lmbench.json", lm_rec(k, 0, 0, measured=False))
    index = report.write(board, logs, say=lambda m: None).index
    md = (index.parent / "report.md").read_text()
    assert "5.10: not measured (lmbench: Debian has no lmbench binaries for powerpc)" in md
    assert "ctx 2p/0K" not in md and "ctx 2p/0K" not in index.read_text()
    assert not (index.parent / "charts" / "bw_mem.svg").exists(), "no chart left from the earlier report"
    m = report.collect(board, logs)
    assert m["lmbench_groups"]["groups"] == [] and report.make_charts(m)["bw_mem"] is None


def test_the_report_says_which_lmbench_ran(logs):
    """Debian's package or bringup's build (version, source sha256, toolchain): the
    lmbench section says so, once per distinct lmbench."""
    board = load_board("qemu-arm")
    md = (report.write(board, logs, say=lambda m: None).index.parent / "report.md").read_text()
    assert "lmbench that ran: debian bookworm lmbench:armhf 3.0-a9+debian.1-5." in md
    built = "bringup's build of lmbench 3.0-a9 from lmbench-3.0-a9.tar.gz (sha256:02cc0018aead5286), static"
    for k in ("5.10", "6.12"):
        rec = lm_rec(k, 10, 100).model_dump(mode="json", by_alias=True)
        rec["source"] = {"lmbench": built, "origin": "bringup-build", "version": "3.0-a9", "source_sha256": "0" * 64}
        (logs / "qemu-arm" / k / "lmbench.json").write_text(json.dumps(rec))
    index = report.write(board, logs, say=lambda m: None).index
    md = (index.parent / "report.md").read_text()
    assert md.count(f"lmbench that ran: {built}.") == 1 and "lmbench:armhf" not in md
    assert f"lmbench that ran: {built.replace(chr(39), '&#39;')}." in index.read_text()


def test_no_records_is_a_clear_error(tmp_path):
    from bringup.errors import BringupError

    with pytest.raises(BringupError, match=r"no records under .*qemu-arm \(run: make all BOARD=qemu-arm\)"):
        report.write(load_board("qemu-arm"), tmp_path, say=lambda m: None)


def test_tested_finding_rules():
    f = findings.tested_finding("x", [1, 2, 3, 4, 5], [1.5, 2.5, 3.5, 4.5, 5.5], "s", "lower")
    findings.resolve([f])
    assert f["significant"] is False and f["claim"].startswith("x: no significant difference (n=5;")
    assert "smallest difference this run could claim: ±" in f["claim"]  # what the run could have seen
    f = findings.tested_finding("bw", [10, 11, 12, 13, 14], [20, 21, 22, 23, 24], "MB/s", "higher", "lower", "higher")
    findings.resolve([f])
    assert f["significant"] is True and f["claim"].startswith("bw: 83 % higher")
    # the same clear difference among 56 tests: 5 unpaired runs still pass the correction (Welch's t on the
    # logs; Mann-Whitney's smallest p, 2/252, times 56 could not), and the 55 identical metrics do not
    g = findings.tested_finding("bw", [10, 11, 12, 13, 14], [20, 21, 22, 23, 24], "MB/s", "higher", "lower", "higher")
    others = [findings.tested_finding(f"m{i}", [1, 2, 3, 4, 5], [1, 2, 3, 4, 5], "us", "lower") for i in range(55)]
    findings.resolve([g, *others])
    assert g["significant"] is True and "Welch t-test (logs), n=5, q=" in g["claim"]
    assert not any(o["significant"] for o in others)
    # paired by round, five rounds of a consistent difference pass (the signed-rank test's smallest p is 0.0625)
    h = findings.tested_finding(
        "p", [1, 2, 3, 4, 5], [2, 3, 4, 5, 6.5], "s", "lower", a_rounds=[1, 2, 3, 4, 5], b_rounds=[1, 2, 3, 4, 5]
    )
    findings.resolve([h])
    assert h["paired"] and h["significant"] is True and "paired t-test (log ratios), n=5 rounds" in h["claim"]
    # five rounds whose differences change sign are no difference
    n = findings.tested_finding(
        "p",
        [1, 2, 3, 4, 5],
        [1.1, 1.9, 3.2, 3.8, 5.1],
        "s",
        "lower",
        a_rounds=[1, 2, 3, 4, 5],
        b_rounds=[1, 2, 3, 4, 5],
    )
    findings.resolve([n])
    assert n["significant"] is False
    f = findings.size_finding("img", 1000, 1005, "kB")
    assert f["claim"] == "img: about the same (+0.5 %, 1000 → 1005 kB)"


def test_console_error_detector_works(tmp_path):
    """The browser check below would see a console error: a page that makes one."""
    from browser import open_page

    bad = tmp_path / "bad.html"
    bad.write_text("<html><body><script>console.error('boom'); nosuchfn();</script></body></html>")
    res = open_page(bad, tmp_path, size=(200, 200))
    assert any("boom" in line for line in res["console"])
    assert any("nosuchfn" in line for line in res["console"])


def test_report_renders_in_a_real_browser(logs, tmp_path):
    from PIL import Image

    from browser import open_page

    index = report.write(load_board("qemu-arm"), logs, say=lambda m: None).index
    res = open_page(index, tmp_path)
    assert res["console"] == [], res["console"]
    assert 'data-charts-rendered="3/3"' in res["dom"], re.findall(r'data-charts-rendered="[^"]*"', res["dom"])
    for chart in ("chart-sizes", "chart-boot", "chart-bwmem"):
        m = re.search(rf'data-chart="{chart}"[^>]*data-rendered="(\d+)x(\d+)"', res["dom"])
        assert m and int(m.group(1)) > 200 and int(m.group(2)) > 100, chart
    im = Image.open(res["screenshot"]).convert("L")
    assert im.size == (1100, 6000)
    dark = sum(im.histogram()[:200])
    assert dark > 0.02 * im.size[0] * im.size[1]  # text, tables and charts drew something


def test_lmbench_with_repeated_runs_is_tested(logs):
    def rec(k, ctx_vals, pipe_vals):
        def bench(group, name, vals):
            return {"group": group, "rc": 0, "metrics": [rf.metric(name, sorted(vals)[2], "us", vals)], "raw_lines": []}

        return rf.lmbench(
            k,
            runs=5,
            benchmarks={
                "lat_ctx_0k": bench("Context switching", "ctx 2p/0K", ctx_vals),
                "lat_pipe": bench("Local communication latencies", "Pipe latency", pipe_vals),
            },
        )

    records.write(
        logs / "qemu-arm" / "5.10" / "lmbench.json", rec("5.10", [10, 11, 12, 10.5, 11.5], [80, 90, 85, 95, 88])
    )
    records.write(
        logs / "qemu-arm" / "6.12" / "lmbench.json", rec("6.12", [20, 21, 22, 20.5, 21.5], [82, 89, 86, 93, 87])
    )
    c = claims(report.collect(load_board("qemu-arm"), logs))
    c = [x for x in c if x.startswith(("Context", "Local"))]
    ctx = next(x for x in c if x.startswith("Context switching"))
    assert ctx.startswith("Context switching: up to 91 % slower (ctx 2p/0K: 11 → 21 us; shift 10 us (95 % CI ")
    assert "Welch t-test (logs), n=5, q=" in ctx and "over 4 tests" in ctx  # BH over the kernel's family
    pipe = next(x for x in c if x.startswith("Local communication latencies"))
    assert pipe.startswith(
        "Local communication latencies: no significant difference (closest: Pipe latency, n=5; "
        "medians 88 → 87 us, p=0.9"
    )
    assert "q=0.97; smallest difference this run could claim: ±12 %)" in pipe


def test_bad_records_are_left_out_and_named(logs):
    """A record that does not read is left out, in one line naming the file and the field;
    the report goes on with the rest."""
    d = logs / "qemu-arm"
    text = (d / "6.12" / "build.json").read_text()
    (d / "6.12" / "build.json").write_text(text[: len(text) // 2])  # truncated
    fp = records.read(d / "5.10" / "footprint.json", records.Footprint).model_dump(mode="json")
    fp["malloc_kb"] = "9024"
    (d / "5.10" / "footprint.json").write_text(json.dumps(fp))
    (d / "6.12" / "lmbench.json").write_text("[]")
    run = d / "6.12" / "boot" / "r6.12-4" / "boot.json"
    run.write_text(run.read_text().replace('"line": 94', '"line": NaN'))
    said = []
    rep = report.write(load_board("qemu-arm"), logs, say=said.append)
    left = [s for s in said if s.startswith("report: left out ")]
    assert left == [
        f"report: left out {d / '6.12' / 'build.json'}: not valid JSON (truncated?): "
        + left[0].split("(truncated?): ")[1],
        f"report: left out {d / '5.10' / 'footprint.json'}: field 'malloc_kb': '9024': Input should be a valid integer",
        f"report: left out {d / '6.12' / 'lmbench.json'}: the JSON is an array, not a record (an object)",
        f"report: left out {run}: field 'milestones.login.line': nan: not a finite number",
    ]
    assert rep.left_out == [s.removeprefix("report: left out ") for s in left]
    md = rep.markdown.read_text()
    assert "Left out (these records could not be used" in md and "field 'malloc_kb': '9024'" in md
    # the rest is there: 5.10's build, both boot rows, 6.12's footprint, 5.10's lmbench
    assert "| real | 160.0 s |" in md and '| "login:" prompt |' in md
    assert rep.model["footprint_rows"][0]["cells"][0]["kernel"] == "6.12"
    assert rep.model["lmbench_groups"]["kernels"] == ["5.10"] and rep.model["lmbench_groups"]["missing"] == ["6.12"]
    # the median run whose record is bad links to the summary instead of a console line
    assert 'href="../boot-timing.json" title="boot-timing.json: kernels.6.12.milestones.login"' in rep.index.read_text()


def test_a_record_of_another_kernel_is_left_out(logs):
    d = logs / "qemu-arm"
    records.write(d / "6.12" / "build.json", records.read(d / "5.10" / "build.json", records.Build))
    m = report.collect(load_board("qemu-arm"), logs)
    assert m["left_out"] == [
        f"{d / '6.12' / 'build.json'}: field 'kernel': '5.10': the record of another kernel, not '6.12'"
    ]
    assert list(m["build"]) == ["5.10"]


def test_the_report_reads_no_logs(logs, monkeypatch):
    """Links to console lines and lmbench blocks come from the records: no log is opened."""
    import builtins

    real_open = builtins.open

    def guarded(file, *a, **kw):
        name = str(file)
        assert not name.endswith((".log", ".txt", ".raw")), f"the report opened {name}"
        return real_open(file, *a, **kw)

    monkeypatch.setattr(builtins, "open", guarded)
    rep = report.write(load_board("qemu-arm"), logs, say=lambda m: None)
    assert "console.log#L44" in rep.index.read_text()


def test_summary_text_is_the_models_findings(logs):
    rep = report.write(load_board("qemu-arm"), logs, say=lambda m: None)
    text = rep.summary()
    assert text.splitlines()[0] == "Management summary: 6.12 against 5.10"
    assert "- kernel code + data: +34 %, larger (1144 → 1528 kB)" in text.splitlines()
    assert "Footprint:" in text.splitlines()


def test_a_busy_host_is_said_in_the_summary_and_the_page_renders(logs):
    """Rounds redone because the host was busy: the summary warns, in the page too."""
    f = logs / "qemu-arm" / "6.12" / "footprint.json"
    rec = records.read(f, records.Footprint)
    records.write(f, rec.model_copy(update={"disturbed": 2}))
    c = claims(report.collect(load_board("qemu-arm"), logs))
    warn = [x for x in c if x.startswith("the host was not quiet")]
    assert warn and "6.12: 2 footprint round(s) done again because the host was busy" in warn[0]
    index = report.write(load_board("qemu-arm"), logs, say=lambda m: None).index
    assert "the host was not quiet" in index.read_text() and "host load" in index.read_text()


def test_an_era_fix_that_changes_the_running_kernel_is_said(logs):
    """Build-only fixes are listed with the kernel; a fix that changes the running kernel
    is also a note in the summary, in both renderings."""
    f = logs / "qemu-arm" / "5.10" / "build.json"
    fix = {"kind": "make_vars", "sha256": "a" * 64, "make_vars": {"X": "1"}, "avoids": "an error", "unchanged": "u"}
    rec = records.read(f, records.Build)
    records.write(
        f,
        rec.model_copy(
            update={
                "fixes": [
                    records.build.Fix(name="build-only", **fix),
                    records.build.Fix(name="runtime-one", changes="answers a call it refused", **fix),
                ]
            }
        ),
    )
    c = claims(report.collect(load_board("qemu-arm"), logs))
    notes = [x for x in c if "era fix" in x]
    assert notes == [
        "5.10 carries an era fix that changes the running kernel, runtime-one: answers a call it refused (docs/eras.md)"
    ]
    rep = report.write(load_board("qemu-arm"), logs, say=lambda m: None)
    md = (rep.index.parent / "report.md").read_text()
    assert "era fixes (docs/eras.md): build-only, runtime-one (changes the running kernel)" in md
    assert "runtime-one: answers a call it refused" in rep.index.read_text()


def test_a_kernel_built_outside_what_its_authors_supported_is_marked_beside_every_number(logs):
    """2.4 with gcc 12 (the gcc-guard-override fix): a † beside the kernel in every table,
    the reason under the title, a note in the Kernels section of its summary."""
    f = logs / "qemu-arm" / "6.12" / "build.json"
    fix = {
        "kind": "patch",
        "sha256": "a" * 64,
        "patch": "configs/era/fixes/x.patch",
        "avoids": "#error",
        "unchanged": "u",
    }
    rec = records.read(f, records.Build)
    why = "its authors supported gcc 2.95.3 to 4.1 only"
    records.write(f, rec.model_copy(update={"fixes": [records.build.Fix(name="guard", overrides=why, **fix)]}))
    c = claims(report.collect(load_board("qemu-arm"), logs))
    assert [x for x in c if "outside" in x] == [
        f"6.12 is built outside what its authors supported (guard; marked † in every table): {why} (docs/eras.md)"
    ]
    rep = report.write(load_board("qemu-arm"), logs, say=lambda m: None)
    md = (rep.index.parent / "report.md").read_text()
    assert f"† 6.12 is built outside what its authors supported: {why} (docs/eras.md)" in md
    header_rows = [line for line in md.splitlines() if line.startswith("|") and "6.12" in line and "5.10" in line]
    assert header_rows and all("6.12 †" in line for line in header_rows if "Delta" in line)
    assert "5.10 †" not in md and "guard (overrides what the tree's authors supported)" in md
    html = rep.index.read_text()
    assert 'class="unsupported"' in html and f"† 6.12 is built outside what its authors supported: {why}" in html
