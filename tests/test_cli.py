"""Every command's arguments reach its function: run each against an empty logs
directory and expect the one-line error that names what is missing.  Output
that cannot be written ends bringup quietly or in one line."""

import dataclasses
import os
import subprocess
import sys

import pytest

from bringup import cli
from bringup.cli import common
from conftest import run_cli


@pytest.fixture
def empty_logs(tmp_path, monkeypatch):
    monkeypatch.setenv("BRINGUP_LOGS", str(tmp_path / "logs"))
    return tmp_path


@pytest.mark.parametrize(
    "argv, message",
    [
        (["boot-timing", "-b", "qemu-arm", "--runs", "1", "--root", "nfs"], "no build record"),
        (["boot-timing", "-b", "qemu-arm", "--path", "direct", "--root", "ramdisk"], "no build record"),
        (["footprint-report", "-b", "qemu-arm", "--lmbench", "none", "--lmbench-runs", "2"], "no build record"),
        (["report", "-b", "qemu-arm"], "no records under"),
        (["build-report", "-b", "qemu-arm"], "no build records"),
        (["compare", "qemu-arm/5.10", "qemu-arm/6.12"], "is neither a build.json"),
        (["show", "no-such-board"], "no-such-board"),
    ],
)
def test_commands_fail_in_one_line(empty_logs, capsys, argv, message):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("bringup: error: ") and message in err[0], err


def test_footprint_rejects_zero_lmbench_runs(empty_logs, capsys):
    assert cli.main(["footprint-report", "-b", "qemu-arm", "--lmbench-runs", "0"]) == 2
    assert "argument --lmbench-runs: 0 is outside 1..100" in capsys.readouterr().err


def test_study_arguments_reach_the_study(empty_logs, monkeypatch, capsys):
    monkeypatch.delenv("BRINGUP_HOST_GUARD", raising=False)
    from bringup import study

    seen = {}

    def fake_run(board, logs, cache, plan, say):
        seen.update(dataclasses.asdict(plan), say=say, board=board.name)
        from bringup.errors import BringupError

        raise BringupError("stop here")

    monkeypatch.setattr(study, "run", fake_run)
    assert (
        cli.main(
            [
                "study",
                "-b",
                "qemu-arm",
                "--runs",
                "3",
                "--root",
                "nfs",
                "--lmbench",
                "none",
                "--lmbench-runs",
                "4",
                "--path",
                "direct",
                "--force",
                "--workloads",
                "none",
                "--workload-runs",
                "2",
                "--clock",
                "host",
                "--build-cost-runs",
                "2",
            ]
        )
        == 2
    )
    assert seen == {
        "board": "qemu-arm",
        "runs": 3,
        "path": "direct",
        "lmbench": "none",
        "jobs": None,
        "force": True,
        "lmbench_source": None,
        "lmbench_runs": 4,
        "root": "nfs",
        "say": common.say,
        "guard": True,  # BRINGUP_HOST_GUARD unset and the host clock: the host-load guard is on
        "places": [],  # no --places: the board file's
        "workloads": [],  # --workloads none: no workloads step
        "workload_runs": 2,
        "workload_mode": "quick",
        "boot_jobs": 1,  # the host clock: one boot at a time (JOBS is the builds' make -j)
        "build_cost": True,  # make all measures the cold build cost by default
        "build_cost_runs": 2,
    }
    # BUILD_COST=0 (--build-cost-if=0, as make passes it) leaves it out
    seen.clear()
    assert cli.main(["study", "-b", "qemu-arm", "--build-cost-if=0"]) == 2
    assert seen["build_cost"] is False and seen["build_cost_runs"] == study.StudyPlan().build_cost_runs


CPUS = os.cpu_count() or 1


@pytest.mark.parametrize(
    ("clock", "expected"),
    [
        # qemu-arm's own clock: one boot, one footprint round and one workload round per kernel, no guard
        # and one boot per CPU at a time (the round engine's local workers)
        (
            [],
            {
                "clock": "instructions",
                "runs": 1,
                "lmbench_runs": 1,
                "workload_runs": 1,
                "guard": False,
                "boot_jobs": CPUS,
            },
        ),
        (["--clock", "instructions"], {"clock": "instructions", "runs": 1, "lmbench_runs": 1, "workload_runs": 1}),
        (
            ["--clock", "host"],
            {"clock": "host", "runs": 5, "lmbench_runs": 5, "workload_runs": 3, "guard": True, "boot_jobs": 1},
        ),
        (["--jobs", "3"], {"clock": "instructions", "boot_jobs": 3, "jobs": 3}),
        (["--clock", "host", "--jobs", "3"], {"clock": "host", "boot_jobs": 1, "jobs": 3}),
    ],
)
def test_the_study_s_rounds_and_guard_follow_the_clock(empty_logs, monkeypatch, clock, expected):
    monkeypatch.delenv("BRINGUP_HOST_GUARD", raising=False)
    from bringup import study
    from bringup.errors import BringupError
    from bringup.model.clocks import clock_of

    seen = {}

    def fake_run(board, logs, cache, plan, say):
        seen.update(dataclasses.asdict(plan), clock=clock_of(board).kind)
        raise BringupError("stop here")

    monkeypatch.setattr(study, "run", fake_run)
    assert cli.main(["study", "-b", "qemu-arm", *clock]) == 2
    assert {k: seen[k] for k in expected} == expected
    # rounds asked for are rounds run, on either clock
    assert cli.main(["study", "-b", "qemu-arm", *clock, "--runs", "4", "--lmbench-runs", "3"]) == 2
    assert (seen["runs"], seen["lmbench_runs"]) == (4, 3)


@pytest.mark.parametrize("command", ["boot-timing", "footprint-report", "workloads", "study", "aa"])
def test_the_instruction_clock_on_a_board_without_qemu_is_one_line_before_any_work(tmp_path, command):
    p = run_cli(
        command,
        "-b",
        "labgrid-example",
        "--clock",
        "instructions",
        env_extra={"BRINGUP_LOGS": str(tmp_path / "logs"), "BRINGUP_CACHE": str(tmp_path / "cache")},
    )
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert p.stderr == (
        "bringup: error: --clock instructions: board labgrid-example is not a QEMU board; only QEMU has an "
        "instruction clock (a real board runs on its own time)\n"
    )
    assert not (tmp_path / "logs").exists() and not (tmp_path / "cache").exists()


@pytest.mark.parametrize(
    "args, message",
    [
        (["boot-timing", "-b", "qemu-arm", "--clock", "wall"], "argument --clock: invalid choice: 'wall'"),
        (["boot-timing", "-b", "qemu-arm", "--runs", "0"], "argument --runs/-n: 0 is outside 1..1000"),
        (["boot-timing", "-b", "qemu-arm", "--runs", "-1"], "argument --runs/-n: -1 is outside 1..1000"),
        (["boot-timing", "-b", "qemu-arm", "--timeout-factor", "nan"], "argument --timeout-factor: nan is outside"),
        (["boot-timing", "-b", "qemu-arm", "--until-ci", "-5"], "argument --until-ci: -5 is outside"),
        (["boot-timing", "-b", "qemu-arm", "--max-runs", "-3"], "argument --max-rounds/--max-runs: -3 is outside"),
        (["footprint-report", "-b", "qemu-arm", "--until-ci", "0"], "argument --until-ci: 0 is outside"),
        (["footprint-report", "-b", "qemu-arm", "--max-rounds", "0"], "argument --max-rounds: 0 is outside"),
        (["compare", "a", "b", "--top", "-5"], "argument --top: -5 is outside"),
        (["study", "-b", "qemu-arm", "--runs", "0"], "argument --runs/-n: 0 is outside"),
        (
            ["footprint-report", "-b", "qemu-arm", "--lmbench-runs", "x"],
            "argument --lmbench-runs: 'x' is not a whole number",
        ),
        (["build-all", "-b", "qemu-arm", "-j", "0"], "argument -j/--jobs: 0 is outside 1..1024"),
        (["boot-timing", "-b", "qemu-arm", "--jobs", "0"], "argument --jobs/-j: 0 is outside 1..1024"),
        (["footprint-report", "-b", "qemu-arm", "--jobs", "0"], "argument --jobs/-j: 0 is outside 1..1024"),
        (["workloads", "-b", "qemu-arm", "--jobs", "x"], "argument --jobs/-j: 'x' is not a whole number"),
    ],
)
def test_bad_command_line_values_are_one_line_before_any_work(tmp_path, args, message):
    p = run_cli(*args, env_extra={"BRINGUP_LOGS": str(tmp_path / "logs"), "BRINGUP_CACHE": str(tmp_path / "cache")})
    assert p.returncode == 2 and message in p.stderr, p.stderr
    assert p.stderr.count("\n") == 1 and "Traceback" not in p.stderr
    assert not (tmp_path / "logs").exists() and not (tmp_path / "cache").exists()


def _bringup(*args, stdout):
    return subprocess.run(
        [sys.executable, "-m", "bringup", *args], stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=60
    )


@pytest.mark.parametrize("unbuffered", ["1", ""])
@pytest.mark.parametrize("argv", [["boards"], ["doc", "board-files"]])
def test_a_reader_that_went_away_ends_bringup_quietly(argv, unbuffered, monkeypatch):
    """`bringup boards | head -1`: no traceback, the status of a tool killed by SIGPIPE."""
    monkeypatch.setenv("PYTHONUNBUFFERED", unbuffered)
    r, w = os.pipe()
    os.close(r)  # the reader is gone before bringup writes anything
    try:
        p = _bringup(*argv, stdout=w)
    finally:
        os.close(w)
    assert (p.returncode, p.stderr) == (141, "")


def test_output_that_cannot_be_written_is_one_line():
    with open("/dev/full", "w") as full:
        p = _bringup("doc", "board-files", stdout=full)
    assert p.returncode == 1
    assert p.stderr == "bringup: error: cannot write to standard output: No space left on device\n"


def test_parse_of_a_missing_file_is_one_line(tmp_path, capsys):
    assert cli.main(["parse", "bootlog", str(tmp_path / "nope.log")]) == 2
    err = capsys.readouterr().err
    assert err == f"bringup: error: {tmp_path / 'nope.log'}: no such file\n"


def test_build_report_leaves_out_a_bad_record(empty_logs, capsys):
    import recordfactory as rf
    from bringup import records

    d = empty_logs / "logs" / "qemu-arm"
    records.write(d / "5.10" / "build.json", rf.build("5.10"))
    (d / "6.12").mkdir(parents=True)
    (d / "6.12" / "build.json").write_text('{"schema": "bringup.build/1", "status": "ok"')
    assert cli.main(["build-report", "-b", "qemu-arm"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "Build results for qemu-arm (kernels: 5.10 = 5.10.1)"
    assert out[-1].startswith(f"left out: {d / '6.12' / 'build.json'}: not valid JSON (truncated?): ")
    assert cli.main(["build-report", "-b", "qemu-arm", "--format", "csv"]) == 0
    io = capsys.readouterr()
    assert io.out.startswith("metric,unit,5.10\r\n")
    assert (
        io.err.startswith(f"bringup: left out {d / '6.12' / 'build.json'}: not valid JSON") and io.err.count("\n") == 1
    )


def test_study_prints_the_summary_from_the_report_model(empty_logs, monkeypatch, capsys, tmp_path):
    from bringup import study
    from bringup.report import page

    model = {
        "findings": [
            {"kernel": "6.12", "against": "5.10", "sections": [("Build", [{"claim": "build time: 25 % slower"}])]}
        ]
    }
    rep = page.Report(index=tmp_path / "index.html", markdown=tmp_path / "report.md", model=model)
    monkeypatch.setattr(study, "run", lambda *a, **kw: rep)
    assert cli.main(["study", "-b", "qemu-arm"]) == 0
    err = capsys.readouterr().err
    assert "Management summary: 6.12 against 5.10\nBuild:\n- build time: 25 % slower\n" in err
    assert not (tmp_path / "report.md").exists(), "the summary comes from the model, not from report.md"


@pytest.mark.parametrize("flag", ["--csv", "--json"])
@pytest.mark.parametrize("where, words", [("dir", "is a directory"), ("missing", "does not exist")])
def test_compare_output_that_cannot_be_a_file_is_one_line_before_work(tmp_path, flag, where, words):
    out = tmp_path if where == "dir" else tmp_path / "nowhere" / "x.out"
    p = run_cli("compare", "a", "b", flag, str(out), env_extra={"BRINGUP_LOGS": str(tmp_path / "logs")})
    assert p.returncode == 2 and words in p.stderr and p.stderr.count("\n") == 1, p.stderr
    assert not (tmp_path / "nowhere").exists() and not list(tmp_path.glob(".*"))


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["footprint-report", "-b", "qemu-arm", "--until-ci", "--max-rounds", "7"], {"until_ci": 5.0, "max_rounds": 7}),
        (["footprint-report", "-b", "qemu-arm", "--until-ci", "2.5"], {"until_ci": 2.5}),
        (["footprint-report", "-b", "qemu-arm"], {}),
        (["boot-timing", "-b", "qemu-arm", "--until-ci", "--max-runs", "9"], {"until_ci": 5.0, "max_rounds": 9}),
        (["boot-timing", "-b", "qemu-arm", "--until-ci", "3", "--max-rounds", "4"], {"until_ci": 3.0, "max_rounds": 4}),
    ],
)
def test_until_ci_reaches_the_measurement(empty_logs, monkeypatch, capsys, argv, expected):
    """--until-ci with no width takes stats.UNTIL_CI_PCT; --max-rounds (boot-timing also
    --max-runs) is passed on only when given, so the measurement's default applies."""
    from bringup import stats
    from bringup.boot import timing as boottiming
    from bringup.builder import rootfs
    from bringup.errors import BringupError
    from bringup.measure import footprint

    assert stats.UNTIL_CI_PCT == 5.0 and stats.UNTIL_CI_MAX_ROUNDS == 20  # as the help says
    seen = {}

    def fake(*a, **kw):
        seen.update({k: v for k, v in kw.items() if k in ("until_ci", "max_rounds")})
        raise BringupError("stop here")

    monkeypatch.setattr(footprint, "footprint", fake)
    monkeypatch.setattr(boottiming, "plan", lambda *a, **kw: {})
    monkeypatch.setattr(rootfs, "build", lambda *a, **kw: type("Rd", (), {"file": "x", "ref": lambda self: None})())
    monkeypatch.setattr(boottiming, "boot_timing", fake)
    assert cli.main(argv) == 2
    assert "stop here" in capsys.readouterr().err
    assert seen == expected
    sub = cli.build_parser()._subparsers._group_actions[0].choices[argv[0]]  # type: ignore[union-attr]
    help_text = " ".join(sub.format_help().split())
    assert "(default width 5)" in help_text and "(default 20)" in help_text


def test_aa_passes_its_root_on(empty_logs, monkeypatch, capsys):
    from bringup import aa
    from bringup.errors import BringupError

    seen = {}

    def fake_run(board, kernel, logs, cache, plan, say):
        seen.update(dataclasses.asdict(plan), kernel=kernel)
        raise BringupError("stop here")

    monkeypatch.setattr(aa, "run", fake_run)
    assert cli.main(["aa", "-b", "qemu-arm", "--root", "nfs", "--runs", "3"]) == 2
    assert seen["root"] == "nfs" and seen["runs"] == 3 and seen["kernel"] == "6.12"
    assert cli.main(["aa", "-b", "qemu-arm"]) == 2
    assert seen["root"] == "ramdisk"


@pytest.mark.parametrize("cmd", ["boot-timing", "footprint-report", "workloads"])
def test_jobs_with_the_guard_asked_for_or_on_a_labgrid_board_is_one_line_before_any_work(tmp_path, cmd):
    """On the host clock, --jobs 2 turns the host-load guard off when BRINGUP_HOST_GUARD is not
    set; asked for with BRINGUP_HOST_GUARD=1 it is refused, and so is --jobs on a labgrid board
    (its places already run in parallel): one line naming the option, before anything is built
    or booted.  On the instruction clock the guard is not used, so nothing is refused for it."""
    env = {"BRINGUP_LOGS": str(tmp_path / "logs"), "BRINGUP_CACHE": str(tmp_path / "cache")}
    guard = {**env, "BRINGUP_HOST_GUARD": "1"}
    p = run_cli(cmd, "-b", "qemu-arm", "--clock", "host", "--jobs", "2", env_extra=guard)
    assert p.returncode != 0 and "--jobs 2: the host-load guard judges one run at a time" in p.stderr, p.stderr
    assert p.stderr.count("\n") == 1 and "Traceback" not in p.stderr
    p = run_cli(cmd, "-b", "qemu-arm", "--clock", "instructions", "--jobs", "2", env_extra=guard)
    assert "host-load guard" not in p.stderr and "no build record" in p.stderr, p.stderr
    p = run_cli(cmd, "-b", "labgrid-example", "--jobs", "2", env_extra={**env, "LG_COORDINATOR": "127.0.0.1:1"})
    assert p.returncode != 0 and "--jobs 2: the board is a labgrid board" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr
    assert not (tmp_path / "logs").exists() and not (tmp_path / "cache").exists()


def test_aa_boots_each_arm_twice_at_least_on_the_instruction_clock(empty_logs, monkeypatch):
    """An A/A or A/B check needs two boots per arm to see the spread within an arm: on the
    instruction clock (one boot per kernel by default) it asks for 2; rounds given are kept."""
    from bringup import aa
    from bringup.errors import BringupError

    seen = {}

    def fake_run(board, kernel, logs, cache, plan, say):
        seen.update(dataclasses.asdict(plan))
        raise BringupError("stop here")

    monkeypatch.setattr(aa, "run", fake_run)
    assert cli.main(["aa", "-b", "qemu-arm"]) == 2
    assert (seen["runs"], seen["lmbench_runs"], seen["delay_ms"], seen["guard"]) == (2, 2, 0, False)
    assert cli.main(["aa", "-b", "qemu-arm", "--clock", "host"]) == 2
    assert (seen["runs"], seen["lmbench_runs"]) == (5, 5)
    assert cli.main(["aa", "-b", "qemu-arm", "--runs", "1", "--lmbench-runs", "1", "--delay-ms", "250"]) == 2
    assert (seen["runs"], seen["lmbench_runs"], seen["delay_ms"]) == (1, 1, 250)
