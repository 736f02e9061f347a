"""Board files: every shipped board loads; bad ones fail with one line naming
file, field and value."""

import pytest

from bringup.errors import BringupError
from bringup.model.base import DataError
from bringup.model.board import list_boards, load_board
from bringup.targets.qemu import QemuSpec
from bringup.util import paths
from conftest import run_cli, write_board

TEMPLATES = {"sandpoint-mpc8240", "tqm860l"}  # need the user's sha256/toolchain


@pytest.mark.parametrize("name", [b for b in list_boards() if b not in TEMPLATES])
def test_shipped_boards_load(name):
    b = load_board(name)
    assert b.name == name and b.kernels
    for k in b.kernels:
        for f in k.config_inputs(paths.CONFIGS):
            assert f.exists()


def test_qemu_x86_builds_one_version_three_ways():
    b = load_board("qemu-x86")
    archs = {k.id: k.arch.kernel_arch for k in b.kernels}
    assert archs == {"6.12-i386": "i386", "6.12-i386-pae": "i386", "6.12-x86_64": "x86_64"}
    assert len({k.source.debian for k in b.kernels}) == 1


def bad(tmp_path, text_or_kernels, extra=""):
    boards = tmp_path / "boards"
    if isinstance(text_or_kernels, str):
        boards.mkdir(parents=True, exist_ok=True)
        (boards / "b.toml").write_text(text_or_kernels)
    else:
        write_board(boards, "b", text_or_kernels, extra)
    with pytest.raises(DataError) as e:
        load_board("b", boards=boards)
    msg = str(e.value)
    assert "\n" not in msg
    return msg


K = {"id": "k", "source": {"path": "/tmp"}, "defconfig": "tinyconfig"}


def test_unknown_board(tmp_path):
    with pytest.raises(DataError, match=r"unknown board 'nope' \(no .*nope.toml; known: "):
        load_board("nope", boards=tmp_path)


def test_malformed_toml(tmp_path):
    assert "b.toml: not valid TOML" in bad(tmp_path, "name = \n")


def test_wrong_type_names_field_and_value(tmp_path):
    msg = bad(tmp_path, [K], extra="console = 5")
    assert "field 'console': expected a string, got 5" in msg


def test_unknown_era(tmp_path):
    msg = bad(tmp_path, [dict(K, era="2.5")])
    assert "field 'kernels[0].era': unknown era '2.5' (no configs/era/2.5.toml; known: 2.4, 2.6+)" in msg


def test_unknown_field(tmp_path):
    assert "field 'kernels[0].defconifg': unknown field" in bad(tmp_path, [dict(K, defconifg="x")])


def test_url_source_needs_sha256(tmp_path):
    msg = bad(tmp_path, [dict(K, source={"url": "https://example.invalid/linux.tar.gz"})])
    assert "field 'kernels[0].source.sha256': missing" in msg


def test_bad_sha256(tmp_path):
    msg = bad(tmp_path, [dict(K, source={"url": "https://x.invalid/l.tgz", "sha256": "abc"})])
    assert "field 'kernels[0].source.sha256': 'abc': not of the accepted form" in msg


def test_two_sources(tmp_path):
    msg = bad(tmp_path, [dict(K, source={"path": "/a", "tarball": "/b"})])
    assert "give exactly one of debian, url, tarball, path (got tarball, path)" in msg


def test_duplicate_kernel_id(tmp_path):
    assert "field 'kernels[1].id': 'k' is listed twice" in bad(tmp_path, [K, K])


def test_missing_fragment(tmp_path):
    msg = bad(tmp_path, [dict(K, fragments=["fragments/nope.config"])])
    assert "field 'kernels[0].fragments[0]': 'fragments/nope.config': no such file under configs/" in msg


def test_unknown_arch_override(tmp_path):
    msg = bad(tmp_path, [dict(K, arch="vax")])
    assert "field 'kernels[0].arch': unknown architecture 'vax'" in msg


def test_image_target_must_belong_to_arch(tmp_path):
    boards = tmp_path / "boards"
    write_board(boards, "b", [K])
    f = boards / "b.toml"
    f.write_text(f.read_text().replace('target = "zImage"', 'target = "bzImage"'))
    with pytest.raises(DataError, match=r"field 'image.target': 'bzImage' is not an image of arch arm"):
        load_board("b", boards=boards)


def test_name_must_match_file(tmp_path):
    boards = tmp_path / "boards"
    write_board(boards, "b", [K])
    (boards / "b.toml").rename(boards / "c.toml")
    with pytest.raises(DataError, match=r"field 'name': 'b' does not match the file name 'c'"):
        load_board("c", boards=boards)


def test_cli_unknown_board_is_one_line_and_nonzero():
    p = run_cli("build-all", "--board", "no-such-board")
    assert p.returncode == 2
    assert p.stderr.strip().count("\n") == 0
    assert p.stderr.startswith("bringup: error: unknown board 'no-such-board'")


def test_cli_help_lists_commands():
    p = run_cli("--help", check=True)
    for c in ("boards", "build-all", "build-report"):
        assert c in p.stdout


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_seed_templates_load_once_the_user_adds_sha256(tmp_path, name):
    text = (paths.BOARDS / f"{name}.toml").read_text()
    assert "sha256" not in text.split("[[kernels]]", 1)[1], "templates must not carry unconfirmed checksums"
    boards = tmp_path / "boards"
    boards.mkdir()
    (boards / f"{name}.toml").write_text(text.replace('.tar.bz2" }', '.tar.bz2", sha256 = "' + "ab" * 32 + '" }'))
    b = load_board(name, boards=boards)
    assert [(k.id, k.era.name, k.arch.kernel_arch) for k in b.kernels] == [
        ("2.4.25", "2.4", "ppc"),
        ("2.6.11.7", "2.6+", "ppc"),
    ]
    assert not b.kernels[0].era.out_of_tree and b.kernels[1].era.out_of_tree
    from bringup.builder import toolchain

    with pytest.raises(
        BringupError,
        match=r"ppc_8\d*xx-gcc not found for arch ppc: no Debian package provides it: "
        r"point cross_compile",
    ):
        toolchain.find(b.kernels[0].cross_compile, b.kernels[0].arch)


def test_board_file_reference_is_current():
    from bringup.model.boarddoc import reference_markdown

    assert (paths.ROOT / "docs" / "board-files.md").read_text() == reference_markdown(), (
        "docs/board-files.md is stale: scripts/bringup doc board-files > docs/board-files.md"
    )


def test_board_json_schema_is_published_and_referenced():
    """docs/board-schema.json is the model's schema, every shipped board names it
    in its first line, and the schema itself accepts every shipped board's data."""
    import json
    import tomllib

    from bringup.model.boarddoc import board_schema_json

    doc = paths.ROOT / "docs" / "board-schema.json"
    assert doc.read_text() == board_schema_json(), (
        "docs/board-schema.json is stale: bringup doc board-schema > docs/board-schema.json"
    )
    schema = json.loads(doc.read_text())
    assert set(schema["required"]) >= {"name", "arch", "image", "kernels"}
    assert schema["properties"]["memory_mb"]["minimum"] == 1
    for f in sorted((paths.ROOT / "boards").glob("*.toml")):
        assert f.read_text().splitlines()[0] == "#:schema ../docs/board-schema.json", f.name
        data = tomllib.loads(f.read_text())
        assert set(data) <= set(schema["properties"]), f.name


@pytest.mark.parametrize(
    "extra, message",
    [
        ("memory_mb = 9223372036854775808", "field 'memory_mb': 9223372036854775808: must be less than or equal to"),
        ("memory_mb = 1e30", "field 'memory_mb': expected an integer, got 1e+30"),
        ("memory_mb = nan", "field 'memory_mb': expected an integer, got nan"),
        ("memory_mb = 0", "field 'memory_mb': 0: must be greater than or equal to 1"),
        ('cmdline = "quiet; reset"', "field 'cmdline': 'quiet; reset': contains ';': U-Boot's shell would run"),
        ('cmdline = "quiet\\nreset"', "field 'cmdline': 'quiet\\nreset': contains a control character"),
        ('arch = "../../boards/qemu-ppc"', "field 'arch': '../../boards/qemu-ppc' is not a valid arch name"),
        ("milestones = { login = 5 }", "field 'milestones.login': expected a string, got 5"),
        ('milestones = { nope = "x" }', "field 'milestones.nope': no such milestone"),
        ('milestones = { login = "(" }', "field 'milestones.login': '(': not a valid regular expression"),
    ],
)
def test_board_values_out_of_range_or_meaning_are_refused_at_load(tmp_path, extra, message):
    f = write_board(tmp_path / "boards", "b", [{"id": "k", "source": {"path": "/tmp"}, "defconfig": "tinyconfig"}])
    key = extra.split(" =")[0]
    lines = [line for line in f.read_text().splitlines() if not line.startswith(f"{key} =")]
    f.write_text("\n".join([extra, *lines]) + "\n")
    msg = bad(tmp_path, f.read_text())
    assert message in msg


@pytest.mark.parametrize(
    "kernel, message",
    [
        (
            {"make_args": ["--eval=$(shell id)"]},
            "field 'kernels[0].make_args[0]': '--eval=$(shell id)': expected VAR=value",
        ),
        ({"make_args": ["X=$(shell id)"]}, "'X=$(shell id)': contains '$' or '`': make would expand it"),
        ({"defconfig": "tinyconfig; id"}, "field 'kernels[0].defconfig': 'tinyconfig; id': not of the accepted form"),
        ({"id": "x" * 300}, "field 'kernels[0].id': 'xxxxxxxx"),
        (
            {"source": {"url": "file:///etc/passwd", "sha256": "0" * 64}},
            "field 'kernels[0].source.url': 'file:///etc/passwd'",
        ),
        (
            {"source": {"tarball": "/nonexistent/linux.tar.xz"}},
            "field 'kernels[0].source.tarball': '/nonexistent/linux.tar.xz': no such file",
        ),
        (
            {"source": {"debian": "linux-source-6.1", "suite": "sid"}},
            "field 'kernels[0].source.suite': 'sid' is not one of",
        ),
        (
            {"fragments": ["../../etc/passwd"]},
            "field 'kernels[0].fragments[0]': '../../etc/passwd': a relative path must stay inside configs/",
        ),
    ],
)
def test_kernel_values_with_a_wrong_meaning_are_refused_at_load(tmp_path, kernel, message):
    k = {"id": "k", "source": {"path": "/tmp"}, "defconfig": "tinyconfig", **kernel}
    msg = bad(tmp_path, [k])
    assert message in msg and "\n" not in msg


@pytest.mark.parametrize(
    "extra, message",
    [
        ('[workloads]\ndisk = "/dev/sda; reboot"', "field 'workloads.disk': '/dev/sda; reboot': not a device path"),
        ('[workloads]\ndisk = "/dev/$(id)"', "field 'workloads.disk': '/dev/$(id)': not a device path"),
        ('[workloads]\ndisk = "sda1"', "field 'workloads.disk': 'sda1': not a device path"),
        ('[workloads]\ndisk = "/dev/../etc/passwd"', "field 'workloads.disk': '/dev/../etc/passwd': not a device"),
        ('[workloads]\ndisk = "/dev/sda/../../etc"', "'/dev/sda/../../etc': a device path without ., .. or empty"),
        ('[workloads]\ndisk = "/dev/vda"\ndisk_fs = "xfs"', "field 'workloads.disk_fs': 'xfs' is not one of"),
        ('[workloads]\ndisk = "/dev/vda"', "field 'qemu.disk_device': missing: QEMU attaches no disk"),
        ("[workloads]\ndisk_mb = 4", "field 'workloads.disk_mb': 4: must be greater than or equal to 16"),
    ],
)
def test_the_workloads_disk_is_a_plain_device_path(tmp_path, extra, message):
    f = write_board(tmp_path / "boards", "b", [K])
    f.write_text(f.read_text().replace("[[kernels]]", extra + "\n\n[[kernels]]", 1))
    assert message in bad(tmp_path, f.read_text())


def test_a_qemu_disk_device_needs_the_guests_name_for_it_and_a_real_board_has_no_image(tmp_path):
    f = write_board(tmp_path / "boards", "b", [K])
    text = f.read_text().replace('machine = "virt"', 'machine = "virt"\ndisk_device = "virtio-blk-device"')
    assert "field 'workloads.disk': missing: qemu.disk_device attaches a disk" in bad(tmp_path, text)
    good = text.replace("[[kernels]]", '[workloads]\ndisk = "/dev/vda"\n\n[[kernels]]', 1)
    f.write_text(good)
    b = load_board("b", boards=tmp_path / "boards")
    assert (b.workloads.disk, b.workloads.disk_fs, b.workloads.disk_mb, QemuSpec.of(b).disk_device) == (
        "/dev/vda",
        "ext4",
        None,
        "virtio-blk-device",
    )
    bench = good.replace("[qemu]", '[serial]\nport = "/dev/ttyUSB0"\n\n[x]').replace(
        '[x]\nbinary = "qemu-system-arm"\nmachine = "virt"\ndisk_device = "virtio-blk-device"\n', ""
    )
    bench = bench.replace('disk = "/dev/vda"', 'disk = "/dev/mmcblk0p3"')
    f.write_text(bench)
    assert load_board("b", boards=tmp_path / "boards").workloads.disk == "/dev/mmcblk0p3"
    f.write_text(bench.replace('disk = "/dev/mmcblk0p3"', 'disk = "/dev/mmcblk0p3"\ndisk_mb = 64'))
    assert "field 'workloads.disk_mb': only for a QEMU board" in bad(tmp_path, f.read_text())


def test_the_shipped_qemu_boards_with_a_disk():
    for name, device in (("qemu-arm", "virtio-blk-device"), ("qemu-x86", "virtio-blk-pci")):
        b = load_board(name)
        assert QemuSpec.of(b).disk_device == device and b.workloads.disk == "/dev/vda"
        assert all("fragments/disk.config" in k.fragments for k in b.kernels)
    assert load_board("qemu-i386").workloads.disk == ""
