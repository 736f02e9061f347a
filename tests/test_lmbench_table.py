"""configs/lmbench.toml's [[benchmark]] table: lmbench's benchmarks as data (names, groups, the
labels that name them in lmbench's output), validated on load; adding one is a data change."""

from pathlib import Path

import pytest

from bringup.model import benchset
from bringup.model.base import DataError
from bringup.parse import lmbench as lp

REAL = Path(__file__).parent / "data" / "real" / "lmbench"


def test_the_table_validates_and_is_what_the_parser_reads_by_default():
    table = benchset.load_set()
    assert table.groups()["lat_syscall_null"] == "Processor, Processes"
    assert benchset.labels() == lp.default_labels()
    # every benchmark of the set the guest runs is one bringup reads the output of
    assert all(table.knows(b.name) for b in table.bench)


@pytest.mark.parametrize("f", sorted(REAL.glob("*.txt"))[:12], ids=lambda p: p.name)
def test_parsing_with_the_validated_table_is_parsing_with_the_default(f):
    data = f.read_bytes()
    assert lp.parse_lmbench(data, f.name, benchset.labels()) == lp.parse_lmbench(data, f.name)


def write_table(tmp_path, extra: str) -> Path:
    f = tmp_path / "lmbench.toml"
    f.write_text((benchset.paths.CONFIGS / "lmbench.toml").read_text() + extra)
    return f


def test_a_benchmark_added_as_data_is_read_without_python(tmp_path):
    text = "Frobnicate latency: 12.5 microseconds\nSimple syscall: 0.25 microseconds\n"
    before = lp.parse_any(text)["results"][0]["benchmarks"]
    assert before["other"]["metrics"][0]["name"] == "Frobnicate latency"  # not known yet
    entry = '\n[[benchmark]]\nname = "lat_frob"\ngroup = "Processor, Processes"\nlabels = ["^Frobnicate latency$"]\n'
    labels = benchset.load_set(write_table(tmp_path, entry)).labels()
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
        benchset.load_set(f)
    msg = str(e.value)
    assert "\n" not in msg and "lmbench.toml" in msg
    for w in words:
        assert w in msg, msg


def test_a_bench_the_set_runs_must_be_one_bringup_reads(tmp_path):
    text = (benchset.paths.CONFIGS / "lmbench.toml").read_text()
    f = tmp_path / "lmbench.toml"
    f.write_text(text.replace('name = "lat_pipe"\ngroup', 'name = "lat_nothing"\ngroup', 1))
    assert "lat_nothing" in f.read_text()
    with pytest.raises(DataError, match=r"field 'bench\[\d+\]\.name': 'lat_nothing': not a benchmark bringup reads"):
        benchset.load_set(f)
