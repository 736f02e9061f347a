"""A kind of target is one module: its board-file table (a TargetSpec) and its Target,
registered (model/targetkind.py).  Here a toy kind, [toy], declared in this module
alone (its Target is the fake board of tests/fakeboard.py), is loaded from a board file
by the normal loader, answers what the rest of bringup asks, appears in the published
schema, and boots; and nothing outside targets/ looks at which kind a board is."""

import ast
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import Field

import bringup
from bringup import targets
from bringup.boot import session as bs
from bringup.model import targetkind
from bringup.model.base import DataError
from bringup.model.board import Board, load_board
from bringup.model.boarddoc import board_schema, reference_markdown
from bringup.model.bootpath import measure_path
from bringup.model.clocks import clock_of, with_clock
from bringup.model.milestones import load_rules
from bringup.model.targetkind import TargetSpec
from bringup.util import environment
from fakeboard import FakeBoard
from recordfactory import build as build_record


class ToySpec(TargetSpec):
    """[toy]: a fake board on a loopback socket that loads the kernel itself."""

    table = "toy"
    table_doc = "a toy board (tests/test_target_kinds.py)"
    loads_kernel_itself = True

    lines: Annotated[int, Field(ge=1, le=8, description="how many of the fake kernel's lines it prints")] = 8

    def target(self, board: Board, run_dir: Path, *, say: Any, disk: Path | None) -> FakeBoard:
        from fakeboard import KERNEL

        return FakeBoard(kernel=KERNEL[: self.lines], uboot=False)


@pytest.fixture
def toy():
    """The toy kind registered for one test (the shipped kinds register on import)."""
    targetkind.register(ToySpec)
    yield ToySpec
    targetkind.unregister("toy")


def board_file(tmp_path: Path, table: str, name: str = "toyboard") -> Path:
    f = tmp_path / f"{name}.toml"
    f.write_text(f"""
name = "{name}"
arch = "arm"
[image]
target = "zImage"
{table}
[[kernels]]
id = "k"
source = {{ path = "/tmp" }}
defconfig = "xconfig"
""")
    return f


def test_a_toy_kind_from_one_module_loads_through_the_normal_loader(toy, tmp_path):
    board = load_board(str(board_file(tmp_path, "[toy]\nlines = 3")))
    assert isinstance(board.target, ToySpec) and board.target.lines == 3
    assert measure_path(board) == "direct"  # it loads the kernel itself
    assert clock_of(board).kind == "host"
    with pytest.raises(DataError, match=r"^--clock instructions: board toyboard is not a QEMU board"):
        with_clock(board, "instructions")
    assert targets.disk_image_attachment(board) is None
    assert [p.name for p in targets.places(board)] == [None]  # the board itself, no places of a lab
    assert environment.of_board(board)["qemu"] is None
    assert "toy" in board_schema()["properties"] and "| `toy` | table |" in reference_markdown()


def test_a_toy_board_s_table_is_validated_and_stands_alone(toy, tmp_path):
    with pytest.raises(DataError, match=r"toyboard.toml: field 'toy.lines': 9: must be less than or equal to 8$"):
        load_board(str(board_file(tmp_path, "[toy]\nlines = 9")))
    with pytest.raises(
        DataError, match=r"field 'toy': a board is one kind of target: keep one of \[qemu\] and \[toy\]$"
    ):
        load_board(str(board_file(tmp_path, '[toy]\n[qemu]\nbinary = "qemu-system-arm"\nmachine = "virt"')))
    with pytest.raises(DataError, match=r"a \[serial\], a \[labgrid\] or a \[toy\] table$"):
        load_board(str(board_file(tmp_path, "")))


def test_a_board_is_one_kind_of_target(tmp_path):
    """[qemu] beside [serial] was taken as QEMU, [serial] ignored; now one kind or the other."""
    both = '[qemu]\nbinary = "qemu-system-arm"\nmachine = "virt"\n[serial]\nport = "/dev/ttyUSB0"'
    with pytest.raises(
        DataError, match=r"field 'serial': a board is one kind of target: keep one of \[qemu\] and \[serial\]$"
    ):
        load_board(str(board_file(tmp_path, both)))
    lab = '[labgrid]\nplace = "p"\n[qemu]\nbinary = "qemu-system-arm"\nmachine = "virt"'
    with pytest.raises(
        DataError,
        match=r"field 'labgrid': a labgrid place brings its own console and power: drop \[qemu\] and \[serial\]$",
    ):
        load_board(str(board_file(tmp_path, lab)))


def test_without_its_module_the_toy_table_is_an_unknown_field(tmp_path):
    with pytest.raises(DataError, match=r"toyboard.toml: field 'toy': unknown field$"):
        load_board(str(board_file(tmp_path, "[toy]")))
    with pytest.raises(DataError, match=r"a board needs a \[qemu\], a \[serial\] or a \[labgrid\] table$"):
        load_board(str(board_file(tmp_path, "")))


def test_a_toy_board_boots_on_the_target_its_table_makes(toy, tmp_path):
    board = load_board(str(board_file(tmp_path, "[toy]")))
    recdir = tmp_path / "rec"
    (recdir / "images").mkdir(parents=True)
    (recdir / "images" / "zImage").write_bytes(b"\0" * 128)
    initrd = tmp_path / "initramfs.cpio.gz"
    initrd.write_bytes(b"\x1f\x8b" + b"\0" * 64)
    rec = build_record("k", kernelrelease="6.12.95", artifacts={"zImage": "images/zImage"}).model_dump()
    target = targets.for_board(board, tmp_path / "run")
    assert isinstance(target, FakeBoard)
    try:
        r = bs.boot_once(
            board, "k", rec, recdir, initrd, tmp_path / "run", target, load_rules(), bs.BootOptions(path="direct")
        )
    finally:
        target.stop()
    assert r["status"] == "ok", r["error"]
    assert "userspace" in r["milestones"]


# --- only targets/ decides which kind a board is --------------------------------

PKG = Path(bringup.__file__).parent
KIND_TABLES = {"qemu", "serial", "labgrid"}  # the shipped kinds' tables (targets/qemu.py, serial.py, labgrid.py)
RECORDS = {"env"}  # records.Environment's `qemu`: the QEMU version a measurement ran with, not a board's table
KIND_NAMES = {"QemuSpec", "SerialSpec", "LabgridSpec", "QemuTarget", "SerialTarget", "LabgridTarget"}


def test_the_shipped_kinds_are_the_registered_ones():
    assert {k.table for k in targetkind.kinds()} == KIND_TABLES


@pytest.mark.parametrize(
    "f",
    sorted(f for f in PKG.rglob("*.py") if "targets" not in f.relative_to(PKG).parts),
    ids=lambda f: str(f.relative_to(PKG)),
)
def test_no_module_outside_targets_looks_at_which_kind_a_board_is(f):
    """Outside targets/ a board's kind is asked through its target table's questions
    (model/targetkind.py), never read from board.qemu, board.serial, board.labgrid,
    a kind's spec or Target class."""
    where = f.relative_to(PKG)
    for node in ast.walk(ast.parse(f.read_text(), str(f))):
        if isinstance(node, ast.Attribute) and node.attr in KIND_TABLES and ast.unparse(node.value) not in RECORDS:
            raise AssertionError(f"{where}:{node.lineno}: {ast.unparse(node)} looks at a kind's table")
        name = node.id if isinstance(node, ast.Name) else node.name if isinstance(node, ast.alias) else None
        if name in KIND_NAMES:
            raise AssertionError(f"{where}:{node.lineno}: names a kind of target ({name})")
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("bringup.targets."):
            raise AssertionError(f"{where}:{node.lineno}: imports a kind's module ({node.module})")
