"""make all's "up to date" decisions, from canned records."""

from bringup import records, study
from bringup.model.board import load_board


def write(logs, board, key="k1"):
    for k in board.kernels:
        records.write_json(
            logs / board.name / k.id / "build.json",
            {"schema": "bringup.build/1", "kernel": k.id, "key": f"{key}-{k.id}"},
        )


def test_boot_step_is_redone_when_the_records_do_not_fit(tmp_path):
    board = load_board("qemu-arm")
    write(tmp_path, board)
    assert study.boot_fresh(board, tmp_path, tmp_path, 5, "u-boot") == "no boot-timing.json"
    assert study.boot_fresh(board, tmp_path, tmp_path, 5, "u-boot", root="nfs") == "no boot-timing-nfs.json"
    s = {
        "schema": "bringup.boot-timing/1",
        "path": "u-boot",
        "kernels": {k.id: {"ok": 5, "build_key": f"k1-{k.id}"} for k in board.kernels},
    }
    records.write_json(tmp_path / "qemu-arm" / "boot-timing.json", dict(s, path="direct"))
    assert study.boot_fresh(board, tmp_path, tmp_path, 5, "u-boot") == "made with boot path direct, not u-boot"
    records.write_json(tmp_path / "qemu-arm" / "boot-timing.json", s)
    assert study.boot_fresh(board, tmp_path, tmp_path, 7, "u-boot") == "5.10: 5 good runs, 7 wanted"
    write(tmp_path, board, key="k2")
    assert study.boot_fresh(board, tmp_path, tmp_path, 5, "u-boot") == "5.10 was rebuilt since"


def test_footprint_step(tmp_path):
    board = load_board("qemu-arm")
    write(tmp_path, board)
    assert study.footprint_fresh(board, tmp_path, "quick") == "no footprint records for 5.10"
    for k in board.kernels:
        d = tmp_path / "qemu-arm" / k.id
        records.write_json(d / "footprint.json", {"schema": "bringup.footprint/1", "build_key": f"k1-{k.id}"})
        records.write_json(
            d / "lmbench.json", {"schema": "bringup.lmbench/1", "mode": "quick", "measured": True, "runs": 5}
        )
    assert study.footprint_fresh(board, tmp_path, "quick", 5) is None
    assert study.footprint_fresh(board, tmp_path, "quick", 6) == "5.10: 5 lmbench run(s), 6 wanted"
    assert study.footprint_fresh(board, tmp_path, "full", 5) == "5.10: lmbench quick, full wanted"
    write(tmp_path, board, key="k2")
    assert study.footprint_fresh(board, tmp_path, "quick", 5) == "5.10 was rebuilt since"
