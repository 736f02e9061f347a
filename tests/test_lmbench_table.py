"""configs/lmbench-benchmarks.toml: lmbench's benchmarks as data (names, groups, the
labels that name them in lmbench's output), validated on load; adding one is a data change."""

from pathlib import Path

import pytest

from bringup.model import benchset, lmbenchtable
from bringup.model.base import DataError
from bringup.parse import lmbench as lp

REAL = Path(__file__).parent / "data" / "real" / "lmbench"


def test_the_table_validates_and_is_what_the_parser_reads_by_default():
    table = lmbenchtable.load_table()
    assert table.groups()["lat_syscall_null"] == "Processor, Processes"
    assert lmbenchtable.labels() == lp.default_labels()
    # every benchmark of the set the guest runs is one bringup reads the output of
    assert all(table.knows(b.name) for b in benchset.load_set().bench)


@pytest.mark.parametrize("f", sorted(REAL.glob("*.txt"))[:12], ids=lambda p: p.name)
def test_parsing_with_the_validated_table_is_parsing_with_the_default(f):
    data = f.read_bytes()
    assert lp.parse_lmbench(data, f.name, lmbenchtable.labels()) == lp.parse_lmbench(data, f.name)


def write_table(tmp_path, extra: str) -> Path:
    f = tmp_path / "lmbench-benchmarks.toml"
    f.write_text((lmbenchtable.paths.CONFIGS / lmbenchtable.FILE).read_text() + extra)
    return f


def test_a_benchmark_added_as_data_is_read_without_python(tmp_path):
    text = "Frobnicate latency: 12.5 microseconds\nSimple syscall: 0.25 microseconds\n"
    before = lp.parse_any(text)["results"][0]["benchmarks"]
    assert before["other"]["metrics"][0]["name"] == "Frobnicate latency"  # not known yet
    entry = '\n[[benchmark]]\nname = "lat_frob"\ngroup = "Processor, Processes"\nlabels = ["^Frobnicate latency$"]\n'
    labels = lmbenchtable.load_table(write_table(tmp_path, entry)).labels()
    after = lp.parse_any(text, labels)["results"][0]["benchmarks"]
    assert "other" not in after
    assert after["lat_frob"]["group"] == "Processor, Processes"
    assert after["lat_frob"]["metrics"][0]["value"] == 12.5 and after["lat_frob"]["metrics"][0]["unit"] == "us"
    assert after["lat_syscall_null"]["metrics"][0]["value"] == 0.25


@pytest.mark.parametrize(
    "entry,words",
    [
        ('name = "lat_x"\ngroup = "G"\nlabels = ["(unclosed"]', ["labels[0]", "not a regular expression"]),
        ('name = "lat_x"\ngroup = "G"\nlabels = [".*"]', ["labels[0]", "'.*'", "empty label"]),
        ('name = "lat_pipe"\ngroup = "G"\nlabels = ["^x$"]', ["'lat_pipe' is listed twice"]),
        ('name = "Lat X"\ngroup = "G"\nlabels = ["^x$"]', ["name", "'Lat X'"]),
        ('name = "lat_x"\ngroup = "G"\nlabels = []', ["labels", "at least 1"]),
    ],
)
def test_a_bad_entry_is_one_line_naming_the_field(tmp_path, entry, words):
    f = write_table(tmp_path, f"\n[[benchmark]]\n{entry}\n")
    with pytest.raises(DataError) as e:
        lmbenchtable.load_table(f)
    msg = str(e.value)
    assert "\n" not in msg and "lmbench-benchmarks.toml" in msg
    for w in words:
        assert w in msg, msg
