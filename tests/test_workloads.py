"""Workloads as data (configs/workloads/, model/workload.py), their parsers on outputs
captured from Debian bookworm's armhf binaries (tests/data/workloads/, SOURCES.md),
and the runner's round loop on a fake shell."""

import subprocess
import types
from pathlib import Path

import pytest

from bringup.errors import BringupError
from bringup.measure import footprint
from bringup.measure import workloadinputs as wi
from bringup.measure import workloads as mw
from bringup.measure.footprintrecords import KernelRounds
from bringup.model import workload as wm
from bringup.model.base import DataError
from bringup.parse import workload as wp
from bringup.targets.serial import SerialSpec

DATA = Path(__file__).parent / "data" / "workloads"


def capture(name: str) -> str:
    return (DATA / name).read_text()


def metric_of(wl: wm.WorkloadSpec, name: str) -> wm.WorkloadMetricSpec:
    return next(m for m in wl.metric if m.name == name)


# --- the shipped workloads ----------------------------------------------------------


def test_every_shipped_workload_loads_and_there_are_at_least_three():
    wls = wm.load_all()
    assert len(wls) >= 3
    assert {"openssl", "compress", "sysbench"} <= set(wls)


def test_openssl_parser_on_a_real_speed_table():
    wl = wm.load_all(["openssl"])["openssl"]
    text = capture("openssl-speed-armhf.txt")
    # read by hand from the capture: "sha256           40895.11k", "aes-128-cbc      17170.43k",
    # "rsa 2048 bits 0.035172s 0.000834s     28.4   1199.0"
    expect = {"sha256": 40895.11, "aes-128-cbc": 17170.43, "rsa2048 sign": 28.4, "rsa2048 verify": 1199.0}
    for name, v in expect.items():
        m = metric_of(wl, name)
        assert wp.metric(text, m.regex, m.scale) == pytest.approx(v)


def test_openssl_parser_on_the_table_the_guest_printed():
    wl = wm.load_all(["openssl"])["openssl"]
    text = capture("openssl-speed-guest-armhf.txt")
    # by hand: "sha256           34519.95k", "aes-128-cbc      22359.34k",
    # "rsa 2048 bits 0.033667s 0.000772s     29.7   1295.0"
    expect = {"sha256": 34519.95, "aes-128-cbc": 22359.34, "rsa2048 sign": 29.7, "rsa2048 verify": 1295.0}
    assert {m.name: wp.metric(text, m.regex, m.scale) for m in wl.metric if m.regex} == pytest.approx(expect)


def test_openssl_parser_finds_nothing_in_the_progress_lines_alone():
    wl = wm.load_all(["openssl"])["openssl"]
    progress = "\n".join(x for x in capture("openssl-speed-armhf.txt").splitlines() if x.startswith("Doing"))
    assert all(wp.metric(progress, m.regex) is None for m in wl.metric if m.regex)


@pytest.mark.parametrize(
    "metric,file,value",
    [
        # "    events per second:    17.66"
        ("cpu events", "sysbench-cpu-armhf.txt", 17.66),
        # "1781.00 MiB transferred (876.50 MiB/sec)"
        ("memory write", "sysbench-memory-armhf.txt", 876.50),
        # "    total time:                          1.7399s"
        ("threads time", "sysbench-threads-armhf.txt", 1.7399),
    ],
)
def test_sysbench_parsers_on_real_outputs(metric, file, value):
    m = metric_of(wm.load_all(["sysbench"])["sysbench"], metric)
    assert wp.metric(capture(file), m.regex, m.scale) == pytest.approx(value)


def test_sysbench_cpu_regex_does_not_take_another_tests_number():
    m = metric_of(wm.load_all(["sysbench"])["sysbench"], "cpu events")
    assert wp.metric(capture("sysbench-memory-armhf.txt"), m.regex) is None


def test_the_elapsed_marker_of_a_real_guest_step():
    # a step as the guest printed it (tests/data/workloads/guest-step-xz.txt: xz prints nothing)
    # "@@@ ELAPSED 2.69 20.67 rc=0": 20.67 - 2.69 s
    body, secs, rc = wp.split(capture("guest-step-xz.txt"))
    assert (body, secs, rc) == ("", 17.98, 0)


def test_split_without_marker_and_with_a_failure():
    assert wp.split("partial output\n") == ("partial output\n", None, None)
    body, secs, rc = wp.split("xz: /nope: No such file\n@@@ ELAPSED 10.50 10.75 rc=1\n")
    assert (secs, rc) == (0.25, 1)
    assert wp.last_line(body) == "xz: /nope: No such file"


def test_the_reason_of_a_failed_step_is_its_error_line_not_the_usage_after_it():
    text = capture("guest-busybox-xz-usage.txt")
    assert wp.last_line(text) == "xz: invalid option -- 'T'"
    assert wp.last_line("compressing\nall good but exit 3\n") == "all good but exit 3"
    assert wp.last_line("") == "(no output)"


def test_commands_expand_size_variables_and_inputs():
    wl = wm.load_all(["compress"])["compress"]
    cmds = dict((s.name, c) for s, c in wl.commands("quick", "compress"))
    assert (
        cmds["xz_compress"] == "/usr/bin/xz -T1 -6 -c /usr/share/bringup-workloads/compress/corpus.txt > /tmp/corpus.xz"
    )
    sb = wm.load_all(["sysbench"])["sysbench"]
    quick = dict((s.name, c) for s, c in sb.commands("quick", "sysbench"))
    full = dict((s.name, c) for s, c in sb.commands("full", "sysbench"))
    assert "--time=5 " in quick["cpu"] and "--time=30 " in full["cpu"]
    assert sb.step_timeout(sb.step[0], "full") == sb.step_timeout(sb.step[0], "quick") * sb.full_timeout_factor


def test_generated_inputs_are_deterministic_and_of_their_size():
    inp = wm.WorkloadInputSpec(name="c", kind="text", quick_bytes=10_000, full_bytes=50_000, seed=3)
    a, b = wi.generate(inp, "quick"), wi.generate(inp, "quick")
    assert a == b and len(a) == 10_000 and len(wi.generate(inp, "full")) == 50_000
    assert wi.generate(inp.model_copy(update={"seed": 4}), "quick") != a
    assert set(a.decode().split()) <= set(wi.WORDS)
    rnd = wi.generate(inp.model_copy(update={"kind": "random"}), "quick")
    assert len(set(rnd)) > 200  # incompressible bytes, not words


# --- bad workload files ---------------------------------------------------------------

GOOD = """
description = "d"
packages = ["openssl"]
[quick]
n = 1
[full]
n = 2
[[step]]
name = "s"
cmd = "openssl speed -seconds {n} sha256"
[[metric]]
name = "sha256"
step = "s"
regex = '^sha256\\s+([0-9.]+)k'
unit = "kB/s"
better = "higher"
"""


RX = next(line for line in GOOD.splitlines() if line.startswith("regex"))
RX_COUNT = "[[metric]]\nname = 'rate'\nstep = 's'\nelapsed = true\ncount = 'n'\nunit = 'ops/s'\nbetter = 'higher'"


def write(tmp_path: Path, text: str, name: str = "w") -> Path:
    d = tmp_path / "workloads"
    d.mkdir(exist_ok=True)
    (d / f"{name}.toml").write_text(text)
    return d


def test_a_good_file_loads(tmp_path):
    assert wm.load_all(None, write(tmp_path, GOOD))["w"].metric[0].unit == "kB/s"


@pytest.mark.parametrize(
    "old,new,field,words",
    [
        (RX, "regex = '^sha256(['", "metric[0].regex", "not a regular expression"),
        (RX, "regex = '^sha256'", "metric[0].regex", "exactly one capture group"),
        ('unit = "kB/s"', 'unit = "furlongs"', "metric[0].unit", "is not one of"),
        ('packages = ["openssl"]', 'packages = ["Open SSL"]', "packages[0]", "accepted form"),
        ('packages = ["openssl"]', "packages = []", "packages", "at least 1"),
        ('packages = ["openssl"]', "", "packages", "missing"),
        ('step = "s"', 'step = "t"', "metric[0].step", "no step of that name"),
        ("{n} sha256", "{m} sha256", "step[0].cmd", "placeholder {m}"),
        ("[full]\nn = 2", "[full]\nk = 2", "full", "same variables"),
        ('better = "higher"', 'better = "more"', "metric[0].better", "is not one of"),
        (RX, "elapsed = true", "metric[0].unit", "elapsed time is in s"),
        ("[full]\nn = 2", "[full]\nn = '2; reboot'", "full.n", "one word for the guest"),
        ("[full]\nn = 2", "[full]\nn = '$(reboot)'", "full.n", "one word for the guest"),
        (
            'unit = "kB/s"',
            'unit = "kB/s"\ncount = "m"',
            "metric[0].count",
            "'m': not a positive number among the quick",
        ),
        ('unit = "kB/s"', 'unit = "kB/s"\ncount = 0', "metric[0].count", "a count is a positive number"),
        ('unit = "kB/s"', 'unit = "kB/s"\ncount = "N frames"', "metric[0].count", "the name of a size variable"),
        ('unit = "kB/s"', 'unit = "s"\ncount = 10', "metric[0].unit", "a rate, not a time"),
        ('unit = "kB/s"', 'unit = "kB/s"\ncount = 10\nscale = 2', "metric[0].scale", "either scale or count"),
        ("[full]\nn = 2", "[full]\nn = 'two'\n" + RX_COUNT, "metric[0].count", "not a positive number among the full"),
        (
            'packages = ["openssl"]',
            'packages = ["openssl"]\ndefault_set = "no"',
            "default_set",
            "expected true or false",
        ),
    ],
)
def test_a_bad_file_fails_in_one_line_naming_file_and_field(tmp_path, old, new, field, words):
    text = GOOD.replace(old, new)
    assert text != GOOD
    d = write(tmp_path, text)
    with pytest.raises(DataError) as e:
        wm.load_all(None, d)
    msg = str(e.value)
    assert "\n" not in msg
    assert "w.toml" in msg and f"field '{field}'" in msg and words in msg, msg


def test_an_unknown_workload_name_is_named(tmp_path):
    d = write(tmp_path, GOOD)
    with pytest.raises(DataError, match=r"workload 'nope': no file .*nope\.toml \(known: w\)"):
        wm.load_all(["nope"], d)


def test_default_set_false_runs_only_when_named(tmp_path):
    """A workload with default_set = false is left out of the default set (make all, make
    workloads without WORKLOADS=), runs when named, and with WORKLOADS=all."""
    d = write(tmp_path, GOOD)
    write(tmp_path, GOOD.replace('packages = ["openssl"]', 'packages = ["openssl"]\ndefault_set = false'), "slow")
    assert list(wm.load_all(None, d)) == ["w"]
    assert list(wm.load_all(["slow"], d)) == ["slow"] and wm.load_all(["slow"], d)["slow"].default_set is False
    assert list(wm.load_all(["all"], d)) == ["slow", "w"]
    (d / "w.toml").unlink()
    with pytest.raises(DataError, match=r"every workload has default_set = false: name them"):
        wm.load_all(None, d)


def test_a_workload_may_not_be_called_all_or_none(tmp_path):
    d = write(tmp_path, GOOD, "none")
    with pytest.raises(DataError, match=r"none\.toml: 'none' is reserved \(WORKLOADS=none: no workloads step\)"):
        wm.load_all(None, d)


def test_a_count_makes_a_rate_of_a_time_in_the_mode_of_the_run():
    """count = "frames": the size variable's value in the mode, divided by the time."""
    wl = wm.load_all(["x264"])["x264"]
    m = metric_of(wl, "encode")
    assert m.count == "frames" and m.unit == "frames/s"
    assert wl.count_of(m, "quick") == wl.quick["frames"] and wl.count_of(m, "full") == wl.full["frames"]
    ran = {
        "error": None,
        "steps": {"encode": {"text": "Execution ended after 0:00:12.500000000\n", "elapsed": 13.1, "rc": 0}},
    }
    assert mw.values_of(wl, ran, "quick") == ({"encode": pytest.approx(wl.quick["frames"] / 12.5)}, [])
    assert mw.values_of(wl, ran, "full") == ({"encode": pytest.approx(wl.full["frames"] / 12.5)}, [])
    ran["steps"]["encode"]["text"] = "Execution ended after 0:00:00.000000000\n"
    vals, why = mw.values_of(wl, ran, "quick")
    assert vals == {} and why == [f"encode: {wl.quick['frames']} divided by a time of 0 s"]


@pytest.mark.parametrize(
    "text,value",
    [("0:00:12.345678901", 12.345678901), ("1:02:03.5", 3723.5), ("0:01:00", 60.0), ("12.5", 12.5), ("0:61:00", None)],
)
def test_a_captured_clock_time_is_seconds(text, value):
    assert wp.metric(f"took {text} here", r"took (\S+) here") == (None if value is None else pytest.approx(value))


def test_bad_toml_is_one_line(tmp_path):
    with pytest.raises(DataError, match=r"w\.toml: not valid TOML"):
        wm.load_all(None, write(tmp_path, "description = "))


# --- the runner on a fake shell ---------------------------------------------------------


class FakeShell:
    """Answers each step like the guest: a canned output, then the elapsed marker.
    dies_at: the step whose command kills the target (the console closes, as when QEMU
    dies); hangs_at: the step after which the target prints nothing (a stopped QEMU)."""

    def __init__(self, outputs: dict[str, tuple[str, int] | Exception], dies_at=None, hangs_at=None):
        self.outputs = outputs
        self.commands: list[str] = []
        self.exp = self
        self.dies_at, self.hangs_at = dies_at, hangs_at
        self.state = "up"

    def isalive(self):
        return self.state != "dead"

    def send(self, s):
        self.commands.append("^c" if s == "\x03" else s)

    def run(self, cmd, timeout=60, name=None):
        from bringup.errors import BootFailed

        self.commands.append(cmd)
        if self.dies_at is not None and self.dies_at in cmd:
            self.state = "dead"
        elif self.hangs_at is not None and self.hangs_at in cmd:
            self.state = "hung"
        if self.state == "dead":
            raise BootFailed(f"step '{name or cmd}': console closed: QEMU exited (killed by signal 9)")
        if self.state == "hung":
            raise BootFailed(f"step '{name or cmd}' did not finish within {timeout:.0f}s")
        for key, out in self.outputs.items():
            if key in cmd:
                if isinstance(out, Exception):
                    raise out
                text, rc = out
                return f"{text}@@@ ELAPSED 100.00 101.50 rc={rc}\n", 0
        return "", 0


def test_a_failing_step_leaves_its_workload_not_measured_and_the_others_go_on():
    from bringup.errors import BootFailed

    wls = wm.load_all(["openssl", "sysbench"])
    sh = FakeShell(
        {
            "openssl speed": ("openssl: error while loading shared libraries\n", 127),
            "sysbench cpu": (capture("sysbench-cpu-armhf.txt"), 0),
            "sysbench memory": BootFailed("step 'workload sysbench, step memory' did not finish within 60s"),
        }
    )
    ran = mw.run_in_boot(sh, wls, "quick", {}, say=lambda *_: None)
    assert ran["openssl"]["error"].startswith("step speed exited 127: openssl: error while loading")
    vals, why = mw.values_of(wls["openssl"], ran["openssl"])
    assert vals == {} and len(why) == 5
    assert "^c" in sh.commands  # the timed-out step was interrupted
    vals, why = mw.values_of(wls["sysbench"], ran["sysbench"])
    assert vals == {"cpu events": pytest.approx(17.66)}
    assert any("did not finish within 60s" in w for w in why)


def test_records_keep_rounds_and_never_write_zero_for_a_failure(tmp_path):
    from bringup import records

    wls = wm.load_all(["compress", "openssl"])
    ok = capture("openssl-speed-armhf.txt")
    rounds = []
    for rnd, rc in ((1, 0), (2, 1)):
        sh = FakeShell({"openssl speed": (ok, rc), "xz": ("", 0), "zstd": ("", 0)})
        ran = mw.run_in_boot(sh, wls, "quick", {}, say=lambda *_: None)
        rounds.append(
            mw.WorkloadBoot(
                tmp_path / f"workload-runs/r{rnd}", round=rnd, ran=ran, values=mw.round_values(wls, ran, "quick")
            )
        )

    class Rd:
        def ref(self):
            return records.RootfsRef(file="workloads.cpio.gz", sha256="0" * 64, inputs_key=None)

    class B:
        name = "qemu-arm"
        target = SerialSpec(port="/dev/ttyUSB0")  # a real board: the environment captured without a QEMU version

    import recordfactory as rf

    rec = mw.record(
        B,
        "5.10",
        rf.build("5.10", key=None),
        tmp_path,
        KernelRounds(rounds, 0),
        Rd(),
        wls,
        "quick",
        {"openssl": "3.0"},
    )
    records.write(tmp_path / "workloads.json", rec, records.Workloads)
    back = records.read(tmp_path / "workloads.json", records.Workloads)
    assert back.workloads["openssl"].measured and back.runs == 2
    o = rec["workloads"]["openssl"]
    sha = next(m for m in o["metrics"] if m["name"] == "sha256")
    assert sha["values"] == [pytest.approx(40895.11)] and sha["rounds"] == [1]
    assert [f["round"] for f in o["failures"]] == [2, 2, 2, 2, 2]
    c = rec["workloads"]["compress"]
    assert c["measured"] and all(m["values"] == [1.5, 1.5] for m in c["metrics"])


# --- the command line: bad input is one line, before any work ----------------------------


@pytest.fixture
def empty_logs(tmp_path, monkeypatch):
    monkeypatch.setenv("BRINGUP_LOGS", str(tmp_path / "logs"))
    return tmp_path


def one_error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("bringup: error: "), err
    return err[0]


def test_cli_unknown_workload_is_one_line(empty_logs, capsys):
    from bringup import cli

    assert cli.main(["workloads", "-b", "qemu-arm", "--workloads", "openssl,nope"]) == 2
    known = ", ".join(wm.available())  # the files of configs/workloads/, sorted
    assert {"compress", "openssl", "sysbench", "fio", "postmark"} <= set(wm.available())
    assert f"workload 'nope': no file configs/workloads/nope.toml (known: {known})" in one_error(capsys)


def test_cli_bad_workload_file_is_one_line_before_the_build_check(empty_logs, capsys, monkeypatch):
    from bringup import cli

    d = write(empty_logs, GOOD.replace('unit = "kB/s"', 'unit = "kB"'), "bad")
    monkeypatch.setattr(wm, "workloads_dir", lambda: d)
    assert cli.main(["workloads", "-b", "qemu-arm"]) == 2
    msg = one_error(capsys)
    assert "bad.toml: field 'metric[0].unit': 'kB' is not one of" in msg and "no build record" not in msg


def test_cli_without_builds_names_the_missing_record(empty_logs, capsys):
    from bringup import cli

    assert cli.main(["workloads", "-b", "qemu-arm", "--workloads", "openssl"]) == 2
    assert "no build record" in one_error(capsys)


def test_a_package_debian_does_not_have_leaves_only_its_workload_not_measured(monkeypatch, tmp_path):
    from bringup.model.board import load_board

    class FakeApt:
        def __init__(self, *a, **k):
            pass

        def candidate(self, p):
            return None if p.startswith("nosuchpkg") else "1.0"

        def candidates(self, ps):
            return {p: self.candidate(p) for p in ps}

        def depends_closure(self, pkgs):
            raise AssertionError("no package of a good workload here: nothing to resolve")

    monkeypatch.setattr(mw, "PrivateApt", FakeApt)
    bad = wm.WorkloadSpec.model_validate(
        {**wm.load_all(["openssl"])["openssl"].model_dump(), "packages": ["nosuchpkg"], "input": []}
    )
    entries, versions, missing = mw.payload(
        load_board("qemu-arm"), {"bad": bad}, "quick", tmp_path, say=lambda *_: None
    )
    assert missing == {"bad": "Debian bookworm has no package 'nosuchpkg' for armhf"}
    assert versions == {}
    ran = mw.run_in_boot(FakeShell({}), {"bad": bad}, "quick", missing, say=lambda *_: None)
    assert mw.values_of(bad, ran["bad"]) == ({}, ["Debian bookworm has no package 'nosuchpkg' for armhf"])


def test_the_round_loop_boots_each_kernel_once_per_round_interleaved(tmp_path, monkeypatch):
    """workloads() with the guest replaced by a fake shell: one boot per kernel per round,
    in the order A B, B A; every round's value kept with its round; raw outputs beside."""
    import recordfactory as rf
    from bringup import records
    from bringup.model.board import load_board

    board = load_board("qemu-arm")
    logs = tmp_path / "logs"
    for k in board.kernels:
        records.write(logs / "qemu-arm" / k.id / "build.json", rf.build(k.id))
    monkeypatch.setattr(mw, "payload", lambda *a, **kw: ([], {"openssl": "3.0.20-1~deb12u2"}, {}))
    rootfs_record = rf.rootfs("workloads", "qemu-arm", mode="quick")
    monkeypatch.setattr(mw.rootfs, "build", lambda *a, **kw: rootfs_record)
    text = capture("openssl-speed-armhf.txt")
    boots: list[str] = []

    class FakeSession:
        def __init__(self, step, kernel_id, run_dir, *a, **kw):
            run_dir.mkdir(parents=True, exist_ok=True)
            self.kernel_id = kernel_id

        def __enter__(self):
            boots.append(self.kernel_id)
            return self

        def __exit__(self, *exc):
            return False

        def shell(self):
            n = boots.count(self.kernel_id)  # 6.12's sha256 is 1000 kB/s higher in its 2nd boot
            out = text.replace("40895.11k", f"{40895.11 + (1000 if self.kernel_id == '6.12' and n == 2 else 0):.2f}k")
            return FakeShell({"openssl speed": (out, 0)})

    def session(step, kernel_id, run_dir, *_a, **_kw):
        return FakeSession(step, kernel_id, run_dir)

    monkeypatch.setattr(footprint, "measure_session", session)
    import functools
    import re

    from bringup.boot import rounds

    monkeypatch.setattr(rounds, "Progress", functools.partial(rounds.Progress, every=0, tty=False))  # the engine's
    lines: list[str] = []
    res = mw.workloads(board, logs, tmp_path / "cache", names=["openssl"], runs=2, guard=False, say=lines.append)
    assert boots == ["5.10", "6.12", "6.12", "5.10"]
    counts = re.findall(r"workload rounds: (\d+) % \((\d+)/(\d+) boots\)", "\n".join(lines))
    assert [(int(p), int(d), int(t)) for p, d, t in counts] == [(25, 1, 4), (50, 2, 4), (75, 3, 4), (100, 4, 4)]
    rec = records.read(logs / "qemu-arm" / "6.12" / "workloads.json", records.Workloads)
    assert rec == res["6.12"] and rec.runs == 2 and rec.mode == "quick"
    sha = rec.workloads["openssl"].metrics[0]
    assert sha.name == "sha256" and sha.values == [pytest.approx(40895.11), pytest.approx(41895.11)]
    assert sha.rounds == [1, 2] and sha.value == pytest.approx(41395.11)
    assert rec.workloads["openssl"].seconds == [1.5, 1.5] and rec.workloads["openssl"].failures == []
    assert [d.split("/")[0] for d in rec.run_dirs] == ["workload-runs", "workload-runs"]
    raw = (logs / "qemu-arm" / "6.12" / rec.run_dirs[0] / "workloads.txt").read_text()
    assert raw.startswith("=== openssl speed rc=0 elapsed=1.5\n")


def test_a_real_board_runs_workloads_on_the_kernel_we_built_through_its_bootloader(tmp_path, monkeypatch):
    """Workloads, like the footprint, never boot a real board 'direct' (that would measure
    whatever kernel its flash holds): the measurement session goes through U-Boot."""
    import types

    import recordfactory as rf
    from bringup.measure import footprint
    from bringup.model.board import load_board

    target = types.SimpleNamespace(describe=lambda: {"t0": "power-on"})
    monkeypatch.setattr(footprint.targets, "for_board", lambda *a, **kw: target)
    logs = tmp_path / "logs"
    for name, path in (("labgrid-example", "u-boot"), ("qemu-arm", "direct")):
        board = load_board(name)
        build = rf.build("6.12", board=name)
        build = build.model_copy(update={"artifacts": {**build.artifacts, "uImage": "images/uImage"}})
        for f in build.artifacts.values():
            (logs / name / "6.12" / f).parent.mkdir(parents=True, exist_ok=True)
            (logs / name / "6.12" / f).write_bytes(b"image")
        step = footprint.MeasuringStep(board, logs, {"6.12": build}, tmp_path / "rd", 1.0, "workload-runs")
        s = footprint.measure_session(step, "6.12", tmp_path / "run")
        assert s.path == path, name
        assert s.files["kernel"].parent.parent == logs / name / "6.12"  # the step's build of the kernel


# --- the disk workloads (fio, PostMark) ---------------------------------------------------


def test_postmark_on_the_output_the_guest_printed():
    """PostMark's last prompt ("pm>") has no newline: the runner's marker follows it on the
    same line and still ends the step (tests/data/workloads/postmark-guest-armhf.txt)."""
    wl = wm.load_all(["postmark"])["postmark"]
    body, secs, rc = wp.split(capture("postmark-guest-armhf.txt"))
    # by hand: "pm>@@@ ELAPSED 6.79 14.42 rc=0", "	6 seconds of transactions (333 per second)"
    assert (secs, rc) == (7.63, 0)
    assert body.endswith("pm>") and "@@@" not in body
    assert wp.metric(body, metric_of(wl, "transactions").regex) == 333
    assert wl.needs_disk and metric_of(wl, "run time").elapsed


@pytest.mark.parametrize(
    "metric,value",
    [
        # read by hand from tests/data/workloads/fio-terse-guest-armhf.txt: the write status starts
        # after the 41 read fields; "3439360;1146071;4476;3001" (KiB, KiB/s, IOPS, ms) in seq_write
        ("seq write 256K", 1146071 / 1024),
        # "3;fio-3.33;seq_read;0;0;3442688;1147180;4481;3001"
        ("seq read 256K", 1147180 / 1024),
        # rand_write's write status "76660;25544;6386;3001"
        ("rand write 4K", 6386),
        # "3;fio-3.33;rand_read;0;0;69688;23221;5805;3001"
        ("rand read 4K", 5805),
    ],
)
def test_fio_terse_parsers_on_the_output_the_guest_printed(metric, value):
    m = metric_of(wm.load_all(["fio"])["fio"], metric)
    assert wp.metric(capture("fio-terse-guest-armhf.txt"), m.regex, m.scale) == pytest.approx(value)


def test_a_fio_job_with_an_error_gives_no_number():
    wl = wm.load_all(["fio"])["fio"]
    text = capture("fio-terse-guest-armhf.txt").replace("3;fio-3.33;rand_read;0;0;", "3;fio-3.33;rand_read;0;5;")
    assert wp.metric(text, metric_of(wl, "rand read 4K").regex) is None
    assert wp.metric(text, metric_of(wl, "seq read 256K").regex) == pytest.approx(1147180)  # its own job still


def test_disk_placeholder_expands_to_the_mount_point_and_needs_needs_disk(tmp_path):
    wl = wm.load_all(["postmark"])["postmark"]
    cmd = dict((s.name, c) for s, c in wl.commands("quick", "postmark"))["run"]
    assert f"set location {wm.DISK_MOUNT}/postmark\\n" in cmd and "set transactions 10000\\n" in cmd
    d = write(tmp_path, GOOD.replace("{n} sha256", "{n} sha256 > {disk}/x"))
    with pytest.raises(DataError, match=r"w\.toml: field 'step\[0\]\.cmd': placeholder \{disk\} needs needs_disk"):
        wm.load_all(None, d)
    ok = write(tmp_path, "needs_disk = true\n" + GOOD.replace("{n} sha256", "{n} sha256 > {disk}/x"))
    assert wm.load_all(None, ok)["w"].needs_disk


def test_without_may_not_name_a_package_the_workload_needs(tmp_path):
    d = write(tmp_path, 'without = ["openssl"]\n' + GOOD)
    with pytest.raises(DataError, match=r"w\.toml: field 'without': 'openssl' is also in packages"):
        wm.load_all(None, d)


def test_the_closure_without_leaves_out_what_only_those_packages_bring():
    """On apt-cache's real answer for fio:armhf (tests/data/workloads/apt-depends-fio-armhf.txt):
    python3 (fio's plotting scripts) and perl (through init-system-helpers) go; the libraries
    the fio binary loads stay, libicu72 too (libnbd0 -> libxml2 -> libicu72)."""
    from bringup.util.aptprivate import closure_without

    text = capture("apt-depends-fio-armhf.txt")
    everything = closure_without(text, ["fio:armhf"], ())
    assert {"python3:armhf", "perl-base", "libicu72:armhf", "librbd1:armhf"} <= set(everything)
    wl = wm.load_all(["fio"])["fio"]
    kept = closure_without(text, ["fio:armhf"], wl.without)
    assert {"fio:armhf", "libaio1:armhf", "librbd1:armhf", "libnbd0:armhf", "libicu72:armhf", "libc6:armhf"} <= set(
        kept
    )
    gone = {p.split(":")[0] for p in set(everything) - set(kept)}
    assert {"python3", "python3.11-minimal", "perl-base", "adduser", "dmsetup", "init-system-helpers"} <= gone
    assert not any(p.startswith("<") for p in kept)
    assert len(kept) < len(everything) / 2


class DiskBoard:
    """The parts of a board disk_plan reads."""

    def __init__(self, disk="", qemu=True, disk_mb=None):
        from bringup.model.specs import WorkloadsSpec
        from bringup.targets.qemu import QemuSpec

        self.file = Path("boards/b.toml")
        self.workloads = WorkloadsSpec(disk=disk, disk_mb=disk_mb)
        self.target = (
            QemuSpec(binary="qemu-system-arm", machine="virt", disk_device="virtio-blk-device")
            if qemu
            else SerialSpec(port="/dev/ttyUSB0")
        )


def test_a_board_without_a_disk_leaves_the_disk_workloads_not_measured_never_zero():
    wls = wm.load_all(["openssl", "fio", "postmark"])
    disk, skip = mw.disk_plan(DiskBoard(), wls)
    assert disk is None and set(skip) == {"fio", "postmark"}
    assert skip["fio"] == "no disk on this board (boards/b.toml names no [workloads] disk)"
    ran = mw.run_in_boot(FakeShell({}), wls, "quick", skip, say=lambda *_: None)
    assert ran["fio"] == {"error": skip["fio"], "steps": {}}
    assert mw.values_of(wls["postmark"], ran["postmark"]) == ({}, [skip["postmark"]])


def test_disk_plan_of_a_qemu_board_and_of_a_real_one():
    wls = wm.load_all(["fio"])
    assert mw.disk_plan(DiskBoard("/dev/vda"), wls)[0] == {
        "device": "/dev/vda",
        "fs": "ext4",
        "image_mb": 256,
        "attached": "QEMU virtio-blk-device: a fresh raw image per boot, the host's page cache behind it",
    }
    real, skip = mw.disk_plan(DiskBoard("/dev/mmcblk0p3", qemu=False), wls)
    assert real["image_mb"] is None and real["attached"] == "the board's own partition" and skip == {}
    assert mw.disk_plan(DiskBoard("/dev/vda"), wm.load_all(["openssl"])) == (None, {})


def test_a_disk_that_does_not_mount_is_the_reason():
    sh = FakeShell({"mount -t ext4": ("mount: mounting /dev/vda on /mnt/bringup-disk failed: Invalid argument\n", 255)})
    text, why = mw.mount_disk(sh, {"device": "/dev/vda", "fs": "ext4"})
    assert (
        why == "the disk /dev/vda did not mount: mount: mounting /dev/vda on /mnt/bringup-disk failed: Invalid argument"
    )
    assert "mkdir -p /mnt/bringup-disk && mount -t ext4 /dev/vda /mnt/bringup-disk" in sh.commands[0]
    ok = FakeShell({"mount -t ext4": ("/dev/vda /mnt/bringup-disk ext4 rw,relatime 0 0\n", 0)})
    assert mw.mount_disk(ok, {"device": "/dev/vda", "fs": "ext4"}) == (
        "/dev/vda /mnt/bringup-disk ext4 rw,relatime 0 0\n",
        None,
    )


def test_the_disk_image_is_a_fresh_ext4_made_without_root_that_old_kernels_mount(tmp_path):
    """Real mke2fs (e2fsprogs): the features are ours, not the host's mke2fs.conf (no
    orphan_file, which 5.10 cannot mount read-write); inode tables written at once."""
    import subprocess

    from bringup.builder import diskimage

    img = tmp_path / "disk.img"
    img.write_bytes(b"old content")
    assert diskimage.make(img, 64) == {"fs": "ext4", "image_mb": 64}
    assert img.stat().st_size == 64 * 1024 * 1024
    dumpe2fs = diskimage.mke2fs().replace("mke2fs", "dumpe2fs")
    head = subprocess.run([dumpe2fs, "-h", str(img)], capture_output=True, text=True).stdout
    features = set(next(x for x in head.splitlines() if x.startswith("Filesystem features:")).split(":")[1].split())
    assert {"has_journal", "extent", "64bit", "metadata_csum"} <= features
    assert not features & {"orphan_file", "metadata_csum_seed"}
    assert diskimage.UUID in head and "Filesystem volume name:   bringup" in head
    with pytest.raises(BringupError, match=r"disk image size 8 MiB: give 16 to 65536"):
        diskimage.make(img, 8)


def test_the_record_names_the_disk_and_a_v1_record_still_reads(tmp_path):
    import json

    from bringup import records

    wls = wm.load_all(["postmark"])
    body = capture("postmark-guest-armhf.txt")
    sh = FakeShell({"postmark": (wp.split(body)[0] + "\n", 0)})
    ran = mw.run_in_boot(sh, wls, "quick", {}, say=lambda *_: None)
    rnd = mw.WorkloadBoot(tmp_path / "workload-runs/r1", round=1, ran=ran, values=mw.round_values(wls, ran, "quick"))

    class Rd:
        def ref(self):
            return records.RootfsRef(file="workloads.cpio.gz", sha256="0" * 64, inputs_key=None)

    class B:
        name = "qemu-arm"
        target = SerialSpec(port="/dev/ttyUSB0")  # a real board: the environment captured without a QEMU version

    disk = mw.disk_plan(DiskBoard("/dev/vda"), wls)[0]
    import recordfactory as rf

    rec = mw.record(
        B, "5.10", rf.build("5.10", key=None), tmp_path, KernelRounds([rnd], 0), Rd(), wls, "quick", {}, disk
    )
    f = tmp_path / "workloads.json"
    records.write(f, rec, records.Workloads)
    back = records.read(f, records.Workloads)
    assert back.disk.device == "/dev/vda" and back.disk.image_mb == 256
    assert {m.name: m.value for m in back.workloads["postmark"].metrics} == {"run time": 1.5, "transactions": 333}
    old = json.loads(f.read_text())
    old["schema"] = "bringup.workloads/1"
    del old["disk"]
    (tmp_path / "v1.json").write_text(json.dumps(old))
    assert records.read(tmp_path / "v1.json", records.Workloads).disk is None


def test_the_ramdisk_closure_leaves_out_only_what_the_workload_file_says(monkeypatch, tmp_path):
    """payload(): one closure for the workloads that leave nothing out (as before), one per
    workload with `without`, on apt-cache's real answer for fio:armhf."""
    from bringup.model.board import load_board
    from bringup.util.aptprivate import closure_without

    calls = []
    fio_deps = capture("apt-depends-fio-armhf.txt")

    class FakeApt:
        def __init__(self, *a, **k):
            pass

        def candidate(self, p):
            return "1.0"

        def candidates(self, ps):
            return dict.fromkeys(ps, "1.0")

        def depends_closure(self, pkgs, without=()):
            calls.append((list(pkgs), list(without)))
            if pkgs == ["fio:armhf"]:
                return closure_without(fio_deps, pkgs, without)
            return [*pkgs, "libc6:armhf"]

        def download_many(self, ps):
            raise FileNotFoundError(ps[0])  # stop before reading .debs: the closure is what is tested

    monkeypatch.setattr(mw, "PrivateApt", FakeApt)
    wls = wm.load_all(["openssl", "sysbench", "fio"])
    with pytest.raises(FileNotFoundError):
        mw.payload(load_board("qemu-arm"), wls, "quick", tmp_path, say=lambda *_: None)
    assert calls == [(["openssl:armhf", "sysbench:armhf"], []), (["fio:armhf"], wls["fio"].without)]
    closure = mw._closure(FakeApt(), "armhf", [(["fio:armhf"], list(wls["fio"].without))])
    assert "fio:armhf" in closure and not {"python3:armhf", "perl-base", "adduser"} & set(closure)


def test_a_round_with_a_disk_workload_makes_mounts_and_deletes_a_fresh_image(tmp_path, monkeypatch):
    """workloads() on qemu-arm with the guest replaced by a fake shell: each boot gets its
    own ext4 image (real mke2fs) handed to QEMU's session, the guest is told to mount it
    before PostMark, the image is gone after the boot; the record names the disk."""
    import recordfactory as rf
    from bringup import records
    from bringup.model.board import load_board

    board = load_board("qemu-arm")
    logs = tmp_path / "logs"
    for k in board.kernels:
        records.write(logs / "qemu-arm" / k.id / "build.json", rf.build(k.id))
    monkeypatch.setattr(mw, "payload", lambda *a, **kw: ([], {"postmark": "1.53-2+b1"}, {}))
    rootfs_record = rf.rootfs("workloads", "qemu-arm", mode="quick")
    monkeypatch.setattr(mw.rootfs, "build", lambda *a, **kw: rootfs_record)
    body = wp.split(capture("postmark-guest-armhf.txt"))[0] + "\n"
    seen, shells = [], []

    class FakeSession:
        def __init__(self, step, kernel_id, run_dir, *a, target_for=None, disk=None, cancel=None, **kw):
            assert disk == run_dir / "disk.img" and disk.stat().st_size == 256 * 1024 * 1024
            assert target_for is None  # QEMU's own target attaches the image
            seen.append(disk)
            self.sh = FakeShell({"mount -t ext4 /dev/vda": ("/dev/vda /mnt/bringup-disk ext4 rw 0 0\n", 0)})
            self.sh.outputs["postmark"] = (body, 0)
            self.sh.outputs["umount /mnt/bringup-disk"] = ("", 0)
            shells.append(self.sh)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def shell(self):
            return self.sh

    monkeypatch.setattr(footprint, "measure_session", FakeSession)
    mw.workloads(board, logs, tmp_path / "cache", names=["postmark"], runs=1, guard=False, say=lambda *_: None)
    assert len(seen) == 2 and not any(d.exists() for d in seen)
    rec = records.read(logs / "qemu-arm" / "5.10" / "workloads.json", records.Workloads)
    assert rec.disk.device == "/dev/vda" and rec.disk.fs == "ext4" and rec.workloads["postmark"].measured
    raw = (logs / "qemu-arm" / "5.10" / rec.run_dirs[0] / "workloads.txt").read_text()
    assert raw.startswith("=== disk mount /dev/vda at /mnt/bringup-disk: mounted\n/dev/vda /mnt/bringup-disk ext4")
    assert "=== postmark run rc=0" in raw and raw.rstrip().endswith("=== disk unmount")
    order = [next(k for k in ("mount -t", "postmark", "umount") if k in c) for c in shells[0].commands]
    assert order == ["mount -t", "postmark", "umount"]


class OpensslSession:
    """A booted workload ramdisk (measure_session's session) whose shell answers `openssl
    speed` with the table a guest printed."""

    def __init__(self, step, kernel_id, run_dir, *a, **kw):
        run_dir.mkdir(parents=True, exist_ok=True)
        self.run_dir, self.target = run_dir, None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def shell(self):
        return FakeShell({"openssl speed": (capture("openssl-speed-armhf.txt"), 0)})


def test_a_labgrid_board_holds_its_place_for_all_workload_rounds(tmp_path, monkeypatch):
    """On a lab board the place is acquired once for the whole step (as for the footprint),
    every boot gets a target of the held place, and the place is released at the end."""
    import contextlib

    import recordfactory as rf
    from bringup import records
    from bringup.model.board import load_board

    board = load_board("labgrid-example")
    logs = tmp_path / "logs"
    for k in board.kernels:
        records.write(logs / board.name / k.id / "build.json", rf.build(k.id))
    monkeypatch.setattr(mw, "payload", lambda *a, **kw: ([], {}, {}))
    rootfs_record = rf.rootfs("workloads", board.name, mode="quick")
    monkeypatch.setattr(mw.rootfs, "build", lambda *a, **kw: rootfs_record)
    log: list = []

    class HeldPlace:
        name = "p1"

        @contextlib.contextmanager
        def hold(self, cancel=None):
            log.append("acquire")
            yield lambda run_dir: ("target of p1", run_dir)
            log.append("release")

    monkeypatch.setattr(mw.targets, "places", lambda board, names=None, say=print: [HeldPlace()])

    class FakeSession(OpensslSession):
        def __init__(self, step, kernel_id, run_dir, *a, target_for=None, disk=None, cancel=None, **kw):
            assert disk is None
            super().__init__(step, kernel_id, run_dir)
            log.append(target_for(run_dir)[0])

    monkeypatch.setattr(footprint, "measure_session", FakeSession)
    mw.workloads(board, logs, tmp_path / "cache", names=["openssl"], runs=2, guard=False, say=lambda *_: None)
    n = 2 * len(board.kernels)
    assert log == ["acquire"] + ["target of p1"] * n + ["release"]


def test_john_parser_on_the_output_the_guest_printed():
    """john --test prints "Raw:<TAB>N c/s real, M c/s virtual"; the real rate is the metric."""
    wl = wm.load_all(["john"])["john"]
    text = capture("john-test-guest-armhf.txt")
    # by hand: "Raw:	3764 c/s real, 3801 c/s virtual"
    assert wp.metric(text, metric_of(wl, "md5crypt").regex) == 3764
    assert wp.metric(text.replace("3764 c/s", "3764K c/s"), metric_of(wl, "md5crypt").regex) is None  # never 1000x off


def test_7zip_times_its_two_steps():
    wl = wm.load_all(["7zip"])["7zip"]
    cmds = dict((s.name, c) for s, c in wl.commands("quick", "7zip"))
    corpus = "/usr/share/bringup-workloads/7zip/corpus.txt"
    assert cmds["compress"].startswith(f"/usr/bin/7zz a -bd -mx=5 -mmt=1 /tmp/corpus.7z {corpus}")
    assert all(m.elapsed and m.unit == "s" for m in wl.metric)


def test_generated_pictures_and_clips_are_valid_files_of_about_their_size():
    """image: a binary PPM a tool reads; video: YUV4MPEG2 4:2:0 frames; both the same bytes
    for the same seed, other bytes for another."""
    img = wm.WorkloadInputSpec(name="p.ppm", kind="image", quick_bytes=300_000, full_bytes=1_200_000, seed=4)
    a = wi.generate(img, "quick")
    head, w, h, maxval = a.split(b"\n", 3)[0], *a.split(b"\n", 3)[1].split(), a.split(b"\n", 3)[2]
    assert head == b"P6" and w == h == b"312" and maxval == b"255"  # 312 = sqrt(300000 / 3) // 8 * 8
    assert len(a) == len(b"P6\n312 312\n255\n") + 312 * 312 * 3
    assert a == wi.generate(img, "quick") and a != wi.generate(img.model_copy(update={"seed": 5}), "quick")
    vid = wm.WorkloadInputSpec(name="c.y4m", kind="video", quick_bytes=400_000, full_bytes=800_000, seed=5)
    v = wi.generate(vid, "quick")
    header = b"YUV4MPEG2 W176 H144 F25:1 Ip A1:1 C420jpeg\n"
    frame = 176 * 144 * 3 // 2
    assert v.startswith(header) and (len(v) - len(header)) == 10 * (len(b"FRAME\n") + frame)  # 400000 // 38016
    assert v.count(b"FRAME\n") >= 10 and v == wi.generate(vid, "quick")


def test_graphicsmagick_parser_on_the_output_the_guest_printed():
    wl = wm.load_all(["graphicsmagick"])["graphicsmagick"]
    text = capture("gm-benchmark-guest-armhf.txt")
    # by hand: "Results: 1 threads 5 iter 3.37s user 3.383196s total 1.478 iter/s 1.484 iter/cpu"
    assert wp.metric(text, metric_of(wl, "resize+sharpen").regex) == pytest.approx(1.478)


def test_gnupg_leaves_the_pinentries_out_and_times_both_steps():
    wl = wm.load_all(["gnupg"])["gnupg"]
    assert "pinentry-curses" in wl.without and set(wl.packages) == {"gpg", "gpg-agent"}
    cmds = dict((s.name, c) for s, c in wl.commands("quick", "gnupg"))
    assert "--pinentry-mode loopback --passphrase bringup --symmetric" in cmds["encrypt"]
    assert all(m.elapsed for m in wl.metric)


def test_x264_parser_on_the_output_the_guest_printed():
    """gst-launch-1.0 prints "Execution ended after 0:00:11.524154064" (h:mm:ss.ns) when the
    stream ends; 250 frames in that time are the rate."""
    wl = wm.load_all(["x264"])["x264"]
    m = metric_of(wl, "encode")
    body, secs, rc = wp.split(capture("gst-x264enc-guest-armhf.txt") + "@@@ ELAPSED 1.00 12.93 rc=0\n")
    assert wp.metric(body, m.regex) == pytest.approx(11.524154064)
    ran = {"error": None, "steps": {"encode": {"text": body, "elapsed": secs, "rc": rc}}}
    assert mw.values_of(wl, ran, "quick") == ({"encode": pytest.approx(250 / 11.524154064)}, [])


def test_x264_parser_on_the_i386_guest():
    """The i386 userspace on qemu-x86 6.12-i386: the same pipeline (the plugins found under
    /usr/lib/i386-linux-gnu), "Execution ended after 0:00:10.546600603"."""
    wl = wm.load_all(["x264"])["x264"]
    text = capture("gst-x264enc-guest-i386.txt")
    assert wp.metric(text, metric_of(wl, "encode").regex) == pytest.approx(10.546600603)


def test_x264_parser_after_gstreamers_position_lines():
    """On a terminal without --no-position, gst-launch-1.0 writes its position ("0:00:03.8 /
    0:00:04.0 (95.0 %)") without newlines before EOS; the clock times there are not the one."""
    m = metric_of(wm.load_all(["x264"])["x264"], "encode")
    text = capture("gst-x264enc-position-guest-armhf.txt")
    assert "0:00:03.8 / 0:00:04.0 (95.0 %)Got EOS" in text
    assert wp.metric(text, m.regex) == pytest.approx(4.833159776)  # "Execution ended after 0:00:04.833159776"


def test_x264_count_is_the_number_of_frames_the_input_has():
    """The metric's count (frames) is the number of frames in the generated clip, in both modes."""
    wl = wm.load_all(["x264"])["x264"]
    (clip,) = wl.input
    frame = len(b"FRAME\n") + wi.VIDEO_W * wi.VIDEO_H * 3 // 2
    header = b"YUV4MPEG2 W176 H144 F25:1 Ip A1:1 C420jpeg\n"
    for mode in ("quick", "full"):
        n = clip.quick_bytes if mode == "quick" else clip.full_bytes
        assert (n // (wi.VIDEO_W * wi.VIDEO_H * 3 // 2)) == wl.count_of(metric_of(wl, "encode"), mode)
    v = wi.generate(clip, "quick")
    assert v.startswith(header) and len(v) == len(header) + wl.quick["frames"] * frame
    # the guest cuts the stream header (tail -c +44) and rawvideoparse skips each FRAME header
    cmds = dict((s.name, c) for s, c in wl.commands("quick", "x264"))
    assert f"tail -c +{len(header) + 1} " in cmds["prepare"]
    y, uv = wi.VIDEO_W * wi.VIDEO_H, wi.VIDEO_W * wi.VIDEO_H // 4
    assert f"frame-size={frame} " in cmds["encode"]
    assert f'"plane-offsets=<6,{6 + y},{6 + y + uv}>"' in cmds["encode"]


def test_x264_leaves_out_the_libraries_of_plugins_it_does_not_load():
    wl = wm.load_all(["x264"])["x264"]
    assert "gstreamer1.0-plugins-ugly" in wl.packages
    assert {"libx264-164", "libgstreamer1.0-0"}.isdisjoint(wl.without)
    assert {"libcdio19", "libvorbis0a"} <= set(wl.without)


@pytest.mark.parametrize(
    "file,expect",
    [
        # by hand: "Avr:      1316   100   1174   1173  |      13007   100   1052   1052", "Tot: 100 1113 1112"
        ("7zz-b-guest-armhf.txt", {"compress": 1173, "decompress": 1052, "total": 1112}),
        # three dictionary sizes (18, 19, 20): the average line, not the first size's
        # "Avr:      1225   100   1102   1102  |      15569   100   1275   1275", "Tot: 100 1188 1188"
        ("7zz-b-d20-guest-armhf.txt", {"compress": 1102, "decompress": 1275, "total": 1188}),
        # the i386 binary on qemu-x86 6.12-i386 (another banner, "QEMU TCG CPU version 2.5+"):
        # "Avr:      1435   100   1278   1279  |      14273   100   1155   1154", "Tot: 100 1216 1217"
        ("7zz-b-guest-i386.txt", {"compress": 1279, "decompress": 1154, "total": 1217}),
    ],
)
def test_7zip_bench_parser_on_the_output_the_guest_printed(file, expect):
    wl = wm.load_all(["7zip_bench"])["7zip_bench"]
    text = capture(file)
    assert {m.name: wp.metric(text, m.regex) for m in wl.metric} == expect
    assert all(m.unit == "MIPS" for m in wl.metric)


def test_7zip_bench_finds_nothing_in_a_run_cut_short():
    """A benchmark interrupted before its summary has dictionary lines but no Avr:/Tot: line."""
    wl = wm.load_all(["7zip_bench"])["7zip_bench"]
    cut = capture("7zz-b-d20-guest-armhf.txt").split("-----")[0]
    assert "18:       1299" in cut
    assert all(wp.metric(cut, m.regex) is None for m in wl.metric)


def test_john_bcrypt_parser_on_the_output_the_guest_printed():
    wl = wm.load_all(["john"])["john"]
    text = capture("john-bcrypt-guest-armhf.txt")
    # by hand: "Raw:	119 c/s real, 119 c/s virtual"
    assert wp.metric(text, metric_of(wl, "bcrypt").regex) == 119
    assert [s.name for s in wl.step] == ["md5crypt", "bcrypt"]


def test_john_reads_a_rate_below_100_with_its_decimal():
    """Below 100 c/s john prints one decimal: bcrypt on a busy host, "Raw:	42.0 c/s real"."""
    wl = wm.load_all(["john"])["john"]
    text = capture("john-bcrypt-decimal-guest-armhf.txt")
    assert wp.metric(text, metric_of(wl, "bcrypt").regex) == 42.0
    assert wp.metric(text, metric_of(wl, "md5crypt").regex) == 42.0  # the same reading for every format


def test_generated_pictures_and_clips_are_the_pixel_formula_byte_for_byte():
    """The vectorized generators give exactly the bytes of _pixel, one pixel at a time
    (the inputs, and so the workloads' numbers, stay the same on every host and version)."""
    side = 24
    want = bytearray()
    for y in range(side):
        for x in range(side):
            want += bytes(((x * 255 // side) & 255, (y * 255 // side) & 255, wi._pixel(x, y, 0, 7)))
    assert wi.image_ppm(3 * side * side, 7) == f"P6\n{side} {side}\n255\n".encode() + bytes(want)
    w, h = wi.VIDEO_W, wi.VIDEO_H
    clip = wi.video_y4m(3 * w * h * 3 // 2, 11)
    frames = clip.split(b"FRAME\n")[1:]
    assert len(frames) == 3
    for t, f in enumerate(frames):
        assert f[: w * h] == bytes(wi._pixel(x, y, t, 11) for y in range(h) for x in range(w))


def test_workloads_run_on_the_round_engine_with_until_ci_and_two_local_workers(tmp_path, monkeypatch):
    """workloads() goes through the round engine (rounds.run): with jobs=2 two local workers,
    and --until-ci, new for the workloads, adds rounds until every metric's difference is
    narrow (the same openssl output on both kernels: narrow at the first check, round 3)."""
    import recordfactory as rf
    from bringup import records
    from bringup.boot import rounds
    from bringup.model.board import load_board

    board = load_board("qemu-arm")
    logs = tmp_path / "logs"
    for k in board.kernels:
        records.write(logs / "qemu-arm" / k.id / "build.json", rf.build(k.id))
    monkeypatch.setattr(mw, "payload", lambda *a, **kw: ([], {"openssl": "3.0.20-1~deb12u2"}, {}))
    monkeypatch.setattr(mw.rootfs, "build", lambda *a, **kw: rf.rootfs("workloads", "qemu-arm", mode="quick"))
    monkeypatch.setattr(footprint, "measure_session", OpensslSession)
    seen: list[dict] = []
    real = rounds.run

    def spy(kernels, rule, boot, **kw):
        seen.append({**kw, "rule": rule})
        return real(kernels, rule, boot, **kw)

    monkeypatch.setattr(rounds, "run", spy)
    lines: list[str] = []
    res = mw.workloads(
        board,
        logs,
        tmp_path / "cache",
        names=["openssl"],
        runs=2,
        guard=False,
        say=lines.append,
        until_ci=5.0,
        max_rounds=8,
        jobs=2,
    )
    assert len(seen) == 1 and seen[0]["jobs"] == 2 and seen[0]["label"] == "  workload rounds"
    stopped = seen[0]["rule"].stopped
    assert stopped.startswith("95 % confidence intervals of 5 headline differences within ±5 % after 3 rounds")
    assert "  2 local workers: up to 2 boots at once" in lines
    rec = res["6.12"]
    # the other worker's round under way when the rule was met is finished and counts
    assert rec.runs in (3, 4) and rec.workloads["openssl"].metrics[0].rounds == list(range(1, rec.runs + 1))
    assert (rec.runs == 4) == stopped.endswith("(1 more round under way on other workers finished and counted)")


# --- a failed boot: the kernel is left out, the others are measured ---------------------


def test_a_console_that_goes_away_or_stays_silent_fails_the_boot():
    """QEMU dying in a step, or a target that prints nothing more (a stopped QEMU): the boot
    fails with the step and the cause; a step that only timed out leaves its workload not
    measured and the next one runs (test above)."""
    from bringup.errors import BootFailed

    wls = wm.load_all(["openssl", "sysbench"])
    dead = FakeShell({}, dies_at="openssl speed")
    with pytest.raises(BootFailed) as e:
        mw.run_in_boot(dead, wls, "quick", {}, say=lambda *_: None)
    assert str(e.value) == "step 'workload openssl, step speed': console closed: QEMU exited (killed by signal 9)"
    assert "^c" not in dead.commands  # nothing typed into a closed console
    hung = FakeShell({}, hangs_at="openssl speed")
    with pytest.raises(BootFailed) as e:
        mw.run_in_boot(hung, wls, "quick", {}, say=lambda *_: None)
    assert str(e.value) == (
        "step 'workload openssl, step speed' did not finish within 120s, and the console did not answer "
        "after it (step 'shell after an interrupted step' did not finish within 30s)"
    )
    assert hung.commands[-2] == "^c" and not any("sysbench" in c for c in hung.commands)


def _workloads_on_fake_guests(tmp_path, monkeypatch, dies: set[str]):
    """workloads() on qemu-arm (2 kernels, 1 round) with guests that answer openssl, and
    whose console closes in the middle of the step for the kernels in `dies`."""
    import recordfactory as rf
    from bringup import records
    from bringup.model.board import load_board

    board = load_board("qemu-arm")
    logs = tmp_path / "logs"
    for k in board.kernels:
        if not (logs / "qemu-arm" / k.id / "build.json").exists():
            records.write(logs / "qemu-arm" / k.id / "build.json", rf.build(k.id))
    monkeypatch.setattr(mw, "payload", lambda *a, **kw: ([], {"openssl": "3.0.20-1~deb12u2"}, {}))
    monkeypatch.setattr(mw.rootfs, "build", lambda *a, **kw: rf.rootfs("workloads", "qemu-arm", mode="quick"))

    class Session(OpensslSession):
        def __init__(self, step, kernel_id, run_dir, *a, **kw):
            super().__init__(step, kernel_id, run_dir)
            self.kernel_id = kernel_id
            # a QEMU target's process (QemuTarget.proc): a real one, ended, standing in for QEMU
            self.target = types.SimpleNamespace(proc=subprocess.Popen(["true"]))
            self.target.proc.wait()
            pids.append(self.target.proc.pid)

        def shell(self):
            sh = super().shell()
            sh.dies_at = "openssl speed" if self.kernel_id in dies else None
            return sh

    monkeypatch.setattr(footprint, "measure_session", Session)
    lines: list[str] = []
    pids: list[int] = []  # the stand-in QEMUs', one per boot in boot order

    def run():
        return mw.workloads(board, logs, tmp_path / "cache", names=["openssl"], runs=1, guard=False, say=lines.append)

    run.pids = pids
    return logs / "qemu-arm", run, lines


def test_a_kernel_whose_boot_fails_is_left_out_with_a_failure_record_and_the_next_is_measured(tmp_path, monkeypatch):
    from bringup import records
    from bringup.errors import BootFailed

    bdir, run, _ = _workloads_on_fake_guests(tmp_path, monkeypatch, dies=set())
    run()  # the earlier good records of both kernels
    good = {k: (bdir / k / "workloads.json").read_bytes() for k in ("5.10",)}
    bdir, run, lines = _workloads_on_fake_guests(tmp_path, monkeypatch, dies={"5.10"})
    with pytest.raises(BootFailed) as e:
        run()
    msg = str(e.value)
    assert msg.startswith("workloads: left out 5.10 (earlier records kept, failure records beside them): 5.10: ")
    assert "qemu-arm/5.10: workload run failed: step 'workload openssl, step speed': console closed: QEMU " in msg
    assert "(log: " in msg and "\n" not in msg
    assert f"/console.log, QEMU pid {run.pids[0]})" in msg  # 5.10 boots first: which QEMU it was
    assert (bdir / "5.10" / "workloads.json").read_bytes() == good["5.10"]  # never replaced
    fail = records.read(bdir / "5.10" / "workloads-failed.json", records.Failure)
    assert fail.step == "workloads" and fail.kernel == "5.10" and fail.kept == "workloads.json"
    assert fail.error in msg and fail.run is not None and fail.run.startswith("workload-runs/")
    assert any(x.startswith("  workloads set ") and x.endswith(": 6.12") for x in lines)
    man, problems = records.sets.check(bdir, "workloads")
    assert problems == [] and man is not None and "5.10/workloads-failed.json" in man.members
    assert man.members["6.12/workloads.json"].set == man.set != man.members["5.10/workloads.json"].set
    # the next good run lands 5.10 again and removes its failure record in the same set
    bdir, run, _ = _workloads_on_fake_guests(tmp_path, monkeypatch, dies=set())
    run()
    assert not (bdir / "5.10" / "workloads-failed.json").exists()
    man, problems = records.sets.check(bdir, "workloads")
    assert problems == [] and "5.10/workloads-failed.json" in man.removed
    assert man.members["5.10/workloads.json"].set == man.set
