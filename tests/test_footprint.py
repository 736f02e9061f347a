"""Footprint pieces without a guest: the benchmark list, .deb unpacking, tables."""

import subprocess
import types
from dataclasses import replace

import pytest

import recordfactory as rf
from bringup.measure import footprint
from bringup.measure.footprintrecords import GuestOutputs, KernelFootprint
from bringup.parse import lmbench as lp
from bringup.util import cpio, paths


def test_quick_and_full_lists():
    bset = footprint.load_set()
    quick = footprint.bench_files(bset, "quick")
    full = footprint.bench_files(bset, "full")
    # the instruction clock's longer interval comes after the quick knobs (the later export wins)
    env_ic = next(e for e in footprint.bench_files(bset, "quick", True) if e.path.endswith("bench.env")).data.decode()
    assert env_ic.index(bset.quick_env) < env_ic.index(f"export {bset.instruction_clock_env}")
    assert bset.instruction_clock_env.startswith("ENOUGH=")
    assert "ENOUGH=50000" not in next(e for e in quick if e.path.endswith("bench.env")).data.decode()
    ql = dict((e.path, e.data) for e in quick)["etc/bringup/bench.list"].decode().splitlines()
    fl = dict((e.path, e.data) for e in full)["etc/bringup/bench.list"].decode().splitlines()
    names = [line.split("\t")[0] for line in ql]
    assert "lat_rpc" not in names and "lat_ops" not in names and "lat_ctx_0k" in names
    assert len(fl) == len(bset.bench) > len(ql)
    assert "lat_pipe\t./lat_pipe -N 1 -W 0" in ql and "lat_pipe\t./lat_pipe " in fl
    assert all("{q}" not in line for line in ql + fl)
    env = dict((e.path, e.data) for e in quick)["etc/bringup/bench.env"].decode()
    assert "export ENOUGH=5000 TIMING_O=0 LOOP_O=0" in env
    assert "ENOUGH" not in dict((e.path, e.data) for e in full)["etc/bringup/bench.env"].decode()


def test_deb_entries_skip_docs_and_keep_links(tmp_path):
    root = tmp_path / "pkg"
    (root / "DEBIAN").mkdir(parents=True)
    (root / "DEBIAN" / "control").write_text(
        "Package: t\nVersion: 1\nArchitecture: all\nMaintainer: x <x@y>\nDescription: t\n"
    )
    (root / "usr/lib/t").mkdir(parents=True)
    (root / "usr/lib/t/libt.so.1").write_bytes(b"\x7fELF")
    (root / "usr/lib/t/libt.so").symlink_to("libt.so.1")
    (root / "usr/share/doc/t").mkdir(parents=True)
    (root / "usr/share/doc/t/copyright").write_text("c")
    subprocess.run(
        ["dpkg-deb", "-Zgzip", "--build", str(root), str(tmp_path / "t.deb")], check=True, capture_output=True
    )
    entries = {e.path: e for e in footprint.deb_entries(tmp_path / "t.deb")}
    assert entries["usr/lib/t/libt.so.1"].data == b"\x7fELF"
    assert entries["usr/lib/t/libt.so"].data == b"libt.so.1"
    assert not any(p.startswith("usr/share/doc") for p in entries)
    cpio.archive(list(entries.values()))  # packs


def _results():
    """Each kernel's footprint.json and lmbench.json, as footprint() returns them."""

    def footprint_record(k, code, total, malloc):
        return rf.footprint(k, memory_mb=512, kernel_code_data_kb=code, total_free_kb=total, malloc_kb=malloc)

    def lmbench_record(k, pipe, bw):
        benchmarks = {
            "lat_pipe": {
                "group": "Local communication latencies",
                "rc": 0,
                "metrics": [rf.metric("Pipe latency", pipe)],
                "raw_lines": [2],
            },
            "bw_pipe": {
                "group": "Local communication bandwidths",
                "rc": 0,
                "metrics": [rf.metric("Pipe bandwidth", bw, "MB/s")],
                "raw_lines": [5],
            },
        }
        return rf.lmbench(k, benchmarks=benchmarks)

    return {
        "2.4.25": KernelFootprint(footprint_record("2.4.25", 1144, 15032, 9024), lmbench_record("2.4.25", 100.0, 50.0)),
        "2.6.11.7": KernelFootprint(
            footprint_record("2.6.11.7", 1528, 14676, 8320), lmbench_record("2.6.11.7", 180.0, 25.0)
        ),
    }


def test_footprint_table_has_seed_002_numbers():
    t = footprint.render_footprint("tqm860l", _results())
    assert "| Kernel Code + Data | 1144 kB | 1528 kB | + 34 % = + 384 kB |" in t
    assert '| total "free" | 15032 kB | 14676 kB | - 2 % = - 356 kB |' in t
    assert "| Available for malloc() | 9024 kB | 8320 kB | - 8 % = - 704 kB |" in t


def test_lmbench_table_grouped_with_direction():
    t = footprint.render_lmbench(_results())
    assert "Local communication latencies:" in t and "Local communication bandwidths:" in t
    assert "| Pipe latency | us | lower | 100 | 180 | + 80 % |" in t
    assert "| Pipe bandwidth | MB/s | higher | 50 | 25 | - 50 % |" in t


def test_unmeasured_lmbench_is_not_zero():
    r = _results()
    r["2.6.11.7"] = KernelFootprint(r["2.6.11.7"].footprint, rf.not_measured("2.6.11.7", "no binaries for powerpc"))
    t = footprint.render_lmbench(r)
    assert "lmbench 2.6.11.7: not measured (no binaries for powerpc)" in t
    assert "| Pipe latency | us | lower | 100 |" in t and " 0 |" not in t


def test_merge_runs_keeps_every_value_and_the_median():
    def run(v1, v2):
        return {
            "lat_pipe": {"rc": 0, "metrics": [{"name": "Pipe latency", "value": v1, "unit": "us", "better": "lower"}]},
            "lat_ctx_0k": {"rc": 0, "metrics": [{"name": "ctx 2p/0K", "value": v2, "unit": "us", "better": "lower"}]},
        }

    m = footprint.merge_runs([run(10, 1), run(30, 2), run(20, 9)])
    assert m["lat_pipe"]["metrics"][0]["values"] == [10, 30, 20]
    assert m["lat_pipe"]["metrics"][0]["value"] == 20
    assert m["lat_ctx_0k"]["metrics"][0]["value"] == 2
    assert footprint.merge_runs([run(1, 2)]) == run(1, 2)


MEMORY_LINE = (
    "[    0.000000] Memory: 505660K/524288K available (2048K kernel code, 394K rwdata, 540K rodata, 1024K init)"
)


def block(name, text):
    return f"@@@ BEGIN {name} @@@\r\n{text}\r\n@@@ END {name} rc=0 @@@"


def lmbench_pass(pipe, ctx):
    return "\n".join(
        [block("lat_pipe", f"Pipe latency: {pipe} microseconds"), block("lat_ctx_0k", f'"size=0k ovr=0.5\n2 {ctx}')]
    )


def guest_outputs(pipe=2.0, ctx=10.0, malloc_kb=2048):
    """What one footprint boot printed, as footprint.measure() returns it."""
    return GuestOutputs(
        free="       total  used  free\nMem:  505660  9876  480000\n",
        meminfo="MemTotal:  505660 kB\n",
        mem_eat=f"mem_eat: total = 1048576 = 1024kB\nGot total = {malloc_kb * 1024} = {malloc_kb}kB\n",
        mem_eat_rc=0,
        lmbench=[lmbench_pass(pipe, ctx)],
        lmbench_parsed=[lp.parse_runner(lmbench_pass(pipe, ctx))],
        lmbench_retried=[],
        console_text="\n".join(
            ["U-Boot", "Starting kernel ...", "[    0.000000] Linux version", MEMORY_LINE, "login:"]
        ),
    )


@pytest.fixture
def canned_guest(tmp_path, monkeypatch):
    """footprint() on qemu-arm with the guest replaced: no ramdisk is built and each boot
    answers guest.answer(kernel, n), n counting that kernel's boots from 1; guest.boots
    lists (kernel, n) in boot order.  guest.board is qemu-arm on the host clock (set it to
    the shipped board for its instruction clock)."""
    from bringup import records
    from bringup.model.board import load_board
    from bringup.model.clocks import with_clock

    board = with_clock(load_board("qemu-arm"), "host")  # the host clock's rounds and tests
    logs, cache = tmp_path / "logs", tmp_path / "cache"
    for k in board.kernels:
        records.write(logs / "qemu-arm" / k.id / "build.json", rf.build(k.id))
    mem_eat = tmp_path / "mem_eat"
    mem_eat.write_bytes(b"\x7fELF")
    monkeypatch.setattr(footprint, "mem_eat_binary", lambda b, c: mem_eat)
    info = {"lmbench": "debian bookworm lmbench:armhf 3.0-a9", "libraries": ["libc6:armhf"]}
    monkeypatch.setattr(footprint, "lmbench_entries", lambda arch, cache, say: ([], info))
    rootfs_record = rf.rootfs("footprint", mem_eat=True, **info, mode="quick")
    built: list[dict] = []

    def build(*a, **kw):
        built.append(kw)
        return rootfs_record

    monkeypatch.setattr(footprint.rootfs, "build", build)
    sessions: list[dict] = []

    class FakeSession:
        """The boot session, as far as footprint uses it: a context that boots."""

        def __init__(self, board, kernel_id, build, recdir, initrd, run_dir, *a, **kw):
            run_dir.mkdir(parents=True, exist_ok=True)
            self.kernel_id = kernel_id
            sessions.append(kw)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(footprint, "BootSession", FakeSession)
    guest = types.SimpleNamespace(
        board=board,
        logs=logs,
        cache=cache,
        rootfs_record=rootfs_record,
        boots=[],
        answer=None,
        sessions=sessions,
        built=built,
        typed=[],
    )

    def measure(session, *a, typed=True, **kw):
        n = 1 + sum(1 for k, _ in guest.boots if k == session.kernel_id)
        guest.boots.append((session.kernel_id, n))
        guest.typed.append(typed)
        return guest.answer(session.kernel_id, n)

    monkeypatch.setattr(footprint, "measure", measure)
    monkeypatch.setattr(footprint, "measure_autorun", lambda session, *a, **kw: measure(session, typed=False))
    return guest


def test_records_of_a_run_name_their_lines(canned_guest):
    """footprint() with the guest replaced by canned outputs: the records it writes read
    through their models, footprint.json names its Memory: line in console.log and
    lmbench.json the lines of lmbench.txt where each benchmark's blocks begin."""
    from bringup import records

    g = canned_guest
    board, logs, cache, rootfs_record, memory = g.board, g.logs, g.cache, g.rootfs_record, MEMORY_LINE
    passes = [
        guest_outputs(2.0, 10.0),
        guest_outputs(3.0, 12.0),
        replace(guest_outputs(), lmbench=[""], lmbench_parsed=[{}]),
    ]
    g.answer = lambda kernel_id, n: passes[min(n, 3) - 1]  # one lmbench pass per boot, one boot per kernel per round
    footprint.footprint(board, logs, cache, lmbench_runs=2, say=lambda m: None, guard=False)

    recdir = logs / "qemu-arm" / "6.12"
    footprint_record = records.read(recdir / "footprint.json", records.Footprint)
    assert (
        footprint_record.run is not None
        and footprint_record.run.startswith("footprint-runs/")
        and footprint_record.memory_line is not None
    )
    assert footprint_record.memory_line.line == 4 and footprint_record.memory_line.text == memory.strip()
    assert (
        footprint_record.kernel_code_data_kb == 2048 + 394 + 540
        and footprint_record.malloc_kb == 2048
        and footprint_record.mem_eat.completed
    )
    assert footprint_record.rootfs == rootfs_record.ref()
    lmbench_record = records.read(recdir / "lmbench.json", records.Lmbench)
    assert (
        lmbench_record.run == footprint_record.run
        and lmbench_record.runs == 2
        and lmbench_record.measured
        and lmbench_record.reason is None
    )
    pipe = lmbench_record.benchmarks["lat_pipe"]
    assert pipe.metrics[0].values == [2.0, 3.0] and pipe.metrics[0].value == 2.5
    assert (
        pipe.metrics[0].rounds == [1, 2]
        and footprint_record.rounds == [1, 2]
        and footprint_record.malloc_kb_values == [2048, 2048]
    )
    assert (
        len(footprint_record.runs) == 2
        and footprint_record.runs[0] == footprint_record.run
        and footprint_record.disturbed == 0
        and footprint_record.stopped == "2 rounds, as asked"
    )
    raw = (recdir / lmbench_record.run / "lmbench.txt").read_text().split("\n")
    assert len(pipe.raw_lines) == 2 and all(raw[n - 1].startswith("@@@ BEGIN lat_pipe @@@") for n in pipe.raw_lines)
    ctx = lmbench_record.benchmarks["lat_ctx_0k"].raw_lines
    assert len(ctx) == 2 and all(raw[n - 1].startswith("@@@ BEGIN lat_ctx_0k @@@") for n in ctx)
    # lmbench not requested: the record says so, with no benchmarks and no passes
    footprint.footprint(board, logs, cache, mode="none", say=lambda m: None, guard=False)
    lmbench_record = records.read(recdir / "lmbench.json", records.Lmbench)
    assert (
        not lmbench_record.measured
        and lmbench_record.reason == "not requested"
        and lmbench_record.runs == 0
        and lmbench_record.benchmarks == {}
    )


def test_lmbench_that_cannot_run_on_the_kernel_is_not_measured_and_says_why():
    """Debian's dynamic lmbench under a 2.6.32 kernel (glibc 2.36's loader fails): no
    numbers at all is 'not measured', with the loader's own words, not a table of dashes."""
    out = (
        "@@@ BEGIN lat_syscall_null @@@\r\n./lat_syscall: error while loading shared libraries: libc.so.6: "
        "cannot stat shared object: Invalid argument\r\n@@@ END lat_syscall_null rc=127 @@@\n"
        "@@@ BEGIN lat_pipe @@@\r\n./lat_pipe: error while loading shared libraries: libc.so.6: "
        "cannot stat shared object: Invalid argument\r\n@@@ END lat_pipe rc=127 @@@\n"
    )
    why = footprint.cannot_run([out])
    assert why is not None and "libc.so.6: cannot stat shared object: Invalid argument" in why
    good = "@@@ BEGIN lat_pipe @@@\r\nPipe latency: 10.5 microseconds\r\n@@@ END lat_pipe rc=0 @@@\n"
    assert footprint.cannot_run([good]) is None
    assert footprint.cannot_run([out, good]) is None  # a number in any round: it ran


def test_until_ci_adds_footprint_rounds_until_every_headline_difference_is_narrow(canned_guest):
    """--until-ci on the footprint, with the values of tests/test_until_ci.py: lat_pipe is
    10 us on 5.10 and 10, 10.4, 9.6, then 10 for ever on 6.12; mem_eat and lat_ctx are the
    same on both.  The interval of the lat_pipe difference is within ±2 % after 8 rounds
    (±2.14 % after 7), the other two from the start."""
    from bringup import records

    g = canned_guest
    pipe = {"5.10": [10.0] * 12, "6.12": [10.0, 10.4, 9.6] + [10.0] * 9}
    g.answer = lambda kernel_id, n: guest_outputs(pipe[kernel_id][n - 1], 10.0)
    footprint.footprint(
        g.board, g.logs, g.cache, lmbench_runs=3, until_ci=2.0, max_rounds=12, say=lambda m: None, guard=False
    )
    for kernel_id in ("5.10", "6.12"):
        footprint_record = records.read(g.logs / "qemu-arm" / kernel_id / "footprint.json", records.Footprint)
        assert (
            footprint_record.stopped == "95 % confidence intervals of 3 headline differences within ±2 % after 8 rounds"
        )
        assert footprint_record.rounds == list(range(1, 9)) and len(footprint_record.malloc_kb_values) == 8
        lmbench_record = records.read(g.logs / "qemu-arm" / kernel_id / "lmbench.json", records.Lmbench)
        assert (
            lmbench_record.runs == 8 and lmbench_record.benchmarks["lat_pipe"].metrics[0].values == pipe[kernel_id][:8]
        )
    assert g.boots[:4] == [("5.10", 1), ("6.12", 1), ("6.12", 2), ("5.10", 2)]  # A B, B A
    assert len(g.boots) == 16


def test_until_ci_stops_the_footprint_at_the_maximum_and_says_why(canned_guest):
    from bringup import records

    g = canned_guest
    malloc = {"5.10": [2048] * 6, "6.12": [2048, 1800, 2300, 1850, 2250, 1900]}
    g.answer = lambda kernel_id, n: guest_outputs(malloc_kb=malloc[kernel_id][n - 1])
    footprint.footprint(
        g.board, g.logs, g.cache, lmbench_runs=3, until_ci=2.0, max_rounds=4, say=lambda m: None, guard=False
    )
    footprint_record = records.read(g.logs / "qemu-arm" / "6.12" / "footprint.json", records.Footprint)
    assert footprint_record.stopped is not None
    assert footprint_record.stopped.startswith(
        "--max-rounds 4 reached before the intervals were within ±2 %: memory available to malloc() (6.12 against 5.10)"
    )
    assert footprint_record.rounds == [1, 2, 3, 4] and footprint_record.malloc_kb_values == malloc["6.12"][:4]


def test_until_ci_that_cannot_work_is_refused_before_any_boot(canned_guest):
    from bringup.errors import BringupError

    g = canned_guest
    g.answer = lambda kernel_id, n: guest_outputs()
    with pytest.raises(BringupError, match="--max-rounds 4 is below the 5 rounds"):
        footprint.footprint(
            g.board, g.logs, g.cache, lmbench_runs=5, until_ci=5.0, max_rounds=4, say=lambda m: None, guard=False
        )
    assert g.boots == []


def test_drift_in_one_kernel_s_early_footprint_rounds_is_not_claimed(canned_guest):
    """The host was busy during 6.12's boots of the first 3 rounds (lat_pipe +10 %) and the
    guard was off: --until-ci goes on past the drifted rounds (their interval excludes 0
    but 3 rounds cannot test it), and the summary, reading the records, claims nothing."""
    from bringup import records
    from bringup.report import findings, summary

    g = canned_guest
    base = [100.2, 99.8, 100.1, 99.9, 100.0, 100.3, 99.7, 100.1, 99.9, 100.2, 99.8, 100.0]
    noise = [0.1, -0.2, 0.1, 0.2, -0.1, 0.1, -0.2, 0.1, -0.1, 0.2, -0.1, 0.1]
    drifted = [x + e + (10.0 if i < 3 else 0.0) for i, (x, e) in enumerate(zip(base, noise, strict=True))]
    pipe = {"5.10": base, "6.12": drifted}
    g.answer = lambda kernel_id, n: guest_outputs(pipe[kernel_id][n - 1], 10.0)
    footprint.footprint(
        g.board, g.logs, g.cache, lmbench_runs=3, until_ci=5.0, max_rounds=12, say=lambda m: None, guard=False
    )
    d = g.logs / "qemu-arm"
    fa, fb = (records.read(d / k / "footprint.json", records.Footprint) for k in ("5.10", "6.12"))
    la, lb = (records.read(d / k / "lmbench.json", records.Lmbench) for k in ("5.10", "6.12"))
    assert fb.stopped is not None and fb.stopped.endswith("within ±5 % after 7 rounds") and lb.runs == 7
    family = [f for f in summary.footprint_findings(fa, fb, "6.12") if f["kind"] == "tested"]
    family += [f for f in summary.lmbench_metric_findings(la, lb, "6.12") if f["kind"] == "tested"]
    findings.resolve(family)
    pipe_f = next(f for f in family if f["key"] == "lmbench:Pipe latency")
    assert pipe_f["paired"] and pipe_f["delta_pct"] is not None
    assert len(family) == 3 and not any(f["significant"] for f in family)


def test_on_the_instruction_clock_one_round_is_a_measurement_decided_against_the_floor(canned_guest):
    """The shipped qemu-arm measures on the instruction clock: its footprint and lmbench
    records say so, and the report's findings of one round each are deterministic, a
    difference stated when it is at least 3 x the A/A floor and 1 %, else about the same."""
    from bringup import records
    from bringup.model.board import load_board
    from bringup.report import findings, summary

    g = canned_guest
    g.board = load_board("qemu-arm")
    pipe = {"5.10": 2.0, "6.12": 3.0}  # +50 %
    ctx = {"5.10": 10.0, "6.12": 10.05}  # +0.5 %: below 1 %
    g.answer = lambda kernel_id, n: guest_outputs(pipe[kernel_id], ctx[kernel_id])
    footprint.footprint(g.board, g.logs, g.cache, lmbench_runs=1, say=lambda m: None, guard=False)
    d = g.logs / "qemu-arm"
    fa, fb = (records.read(d / k / "footprint.json", records.Footprint) for k in ("5.10", "6.12"))
    la, lb = (records.read(d / k / "lmbench.json", records.Lmbench) for k in ("5.10", "6.12"))
    for rec in (fa, fb, la, lb):
        assert (rec.clock.kind, rec.clock.shift, rec.clock.ns_per_instruction) == ("instructions", 3, 8)
    assert lb.runs == 1 and len(g.boots) == 2
    # nothing typed: the ramdisk holds the steps and the kernel argument starts them
    assert g.typed == [False, False] and all(kw["options"].extra_args == footprint.AUTORUN for kw in g.sessions)
    steps = [e for e in g.built[-1]["extra"] if e.path == "etc/bringup/steps.list"]
    assert steps and g.built[-1]["extra_key"]["autorun"] is True
    sizes = [f for f in summary.footprint_findings(fa, fb, "6.12") if f["kind"] == "size"]  # any clock
    fs = summary.lmbench_metric_findings(la, lb, "6.12") + [
        f for f in summary.footprint_findings(fa, fb, "6.12") if f["kind"] != "size"
    ]
    assert sizes and {f["kind"] for f in fs} == {"deterministic"} and len(fs) == 3
    for f in fs:
        findings.decide(f, {}, 0.1)
    by = {f["key"]: f for f in fs}
    assert by["lmbench:Pipe latency"]["significant"] is True
    assert "+50 %, instruction clock; one boot each" in by["lmbench:Pipe latency"]["claim"]
    assert by["lmbench:ctx 2p/0K"]["significant"] is False
    assert by["lmbench:ctx 2p/0K"]["verdict"] == "about the same"
    assert by["footprint:malloc_kb"]["significant"] is False  # the same malloc() total


def test_footprint_rounds_count_boots_against_the_plan(canned_guest, monkeypatch):
    import functools
    import re

    g = canned_guest
    g.answer = lambda kernel_id, n: guest_outputs(2.0 + n, 10.0)
    from bringup.boot import rounds

    monkeypatch.setattr(rounds, "Progress", functools.partial(rounds.Progress, every=0, tty=False))  # the engine's
    lines: list[str] = []
    footprint.footprint(g.board, g.logs, g.cache, lmbench_runs=2, say=lines.append, guard=False)
    counts = re.findall(r"footprint rounds: (\d+) % \((\d+)/(\d+) boots\)", "\n".join(lines))
    assert [(int(p), int(d), int(t)) for p, d, t in counts] == [(25, 1, 4), (50, 2, 4), (75, 3, 4), (100, 4, 4)]
    assert len(g.boots) == 4


def test_footprint_runs_on_the_round_engine_with_two_local_workers(canned_guest, monkeypatch):
    """footprint(jobs=2): its rounds go through the round engine (rounds.run) with two local
    workers; every round is done once per kernel and the records keep the rounds in order.
    jobs with the guard is refused before anything is built or booted."""
    from bringup import records
    from bringup.boot import rounds
    from bringup.errors import BringupError

    seen: list[dict] = []
    real = rounds.run

    def spy(kernels, rule, boot, **kw):
        seen.append(kw)
        return real(kernels, rule, boot, **kw)

    monkeypatch.setattr(rounds, "run", spy)
    g = canned_guest
    g.answer = lambda kernel_id, n: guest_outputs(2.0, 10.0)
    footprint.footprint(g.board, g.logs, g.cache, lmbench_runs=4, say=lambda m: None, guard=False, jobs=2)
    assert len(seen) == 1 and seen[0]["jobs"] == 2 and seen[0]["label"] == "  footprint rounds"
    assert len(g.boots) == 8
    for kernel_id in ("5.10", "6.12"):
        footprint_record = records.read(g.logs / "qemu-arm" / kernel_id / "footprint.json", records.Footprint)
        assert footprint_record.rounds == [1, 2, 3, 4] and len(set(footprint_record.runs)) == 4
        assert [r.rsplit("-", 1)[1] for r in footprint_record.runs] == ["r01", "r02", "r03", "r04"]
    g.boots.clear()
    with pytest.raises(BringupError, match=r"^--jobs 2: the host-load guard judges one run at a time"):
        footprint.footprint(g.board, g.logs, g.cache, say=lambda m: None, guard=True, jobs=2)
    assert g.boots == []


def test_autorun_steps_are_read_from_the_console_without_typing(tmp_path):
    """On the instruction clock the ramdisk runs the footprint's steps by itself
    (rootfs-overlay/usr/bin/bringup-steps); measure_autorun() reads their outputs between
    the markers, as measure() returns them, and writes nothing to the console."""
    import pexpect.popen_spawn

    from bringup.model.benchset import load_set

    bset = load_set()
    quick = [b.name for b in bset.bench if b.quick]
    runner = "\r\n".join(block(n, "Pipe latency: 2.5 microseconds" if n == "lat_pipe" else "") for n in quick)
    console = (
        "[    0.960000] Freeing unused kernel memory: 1024K\r\n"
        "@@@ STEP BEGIN free @@@\r\n       total  used  free\r\nMem:  505660  9876  480000\r\n"
        "@@@ STEP END free rc=0 @@@\r\nbringup login: \r\n"  # the prompt may come in between
        "@@@ STEP BEGIN meminfo @@@\r\nMemTotal:  505660 kB\r\n@@@ STEP END meminfo rc=0 @@@\r\n"
        "@@@ STEP BEGIN mem_eat @@@\r\nGot total = 2097152 = 2048kB\r\n@@@ STEP END mem_eat rc=1 @@@\r\n"
        f"@@@ STEP BEGIN lmbench @@@\r\n{runner}\r\n@@@ STEP END lmbench rc=0 @@@\r\n@@@ STEPS DONE @@@\r\n"
    )
    (tmp_path / "console").write_text(console)
    exp = pexpect.popen_spawn.PopenSpawn(["cat", str(tmp_path / "console")], encoding="utf-8", timeout=5)
    sent: list[str] = []
    exp.sendline = sent.append  # type: ignore[method-assign]
    session = types.SimpleNamespace(console=types.SimpleNamespace(expect=lambda timeout: exp, lines=[]), cancel=None)
    out = footprint.measure_autorun(session, bset, "quick", None, 1.0, say=lambda m: None)
    assert sent == []  # nothing typed
    assert "Mem:  505660  9876  480000" in out.free and "login" not in out.free
    assert out.meminfo.strip() == "MemTotal:  505660 kB"
    assert out.mem_eat_rc == 1 and "2048kB" in out.mem_eat
    assert out.lmbench_retried == [] and out.lmbench is not None and len(out.lmbench) == 1
    assert out.lmbench_parsed is not None
    pipe = out.lmbench_parsed[0]["lat_pipe"]["metrics"]
    assert [(m["name"], m["value"]) for m in pipe] == [("Pipe latency", 2.5)]
    entries = footprint.autorun_steps(lmbench=False)
    listed = next(e for e in entries if e.path == "etc/bringup/steps.list").data.decode()
    assert listed == "free\tfree\nmeminfo\tcat /proc/meminfo\nmem_eat\tmem_eat 1024\n"
    assert "lmbench\tbringup-bench" in next(e for e in footprint.autorun_steps(lmbench=True) if e.data).data.decode()


def test_a_step_that_never_ends_names_itself(tmp_path):
    import pexpect.popen_spawn

    (tmp_path / "console").write_text("@@@ STEP BEGIN free @@@\r\nMem: 1 2 3\r\n")
    exp = pexpect.popen_spawn.PopenSpawn(["sh", "-c", f"cat {tmp_path / 'console'}; sleep 5"], encoding="utf-8")
    session = types.SimpleNamespace(console=types.SimpleNamespace(expect=lambda timeout: exp, lines=[]), cancel=None)
    with pytest.raises(footprint.BootFailed, match=r"step 'free' did not finish within 0s"):
        footprint.measure_autorun(session, None, "none", None, 0.01, say=lambda m: None)


def test_the_runner_runs_every_benchmark_even_one_that_reads_stdin(tmp_path):
    """bringup-bench reads its list on stdin: a benchmark that reads stdin (here `cat`)
    must not eat the rest of the list (seen on qemu-bamboo: the pass ended after bw_unix)."""
    import subprocess

    script = (paths.ROOT / "rootfs-overlay" / "usr" / "bin" / "bringup-bench").read_text()
    (tmp_path / "bench.list").write_text("a\tcat; echo A\nb\techo B\nc\techo C\n")
    runner = tmp_path / "runner"
    runner.write_text(script.replace("/etc/bringup/bench.list", str(tmp_path / "bench.list")))
    p = subprocess.run(
        ["sh", str(runner)],
        capture_output=True,
        text=True,
        timeout=30,
        env={"LMBENCH_BIN": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert p.returncode == 0, p.stderr
    assert [ln for ln in p.stdout.splitlines() if ln.startswith("@@@ END")] == [
        "@@@ END a rc=0 @@@",
        "@@@ END b rc=0 @@@",
        "@@@ END c rc=0 @@@",
    ]


def test_the_setup_puts_hello_where_lat_proc_execs_it():
    """lat_proc exec (and shell) run lmbench's hello from a fixed path (lat_proc.c's
    PROG); without it there every round times a fork and a failed exec.  The path is
    read from the real lmbench 3.0-a9 source."""
    import re
    import tarfile

    from bringup.model import benchset

    tgz = paths.ROOT.parent / "shared" / "sources" / "lmbench-3.0-a9.tar.gz"
    if not tgz.exists():
        pytest.skip(f"{tgz} not here (../shared/sources)")
    with tarfile.open(tgz) as t:
        member = next(m for m in t.getmembers() if m.name.endswith("/src/lat_proc.c"))
        f = t.extractfile(member)
        assert f is not None
        src = f.read().decode()
    progs = re.findall(r'#define\s+PROG\s+"([^"]+)"', src)
    assert "/tmp/hello" in progs  # the dynamic build's; "/tmp/hello-s" is the STATIC one
    bset = benchset.load_set()
    assert any("lat_proc" in b.cmd and "exec" in b.cmd for b in bset.bench)
    assert "cp ./hello /tmp/hello" in bset.setup and "hello" in benchset.programs(bset)
