"""The build cost (measure/buildcost.py) against fake Kbuild trees: scratch builds that
never touch the study's build, the record, reuse by build key, rounds interleaved; and
its statistics and wording (report/buildcost.py) on records made here."""

import json
import tarfile

import pytest

import recordfactory as rf
from bringup import records
from bringup.builder import kernel as build
from bringup.errors import BringupError, BuildFailed
from bringup.measure import buildcost
from bringup.model.board import load_board
from bringup.records.buildcost import BuildCost
from bringup.report import buildcost as costreport
from bringup.report import page
from conftest import make_fake_tree, run_cli, write_board


def two_kernel_board(env, name="fakecost"):
    ks = []
    for kernel_id, version in (("k1", "6.1.0"), ("k2", "6.6.0")):
        tree = make_fake_tree(env["tmp"] / f"linux-{version}", version)
        tb = env["tmp"] / f"linux-{version}.tar.gz"
        with tarfile.open(tb, "w:gz") as tf:
            tf.add(tree, arcname=f"linux-{version}")
        ks.append({"id": kernel_id, "source": {"tarball": str(tb)}, "defconfig": "tinyconfig"})
    boards = env["tmp"] / "boards"
    write_board(boards, name, ks)
    return load_board(name, boards=boards)


def quiet(_msg):
    return None


def test_cold_runs_leave_the_study_build_alone_and_write_a_record(env):
    board = two_kernel_board(env)
    built = build.build_all(board, env["logs"], env["cache"], say=quiet)
    study = {b.record.kernel: b.file.read_bytes() for b in built}
    rec, f, reused = buildcost.measure(board, env["logs"], env["cache"], runs=2, say=quiet)
    assert not reused and f == env["logs"] / "fakecost" / "build-cost.json"
    for b in built:  # the study's records are byte for byte what they were
        assert b.file.read_bytes() == study[b.record.kernel]
    assert list(rec.kernels) == ["k1", "k2"] and rec.rounds == 2 and rec.ccache is False
    assert rec.order == {"1": ["k1", "k2"], "2": ["k2", "k1"]}  # interleaved: A B, B A
    for b in built:
        kc = rec.kernels[b.record.kernel]
        assert kc.build_key == b.record.key
        assert kc.config_matches_study is True
        assert kc.study_build is not None and kc.study_build.jobs == b.record.jobs
        assert [r.round for r in kc.runs] == [1, 2]
        assert kc.targets == ["zImage"]
        for r in kc.runs:
            assert r.cpu == pytest.approx(r.user + r.sys, abs=0.002)
            assert [s.name for s in r.steps] == ["make zImage"]
    # the scratch directories are gone; the last run's log of each kernel is kept
    assert [p.name for p in (env["cache"] / "build-cost" / "fakecost").iterdir() if p.is_dir()] == ["results"]
    assert (env["logs"] / "fakecost" / "build-cost" / "k1" / "build.log").exists()
    assert records.read(f, BuildCost) == rec


def test_a_second_measurement_of_the_same_builds_is_reused_and_force_measures_again(env):
    board = two_kernel_board(env)
    first, f, _ = buildcost.measure(board, env["logs"], env["cache"], runs=1, say=quiet)
    again, _, reused = buildcost.measure(board, env["logs"], env["cache"], runs=1, say=quiet)
    assert reused and again == first
    # another logs directory: copied from the cache's store, not measured
    other = env["tmp"] / "other-logs"
    lines = []
    copied, f2, reused2 = buildcost.measure(board, other, env["cache"], runs=1, say=lines.append)
    assert reused2 and copied == first and f2.exists()
    assert any("measured before" in x for x in lines)
    # more rounds than recorded: measured again
    more, _, reused3 = buildcost.measure(board, env["logs"], env["cache"], runs=2, say=quiet)
    assert not reused3 and more.rounds == 2
    forced, _, reused4 = buildcost.measure(board, env["logs"], env["cache"], runs=2, force=True, say=quiet)
    assert not reused4 and forced.created != more.created


def test_a_failed_run_keeps_the_last_good_record(env):
    board = two_kernel_board(env)
    good, f, _ = buildcost.measure(board, env["logs"], env["cache"], runs=1, say=quiet)
    before = f.read_bytes()
    (env["cache"] / "src").exists()
    # break k2's tree where the scratch builds read it: make zImage fails
    tree = next(p for p in (env["cache"] / "src").rglob("linux-6.6.0") if (p / "fake.mk").exists())
    (tree / "fake.mk").write_text(
        (tree / "fake.mk").read_text().replace("zImage:", "zImage: no-such-prerequisite\n\nnothing:")
    )
    with pytest.raises(BuildFailed, match=r"k2 failed at 'make zImage'"):
        buildcost.measure(board, env["logs"], env["cache"], runs=1, force=True, say=quiet)
    assert f.read_bytes() == before
    assert (env["logs"] / "fakecost" / "build-cost" / "k2" / "build-failed.log").exists()


def test_a_config_is_compared_by_its_settings_not_kconfigs_dated_header():
    a = (
        "#\n# Automatically generated make config: don't edit\n# Fri Nov 27 13:46:51 2026\n#\n"
        "CONFIG_ARM=y\n# CONFIG_SMP is not set\n"
    )
    b = a.replace("13:46:51", "17:02:10")
    assert buildcost.config_sha256(a) == buildcost.config_sha256(b)
    assert buildcost.config_sha256(a) != buildcost.config_sha256(a.replace("# CONFIG_SMP is not set", "CONFIG_SMP=y"))
    assert buildcost.config_sha256(a) != buildcost.config_sha256(a.replace("CONFIG_ARM=y", "CONFIG_ARM=n"))


def test_a_study_config_with_other_settings_is_said(env):
    board = two_kernel_board(env)
    built = build.build_all(board, env["logs"], env["cache"], say=quiet)
    cfg = env["logs"] / "fakecost" / "k1" / built[0].record.artifacts["config"]
    cfg.write_text(cfg.read_text() + "CONFIG_SOMETHING_ELSE=y\n")
    rec, _, _ = buildcost.measure(board, env["logs"], env["cache"], runs=1, say=quiet)
    assert rec.kernels["k1"].config_matches_study is False and rec.kernels["k2"].config_matches_study is True


def test_the_aa_board_is_one_kernel_twice(env):
    board = two_kernel_board(env)
    aa = buildcost.aa_board(board, "k2")
    assert aa.name == "fakecost-aa" and [k.id for k in aa.kernels] == ["a", "b"]
    plans = buildcost.plan(aa, env["logs"], env["cache"], study=("fakecost", "k2"), say=quiet)
    assert plans[0].key == plans[1].key is not None
    with pytest.raises(BringupError, match="no kernel"):
        buildcost.aa_board(board, "k9")


# --- statistics and wording, on records made here -------------------------------------------


def record(
    cpu: dict[str, list[float]], wall: dict[str, list[float]] | None = None, redone=(), keys=None, board="b"
) -> BuildCost:
    wall = wall or cpu
    kernels = {}
    n = len(next(iter(cpu.values())))
    for k, vals in cpu.items():
        runs = []
        for i, v in enumerate(vals, 1):
            runs.append(
                {
                    "round": i,
                    "attempt": 0,
                    "redone": (k, i) in redone,
                    "started": "2026-11-27T00:00:00+00:00",
                    "real": wall[k][i - 1],
                    "user": v * 0.9,
                    "sys": v * 0.1,
                    "cpu": v,
                    "configure_real": 1.0,
                    "steps": [],
                    "host": None,
                }
            )
        kernels[k] = {
            "build_key": (keys or {}).get(k),
            "version": k,
            "config_sha256": "0" * 64,
            "config_matches_study": None,
            "targets": ["zImage"],
            "runs": runs,
            "study_build": {"real": 100.0, "user": 80.0, "sys": 10.0, "jobs": 2, "ccache_hit_rate": 0.46},
        }
    return records.validate(
        {
            "board": board,
            "created": "2026-11-27T00:00:00+00:00",
            "finished": "2026-11-27T00:00:00+00:00",
            "jobs": 2,
            "ccache": False,
            "gcc": {k: "gcc 12" for k in cpu},
            "rounds": n,
            "order": {str(i): list(cpu) for i in range(1, n + 1)},
            "stopped": f"{n} rounds, as asked",
            "until_ci_pct": None,
            "guard": False,
            "scratch": "/tmp",
            "kernels": kernels,
        },
        BuildCost,
        "build-cost.json",
    )


def test_a_real_difference_is_claimed_with_its_interval_in_seed_002s_voice():
    rec = record(
        {"2.6.32": [140.0, 141.5, 139.2], "6.12": [431.0, 437.5, 428.9]},
        {"2.6.32": [75.0, 90.0, 80.0], "6.12": [230.0, 250.0, 228.0]},
    )
    (c,) = costreport.compare(rec)
    assert c["cpu"]["claimed"] and c["real"]["claimed"]
    lo, hi = c["cpu"]["ci_pct"]
    assert lo < c["cpu"]["pct"] < hi and lo > 200 and hi < 215
    line = costreport.line(c)
    assert line.startswith("2.6.32 → 6.12: build +")
    assert "% CPU (95 % interval +" in line and "% wall (95 % interval" in line and line.endswith("3 rounds")
    assert costreport.claims(rec)


def test_the_same_kernel_twice_claims_nothing():
    rec = record({"a": [140.0, 141.5, 139.2], "b": [140.9, 139.8, 140.1]})
    (c,) = costreport.compare(rec)
    assert not c["cpu"]["claimed"] and c["cpu"]["ci_pct"][0] < 0 < c["cpu"]["ci_pct"][1]
    assert costreport.claims(rec) == []
    assert "CPU no significant difference" in costreport.line(c)


def test_the_family_is_corrected():
    # p just under 0.05 for one test of a family of four: not claimed once corrected
    rec = record({"a": [100.0, 100.0, 100.0], "b": [101.0, 103.0, 102.0], "c": [100.0, 100.5, 99.5]})
    cs = costreport.compare(rec)
    raw = [c[m]["p"] for c in cs for m in ("cpu", "real")]
    qs = [c[m]["q"] for c in cs for m in ("cpu", "real")]
    assert all(q >= p for p, q in zip(raw, qs, strict=True))
    assert any(q > p for p, q in zip(raw, qs, strict=True))


def test_one_round_is_not_tested_and_redone_runs_do_not_count():
    rec = record({"a": [100.0], "b": [150.0]})
    (c,) = costreport.compare(rec)
    assert c["cpu"]["p"] is None and not c["cpu"]["claimed"]
    assert costreport.line(c) == "a → b: build +50 % CPU, +50 % wall (1 round: not tested)"
    rec2 = record({"a": [100.0, 100.0, 100.0], "b": [150.0, 999.0, 151.0]}, redone={("b", 2)})
    assert costreport.values(rec2, "b", "cpu") == {1: 150.0, 3: 151.0}
    assert costreport.compare(rec2)[0]["rounds"] == 2


def test_the_rendered_table_says_which_time_is_which():
    text = costreport.render(record({"a": [100.0, 101.0], "b": [150.0, 151.0]}))
    assert "cold CPU (user+sys)" in text and "study build (ccache)" in text and "46 %" in text
    assert "not comparable between kernels" in text


def test_the_record_refuses_what_a_writer_never_writes(tmp_path):
    rec = record({"a": [100.0], "b": [150.0]})
    data = json.loads(rec.model_dump_json(by_alias=True))
    data["kernels"]["a"]["runs"][0]["cpu"] = -1
    f = tmp_path / "build-cost.json"
    f.write_text(json.dumps(data))
    with pytest.raises(records.RecordError, match=r"build-cost.json: field 'kernels.a.runs\[0\].cpu': -1"):
        records.read(f, BuildCost)


def test_the_command_refuses_kernel_without_aa_before_any_work(env):
    p = run_cli("build-cost", "--board", "qemu-versatilepb", "--kernel", "6.12")
    assert p.returncode != 0 and "only with --aa" in p.stderr and len(p.stderr.strip().splitlines()) == 1


# --- the report: the build table and the summary ------------------------------------------


@pytest.fixture
def report_logs(tmp_path):
    logs = tmp_path / "logs"
    for k in ("5.10", "6.12"):
        records.write(logs / "qemu-arm" / k / "build.json", rf.build(k))
    return logs


def write_cost(logs, keys):
    rec = record(
        {"5.10": [330.0, 332.5, 329.0], "6.12": [431.0, 437.5, 428.9]},
        {"5.10": [180.0, 200.0, 170.0], "6.12": [240.0, 262.0, 228.0]},
        keys=keys,
        board="qemu-arm",
    )
    records.write(logs / "qemu-arm" / "build-cost.json", rec)


def test_the_report_shows_the_cold_cost_beside_the_study_build_and_tests_it(report_logs):
    write_cost(report_logs, {k: rf.key(f"qemu-arm/{k}") for k in ("5.10", "6.12")})
    m = page.collect(load_board("qemu-arm"), report_logs)
    labels = [r["label"] for r in m["build_table"]]
    assert labels[:4] == ["cold CPU, no ccache (user+sys)", "cold user", "cold sys", "cold wall, no ccache"]
    assert "real" in labels and "ccache hits" in labels  # the study build's own rows stay
    cpu = m["build_table"][0]
    assert [c["value"] for c in cpu["cells"]] == [330.0, 431.0]
    assert 29 < cpu["deltas"][0] < 32
    claims = [it["claim"] for f in m["findings"] for _, items in f["sections"] for it in items]
    cold = next(c for c in claims if c.startswith("build CPU time, cold (no ccache)"))
    assert "slower" in cold and "n=3 rounds" in cold
    study = next(c for c in claims if c.startswith("build time (the study's build, through ccache)"))
    assert "the cold builds above compare" in study


def test_a_build_cost_of_other_builds_is_left_out_in_one_line(report_logs):
    write_cost(report_logs, {"5.10": rf.key("qemu-arm/5.10"), "6.12": rf.key("an older 6.12")})
    m = page.collect(load_board("qemu-arm"), report_logs)
    assert m["build_cost"] is None and m["build_table"][0]["label"] == "real"
    assert any("build-cost.json: kernel 6.12 was measured from another build" in x for x in m["left_out"])


def test_builds_at_once_keep_the_rounds_and_refuse_the_guard(env):
    board = two_kernel_board(env)
    rec, _, _ = buildcost.measure(board, env["logs"], env["cache"], runs=2, parallel=2, say=quiet)
    assert rec.parallel == 2 and rec.order == {"1": ["k1", "k2"], "2": ["k2", "k1"]}
    assert all([r.round for r in kc.runs] == [1, 2] for kc in rec.kernels.values())
    with pytest.raises(BringupError, match="host-load guard judges one run at a time"):
        buildcost.measure(board, env["logs"], env["cache"], runs=2, parallel=2, guard=True, force=True, say=quiet)


def test_the_study_measures_the_build_cost_after_the_builds_unless_told_not_to(tmp_path, monkeypatch):
    from bringup import study

    board = load_board("qemu-arm")
    calls: list = []
    rec = record({"5.10": [330.0, 332.0, 329.0], "6.12": [431.0, 437.0, 429.0]}, board="qemu-arm")
    monkeypatch.setattr(study.build, "build_all", lambda *a, **kw: calls.append("build"))

    def measure(b, logs, cache, **kw):
        calls.append(("cost", kw["runs"], kw["jobs"]))
        return rec, tmp_path / "build-cost.json", False

    monkeypatch.setattr(study.buildcost, "measure", measure)
    for step in ("boot_fresh", "footprint_fresh"):
        monkeypatch.setattr(study, step, lambda *a, **kw: None)
    monkeypatch.setattr(study.report, "write", lambda *a, **kw: calls.append("report"))
    said: list[str] = []
    study.run(
        board,
        tmp_path,
        tmp_path,
        study.StudyPlan(workloads=[], jobs=2, build_cost=True, build_cost_runs=4),
        say=said.append,
    )
    assert calls == ["build", ("cost", 4, 2), "report"]
    assert any(s.startswith("  5.10 → 6.12: build +") and "% CPU (95 % interval" in s for s in said)
    calls.clear()
    study.run(board, tmp_path, tmp_path, study.StudyPlan(workloads=[], build_cost=False), say=said.append)
    assert calls == ["build", "report"]


def test_build_report_prints_the_cold_rows_and_says_which_is_which(report_logs, monkeypatch):
    monkeypatch.setenv("BRINGUP_LOGS", str(report_logs))
    write_cost(report_logs, {k: rf.key(f"qemu-arm/{k}") for k in ("5.10", "6.12")})
    out = run_cli("build-report", "--board", "qemu-arm", check=True).stdout
    row = next(x for x in out.splitlines() if x.startswith("| cold CPU, no ccache (user+sys)"))
    assert "330.0s" in row and "431.0s" in row and "+ 31 %" in row
    assert "real/user/sys below: the study's own build" in out and "3 rounds" in out
    # a build cost of other builds is not shown beside these
    write_cost(report_logs, {"5.10": rf.key("qemu-arm/5.10"), "6.12": rf.key("an older 6.12")})
    out = run_cli("build-report", "--board", "qemu-arm", check=True).stdout
    assert "cold CPU" not in out
