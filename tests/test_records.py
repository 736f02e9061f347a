"""Records: typed, versioned, validated on write and read; bad records give one
line naming the file, the field and the value; older versions migrate on read."""

import json
import math
import os
from pathlib import Path

import pytest

import recordfactory as rf
from bringup import records
from bringup.records import RecordError
from bringup.records.io import MAX_STRING

DATA = Path(__file__).parent / "data" / "records"


def one_line(e: pytest.ExceptionInfo, path: Path) -> str:
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith(str(path)), msg
    return msg


# --- what the writers wrote stays readable ----------------------------------


def test_a_real_v1_build_record_reads():
    rec = records.read(DATA / "build-qemu-arm-5.10.json", records.Build)
    assert rec.kernelrelease == "5.10.262" and rec.sizes.berkeley.dec == 3222564
    assert rec.source.kind == "debian" and rec.ccache is not None and rec.ccache.hit_rate == 0.0831
    assert rec.artifacts["uImage"] == "images/uImage.bringup"
    # the one reader also takes a kind by its schema name, or none (the record's schema field
    # chooses), and gives the same typed record migrated to the current version
    for model in ("bringup.build", None):
        same = records.read(DATA / "build-qemu-arm-5.10.json", model)
        assert isinstance(same, records.Build) and same == rec and same.schema_name() == "bringup.build/4"
    # plain data in the current version is that record dumped (there is no second, untyped reader)
    d = rec.model_dump(mode="json", by_alias=True)
    assert d["schema"] == "bringup.build/4" and d["time"]["steps"][2]["name"] == "make zImage"
    assert not hasattr(records, "read_json")


def test_read_by_kind_picks_the_model_the_record_is(tmp_path):
    good, failed = tmp_path / "build.json", tmp_path / "build-failed.json"
    records.write(good, rf.build())
    fields = dict(status="fail", board="qemu-arm", kernel="5.10", key=None, error="make zImage: exit 2")
    when = dict(started="2026-01-01T00:00:00Z", finished="2026-01-01T00:01:00Z")
    steps = [{"name": "make zImage", "exit": 2, "real": 1.5}]
    records.write(failed, records.BuildFailure(**fields, **when, steps=steps, commands=[], log="build.log"))
    for kind in ("bringup.build", None):  # build.json and build-failed.json share a kind
        assert isinstance(records.read(good, kind), records.Build)
        assert isinstance(records.read(failed, kind), records.BuildFailure)


@pytest.mark.parametrize(
    "text,expected",
    [
        ('{"schema": "bringup.nothing/1"}', r"'bringup\.nothing/1': not a record kind this bringup"),
        ('{"schema": 3}', r"field 'schema': 3: not a record kind this bringup reads \(kinds: bringup\.boot,"),
        ('{"kernel": "x"}', r"field 'schema': missing \(required\): not a record$"),
        ("[1]", r"the JSON is an array, not a record"),
    ],
)
def test_a_record_of_no_known_kind_is_one_line(tmp_path, text, expected):
    f = tmp_path / "r.json"
    f.write_text(text)
    with pytest.raises(RecordError, match=expected) as e:
        records.read(f)
    one_line(e, f)
    with pytest.raises(RecordError, match=r"'bringup\.nothing' is not a record kind"):
        records.read(f, "bringup.nothing") if text.startswith("{") else records.read(f, "bringup.nothing")


def test_a_real_v1_boot_record_reads():
    rec = records.read(DATA / "boot-bench-board.json", records.Boot)
    assert rec.root == "ramdisk" and rec.milestones["login"].line == 28
    assert rec.intervals[0].from_ == "bootloader"
    assert json.loads(rec.model_dump_json())["intervals"][0]["from"] == "bootloader"


def v1(kind, **fields):
    return {"schema": f"bringup.{kind}/1", **fields}


def test_v1_footprint_migrates_to_v2(tmp_path):
    f = tmp_path / "footprint.json"
    new = rf.footprint("6.12").model_dump(mode="json")
    old = {**new, "schema": "bringup.footprint/1", "run": "logs/qemu-arm/6.12/footprint-runs/20260101T000000Z"}
    old.pop("clock")  # new in /5
    old["memory_line"] = {k: v for k, v in new["memory_line"].items() if k not in ("line", "text")}
    old["memory_line"]["line"] = "[    0.000000] Memory: 505660K/524288K available"
    old["rootfs"] = {"file": "footprint.cpio.gz", "sha256": rf.key("fp")}
    f.write_text(json.dumps(old))
    rec = records.read(f, records.Footprint)
    assert rec.schema_ == "bringup.footprint/7" and rec.stopped is None and rec.clock.kind == "host"
    assert rec.memory_line is not None
    assert rec.memory_line.text == "[    0.000000] Memory: 505660K/524288K available" and rec.memory_line.line is None
    assert rec.run == "footprint-runs/20260101T000000Z" and rec.rootfs.inputs_key is None
    # an absolute run directory (logs outside the project) migrates the same way
    f.write_text(json.dumps({**old, "run": "/data/logs/qemu-arm/6.12/footprint-runs/20260101T000000Z"}))
    assert records.read(f, records.Footprint).run == "footprint-runs/20260101T000000Z"


def test_v3_footprint_reads_as_v5_with_no_stopping_reason_on_the_host_clock(tmp_path):
    f = tmp_path / "footprint.json"
    old = {**rf.footprint("6.12").model_dump(mode="json"), "schema": "bringup.footprint/3"}
    old.pop("stopped")
    old.pop("clock")
    old["mem_eat"].pop("chunk_kb")  # new in /7: every older record ran `mem_eat 1024`
    f.write_text(json.dumps(old))
    rec = records.read(f, records.Footprint)
    assert rec.schema_ == "bringup.footprint/7" and rec.stopped is None
    assert rec.mem_eat is not None and rec.mem_eat.chunk_kb == 1024
    assert rec.clock == records.base.ClockInfo(kind="host", shift=None, ns_per_instruction=None)
    assert rec.rounds == old["rounds"] and rec.malloc_kb_values == old["malloc_kb_values"]


def test_v1_lmbench_migrates_to_v2(tmp_path):
    f = tmp_path / "lmbench.json"
    old = v1(
        "lmbench",
        board="qemu-arm",
        kernel="5.10",
        created=rf.T0,
        build_key=rf.key("b"),
        mode="quick",
        source={"lmbench": "debian bookworm lmbench:armhf 3.0", "libraries": ["libc6:armhf"]},
        run="logs/qemu-arm/5.10/footprint-runs/20260101T000000Z",
        measured=True,
        benchmarks={
            "lat_pipe": {
                "group": "Local communication latencies",
                "rc": 0,
                "metrics": [{"name": "Pipe latency", "value": 1.87, "unit": "us", "better": "lower", "source": "x"}],
            }
        },
    )
    f.write_text(json.dumps(old))
    rec = records.read(f, records.Lmbench)
    assert rec.runs == 1 and rec.retried == [] and rec.reason is None  # "runs absent means 1"
    assert rec.benchmarks["lat_pipe"].raw_lines == [] and rec.benchmarks["lat_pipe"].metrics[0].values is None
    f.write_text(json.dumps({**old, "measured": False, "benchmarks": {}}))
    assert records.read(f, records.Lmbench).runs == 0


def test_v1_boot_timing_and_rootfs_migrate(tmp_path):
    new = rf.boot_timing(kernels={"5.10": rf.kernel_timing({}, ["r1"])}).model_dump(mode="json")
    old = {k: v for k, v in new.items() if k not in ("root", "clock")}
    old.update(schema="bringup.boot-timing/1", rootfs={"file": "initramfs.cpio.gz", "sha256": rf.key("rd")})
    (tmp_path / "bt.json").write_text(json.dumps(old))
    rec = records.read(tmp_path / "bt.json", records.BootTiming)
    assert rec.root == "ramdisk" and rec.rootfs.inputs_key is None and rec.kernels["5.10"].run_ids == ["r1"]
    assert rec.clock.kind == "host"
    rootfs_record = {
        "schema": "bringup.rootfs/1",
        "board": "qemu-arm",
        "name": "initramfs",
        "file": "initramfs.cpio.gz",
        "bytes": 10,
        "sha256": rf.key("rd"),
        "userspace_arch": "armhf",
        "busybox": {"source": "debian", "version": "1"},
        "files": ["bin/busybox"],
        "extra": {},
    }
    (tmp_path / "rd.json").write_text(json.dumps(rootfs_record))
    old = records.read(tmp_path / "rd.json", records.Rootfs)
    assert old.inputs_key is None and old.archive_sha256 is None


def test_an_lmbench_record_from_before_its_provenance_reads_with_none(tmp_path):
    """/6 says which lmbench ran (Debian's package or bringup's build, version, the
    source's sha256); a /5 record has only the one-line `lmbench` and reads as it is."""
    rec = rf.lmbench()
    assert rec.schema_ == "bringup.lmbench/6"
    old = rec.model_dump(mode="json", by_alias=True)
    old["schema"] = "bringup.lmbench/5"
    old["source"] = {"lmbench": "debian bookworm lmbench:armhf 3.0-a9+debian.1-6", "libraries": ["libc6:armhf"]}
    (tmp_path / "lmbench.json").write_text(json.dumps(old))
    back = records.read(tmp_path / "lmbench.json", records.Lmbench)
    assert back.source.lmbench.startswith("debian") and back.source.origin is None and back.source.source_sha256 is None
    built = {**old, "schema": "bringup.lmbench/6", "source": {"origin": "bringup-build", "source_sha256": "zz"}}
    (tmp_path / "bad.json").write_text(json.dumps(built))
    with pytest.raises(RecordError, match=r"source_sha256"):
        records.read(tmp_path / "bad.json", records.Lmbench)


CLOCKED = {
    "boot": (rf.boot_run, 4),
    "boot-timing": (rf.boot_timing, 7),
    "footprint": (rf.footprint, 5),
    "lmbench": (rf.lmbench, 5),
    "workloads": (rf.workloads, 3),
}


@pytest.mark.parametrize("kind", sorted(CLOCKED))
def test_a_record_from_before_the_clock_reads_as_the_host_clock(tmp_path, kind):
    """Every measurement record got `clock` in one version: the one before reads (same
    fields) as a record of the host clock; a record of the instruction clock says its rate."""
    make, version = CLOCKED[kind]  # the version that added `clock`
    rec = make()
    current = f"bringup.{kind}/{type(rec).VERSION}"
    assert rec.schema_ == current and rec.clock.kind == "host" and rec.clock.shift is None
    old = {**rec.model_dump(mode="json", by_alias=True), "schema": f"bringup.{kind}/{version - 1}"}
    old.pop("clock")
    for later in ("environment", "available"):  # added after `clock`: absent in that version
        old.pop(later, None)
    f = tmp_path / f"{kind}.json"
    f.write_text(json.dumps(old))
    back = records.read(f, type(rec))
    assert back.schema_ == current and back == rec
    on = make(clock=rf.INSTRUCTIONS)
    records.write(f, on)
    assert json.loads(f.read_text())["clock"] == {
        "kind": "instructions",
        "shift": 3,
        "ns_per_instruction": 8,
        "seed": None,
    }
    assert records.read(f, type(rec)).clock.ns_per_instruction == 8
    # a clock bringup does not have is refused, naming the field
    f.write_text(json.dumps({**old, "schema": current, "clock": {"kind": "wall"}}))
    with pytest.raises(RecordError) as e:
        records.read(f, type(rec))
    assert "field 'clock.kind'" in one_line(e, f) and "'wall'" in str(e.value)


def test_every_kind_round_trips_and_writes_its_current_schema(tmp_path):
    for rec in (
        rf.build(),
        rf.boot_run(),
        rf.boot_timing(),
        rf.footprint(),
        rf.lmbench(benchmarks={"x": {"group": "g", "rc": 0, "metrics": [rf.metric("m", 1.5)], "raw_lines": [3]}}),
        rf.not_measured("6.12", "not requested"),
    ):
        f = tmp_path / f"{type(rec).__name__}.json"
        records.write(f, rec)
        assert json.loads(f.read_text())["schema"] == type(rec).schema_name()
        assert records.read(f, type(rec)) == rec


def test_writers_validate_before_writing(tmp_path):
    f = tmp_path / "boot.json"
    d = rf.boot_run().model_dump()
    d["milestones"] = {"login": {"host_s": 1.0, "printk_s": -1.0, "line": 3, "text": "login:"}}
    with pytest.raises(RecordError) as e:
        records.write(f, d, records.Boot)
    assert one_line(e, f) == (
        f"{f}: not written: field 'milestones.login.printk_s': -1.0: Input should be greater than or equal to 0"
    )
    assert not f.exists()
    with pytest.raises(RecordError, match=r"field 'schema': None: give the record's model to write it"):
        records.write(f, {"board": "x"})
    with pytest.raises(RecordError, match=r"field '_file': '/tmp/x': not a field of this record"):
        records.write(f, {**rf.boot_timing().model_dump(), "_file": "/tmp/x"}, records.BootTiming)


def test_writers_never_write_what_a_reader_refuses_and_text_is_made_plain(tmp_path):
    """A console's NUL or escape in a record's text (a milestone's line, a boot's error) would make
    the record unreadable, and a real board's console may send one: the writer writes such
    characters as their escapes, and cuts a string no record holds, so a good boot is never lost."""
    f = tmp_path / "boot.json"
    hit = {"host_s": 1.0, "printk_s": None, "line": 90, "text": "\x00[    0.902266] bringup login:"}
    d = rf.boot_run(milestones={"login": hit}).model_dump()
    d["status"], d["error"] = "fail", "console said \x1b[2J"
    records.write(f, d, records.Boot)
    back = records.read(f, records.Boot)
    assert back.error == "console said \\x1b[2J"
    assert back.milestones["login"].text == "\\x00[    0.902266] bringup login:"
    assert "\x00" not in f.read_text() and "\x1b" not in f.read_text()
    assert records.plain_text("a\x1b[2Jb\x9b\u202e\tc\nd") == "a\\x1b[2Jb\\x9b\\u202e\tc\nd"
    assert records.plain_text("x" * 10, limit=5) == "xx..."
    d["error"] = "y" * (MAX_STRING + 5)
    records.write(f, d, records.Boot)
    assert records.read(f, records.Boot).error == "y" * (MAX_STRING - 3) + "..."


def test_a_string_of_10_mb_in_a_record_is_refused_naming_the_field(tmp_path):
    f = tmp_path / "build.json"
    d = good_build()
    d["toolchain"]["version"] = "v" * 10_000_000
    f.write_text(json.dumps(d))
    with pytest.raises(RecordError) as e:
        records.read(f, records.Build)
    msg = one_line(e, f)
    assert "field 'toolchain.version'" in msg and "10000000 characters" in msg and len(msg) < 400, msg[:400]


# --- bad records: one line naming the file, the field and the value ---------


def good_build() -> dict:
    return json.loads((DATA / "build-qemu-arm-5.10.json").read_text())


def spoil(d: dict, path: str, value) -> dict:
    *parents, last = path.split(".")
    t = d
    for p in parents:
        t = t[p]
    if value is KeyError:
        del t[last]
    else:
        t[last] = value
    return d


BAD = [
    ("missing field", lambda: json.dumps(spoil(good_build(), "sizes.berkeley.dec", KeyError)),
     r"field 'sizes\.berkeley\.dec': missing \(required\)"),
    ("wrong type", lambda: json.dumps(spoil(good_build(), "sizes.berkeley.dec", "3222564")),
     r"field 'sizes\.berkeley\.dec': '3222564': Input should be a valid integer"),
    ("negative size", lambda: json.dumps(spoil(good_build(), "sizes.vmlinux_bytes", -1)),
     r"field 'sizes\.vmlinux_bytes': -1: Input should be greater than or equal to 0"),
    ("NaN", lambda: json.dumps(spoil(good_build(), "time.real", math.nan)),
     r"field 'time\.real': nan: not a finite number"),
    ("infinity", lambda: json.dumps(spoil(good_build(), "ccache.hit_rate", math.inf)),
     r"field 'ccache\.hit_rate': inf: not a finite number"),
    ("unknown field", lambda: json.dumps(spoil(good_build(), "sizes.bloat", 1)),
     r"field 'sizes\.bloat': 1: not a field of this record"),
    ("absolute artifact", lambda: json.dumps(spoil(good_build(), "artifacts.config", "/etc/shadow")),
     r"field 'artifacts\.config': '/etc/shadow': an absolute path"),
    ("escaping artifact", lambda: json.dumps(spoil(good_build(), "artifacts.config", "images/../../../etc/shadow")),
     r"field 'artifacts\.config': 'images/\.\./\.\./\.\./etc/shadow': escapes the record's directory"),
    ("bad key", lambda: json.dumps(spoil(good_build(), "key", "k1")),
     r"field 'key': 'k1': not a sha256"),
    ("bad timestamp", lambda: json.dumps(spoil(good_build(), "started", "yesterday")),
     r"field 'started': 'yesterday': not an ISO 8601 timestamp"),
    ("unknown source kind", lambda: json.dumps(spoil(good_build(), "source.kind", "git")),
     r"field 'source\.kind': 'git': not one of 'debian', 'url', 'tarball', 'path'"),
    ("truncated JSON", lambda: json.dumps(good_build())[:300],
     r": not valid JSON \(truncated\?\): Unterminated string starting at: line \d+ column \d+"),
    ("empty file", lambda: "", r": empty, not a record"),
    ("list at top level", lambda: json.dumps([good_build()]), r": the JSON is an array, not a record \(an object\)"),
    ("another kind", lambda: json.dumps(spoil(good_build(), "schema", "bringup.boot/1")),
     r"field 'schema': 'bringup\.boot/1': not a bringup\.build record"),
    ("newer version", lambda: json.dumps(spoil(good_build(), "schema", "bringup.build/7")),
     r"field 'schema': 'bringup\.build/7': version '7' of bringup\.build is not readable by this bringup "
     r"\(reads 1, 2, 3, 4\); update bringup"),
    ("schema not a string", lambda: json.dumps(spoil(good_build(), "schema", 1)),
     r"field 'schema': 1: not a schema name like 'bringup\.build/4'"),
    ("no schema", lambda: json.dumps(spoil(good_build(), "schema", KeyError)),
     r"field 'schema': missing \(required\): not a bringup\.build record"),
    ("failed build as a good one", lambda: json.dumps(spoil(good_build(), "status", "fail")),
     r"field 'status': 'fail': Input should be 'ok'"),
]  # fmt: skip


@pytest.mark.parametrize("what,text,expected", BAD, ids=[b[0] for b in BAD])
def test_bad_record_is_one_line(tmp_path, what, text, expected):
    f = tmp_path / "build.json"
    f.write_text(text())
    with pytest.raises(RecordError, match=expected) as e:
        records.read(f, records.Build)
    one_line(e, f)


def test_what_is_not_a_file_is_not_read(tmp_path):
    (tmp_path / "dir.json").mkdir()
    with pytest.raises(RecordError, match=r"dir\.json: is a directory, not a record"):
        records.read(tmp_path / "dir.json", records.Build)
    os.mkfifo(tmp_path / "fifo.json")  # opening it would block forever
    with pytest.raises(RecordError, match=r"fifo\.json: not a regular file"):
        records.read(tmp_path / "fifo.json", records.Build)
    with pytest.raises(RecordError, match=r"nope\.json: no such record"):
        records.read(tmp_path / "nope.json", records.Build)


def test_an_artifact_symlinked_out_of_its_directory_is_refused(tmp_path):
    recdir = tmp_path / "rec"
    (recdir / "images").mkdir(parents=True)
    (tmp_path / "secret").write_text("CONFIG_SECRET=y\n")
    (recdir / "images" / "config").symlink_to(tmp_path / "secret")
    (recdir / "images" / "vmlinux").write_bytes(b"x")
    assert (
        records.artifact(recdir / "build.json", "images/vmlinux", "artifacts.vmlinux")
        == (recdir / "images" / "vmlinux").resolve()
    )
    with pytest.raises(RecordError, match=r"field 'artifacts\.config': 'images/config': resolves outside"):
        records.artifact(recdir / "build.json", "images/config", "artifacts.config")


def test_schema_constants_live_only_in_the_records_package():
    import re

    from bringup.util import paths

    lib = paths.ROOT / "scripts" / "lib" / "bringup"
    found = [
        str(f.relative_to(lib))
        for f in lib.rglob("*.py")
        if "records" not in f.relative_to(lib).parts and re.search(r"[\"']bringup\.[a-z-]+/\d", f.read_text())
    ]
    assert found == [], f"schema names outside records/: {found}"
