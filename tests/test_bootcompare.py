"""bringup compare --boot: two kernels' boots from boot-timing records, milestones and
initcalls, tested over the boots; a kernel compared with itself shows no difference."""

import json

import pytest

import recordfactory as rf
from bringup import records
from bringup.errors import BringupError
from bringup.report import bootcompare
from conftest import run_cli
from test_bootexplain import A5, B5

LOGIN_A = [0.80, 0.81, 0.79, 0.805, 0.795]
LOGIN_B = [0.85, 0.86, 0.84, 0.855, 0.845]  # 50 ms later in every boot


def record(tmp_path, name="boot-timing-initcalls.json"):
    def kt(blk, login, free):
        t = rf.kernel_timing(
            {
                "freeing_init": rf.milestone_stats('"Freeing unused kernel memory"', free),
                "login": rf.milestone_stats('"login:" prompt', login),
            },
            blk["runs"],
        )
        t["initcalls"] = blk
        return t

    rec = rf.boot_timing(
        kernels={"5.10": kt(A5, LOGIN_A, A5["end_s"]), "6.12": kt(B5, LOGIN_B, B5["end_s"])},
        profile="initcalls",
        cmdline_args={"5.10": "initcall_debug", "6.12": "initcall_debug"},
    )
    f = tmp_path / "logs" / "qemu-arm" / name
    records.write(f, rec)
    return f


def test_a_kernel_compared_with_itself_shows_no_difference(tmp_path):
    f = record(tmp_path)
    c = bootcompare.compare((f, "6.12"), (f, "6.12"))
    assert [r["milestone"] for r in c["milestones"]] == ["freeing_init", "login"]
    assert all(r["shift_s"] == 0 and r["p"] == 1.0 and not r["significant"] for r in c["milestones"])
    att = c["initcalls"]
    assert att["delta_us"] == 0 and att["significant"] == [] and att["unexplained_us"] == 0


def test_two_kernels_differ_where_their_boots_differ(tmp_path):
    f = record(tmp_path)
    c = bootcompare.compare(bootcompare.resolve("qemu-arm/5.10", tmp_path / "logs"), (f, "6.12"))
    rows = {r["milestone"]: r for r in c["milestones"]}
    login = rows["login"]
    assert login["shift_s"] == pytest.approx(0.05)
    assert login["ci95_s"][0] > 0  # the whole interval is later
    # these milestones carry no rounds: Welch's test of the logs; 50 ms in every boot is far beyond chance
    assert login["test"] == "Welch t-test (logs)" and login["p"] < 1e-4 and login["significant"]
    assert {r["key"]: r for r in c["initcalls"]["rows"]}["virtio_net_driver_init"]["p"] < 1e-4
    att = c["initcalls"]
    sig = {r["key"] for r in att["significant"]}
    assert "virtio_net_driver_init" in sig  # +20 ms in every boot (test_bootexplain's A5/B5)
    text = bootcompare.render(c)
    assert "A = qemu-arm/5.10 (5 boots, profile initcalls), B = qemu-arm/6.12" in text
    assert "virtio_net_driver_init" in text and "left unexplained" in text


def test_the_cli_prints_and_writes_json(tmp_path):
    f = record(tmp_path)
    out = tmp_path / "c.json"
    p = run_cli("compare", "--boot", f"{f}:5.10", f"{f}:6.12", "--json", str(out))
    assert p.returncode == 0, p.stderr
    assert '"login:" prompt' in p.stdout
    back = json.loads(out.read_text())
    assert back["a"]["label"] == "qemu-arm/5.10" and back["initcalls"]["end_milestone"] == "freeing_init"


@pytest.mark.parametrize(
    ("ref", "words"),
    [
        ("nope", "is neither <record>.json:<kernel> nor <board>/<kernel>"),
        ("qemu-arm/9.9", "no boot-timing record under"),
        ("{f}:9.9", "field 'kernels': no kernel '9.9' (known: 5.10, 6.12)"),
        ("{d}/missing.json:5.10", "missing.json: no such file"),
    ],
)
def test_a_bad_side_is_one_line(tmp_path, ref, words):
    f = record(tmp_path)
    ref = ref.format(f=f, d=tmp_path)
    with pytest.raises(BringupError, match=None) as e:
        bootcompare.compare(bootcompare.resolve(ref, tmp_path / "logs"), (f, "6.12"))
    assert words in str(e.value) and "\n" not in str(e.value)
    p = run_cli("compare", "--boot", ref, f"{f}:6.12", env_extra={"BRINGUP_LOGS": str(tmp_path / "logs")})
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and words in p.stderr
