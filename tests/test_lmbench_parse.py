"""lmbench parsers on real outputs of Debian's lmbench 3.0-a9 (tests/data/lmbench/,
captured from its amd64 binaries with the quick knobs) and a classic results file."""

from pathlib import Path

import pytest

from bringup.parse import lmbench as lp
from conftest import run_cli

DATA = Path(__file__).parent / "data" / "lmbench"


def metrics(name):
    return {m["name"]: m for m in lp.parse_text((DATA / f"{name}.txt").read_text(), name)}


@pytest.mark.parametrize(
    "name,metric,unit",
    [
        ("lat_syscall_null", "Simple syscall", "us"),
        ("lat_syscall_read", "Simple read", "us"),
        ("lat_syscall_write", "Simple write", "us"),
        ("lat_syscall_stat", "Simple stat", "us"),
        ("lat_syscall_open", "Simple open/close", "us"),
        ("lat_sig_install", "Signal handler installation", "us"),
        ("lat_sig_catch", "Signal handler overhead", "us"),
        ("lat_proc_fork", "Process fork+exit", "us"),
        ("lat_proc_exec", "Process fork+execve", "us"),
        ("lat_pipe", "Pipe latency", "us"),
        ("lat_unix", "AF_UNIX sock stream latency", "us"),
        ("lat_udp", "UDP latency using localhost", "us"),
        ("lat_tcp", "TCP latency using localhost", "us"),
        ("lat_connect", "TCP/IP connection cost to localhost", "us"),
        ("lat_pagefault", "Pagefaults on /tmp/lmb.file", "us"),
        ("lat_select", "Select on 100 fd's", "us"),
        ("bw_pipe", "Pipe bandwidth", "MB/s"),
        ("bw_unix", "AF_UNIX sock stream bandwidth", "MB/s"),
    ],
)
def test_labeled_outputs(name, metric, unit):
    m = metrics(name)
    assert list(m) == [metric]
    assert m[metric]["unit"] == unit and m[metric]["value"] > 0
    assert m[metric]["better"] == ("higher" if unit == "MB/s" else "lower")


def test_lat_ctx_block():
    m = metrics("lat_ctx")
    assert list(m) == ["ctx 2p/16K", "ctx 8p/16K", "ctx 16p/16K"]
    assert m["ctx 8p/16K"]["value"] == 28.43 and m["ctx 8p/16K"]["unit"] == "us"


def test_lat_fs_rows_become_latencies():
    m = metrics("lat_fs")
    assert m["0K file create"]["value"] == pytest.approx(1e6 / 75143, abs=1e-3)
    assert m["10K file delete"]["value"] == pytest.approx(1e6 / 200997, abs=1e-3)
    assert len(m) == 8


@pytest.mark.parametrize(
    "name,metric,value,unit",
    [
        ("bw_mem_rd", "bw_mem_rd 64K", 106103.67, "MB/s"),
        ("bw_mem_wr", None, None, "MB/s"),
        ("bw_mem_bcopy", "bw_mem_bcopy 1M", 34173.81, "MB/s"),
        ("bw_file_rd", "bw_file_rd 1M", 23122.26, "MB/s"),
        ("bw_mmap_rd", "bw_mmap_rd 1M", 59672.01, "MB/s"),
        ("bw_tcp", "bw_tcp 64K", 2395.65, "MB/s"),
        ("lat_mmap", "lat_mmap 1M", 13.0, "us"),
    ],
)
def test_pairs(name, metric, value, unit):
    m = metrics(name)
    assert len(m) == 1
    got = next(iter(m.values()))
    assert got["unit"] == unit
    if metric:
        assert got["name"] == metric and got["value"] == value


def test_lat_mem_rd_stride_block():
    m = metrics("lat_mem_rd")
    assert "mem read stride=64 512B" in m
    assert all(v["unit"] == "ns" for v in m.values()) and len(m) > 10


def test_lat_ops():
    m = metrics("lat_ops")
    assert m["integer add"]["value"] == 0.25 and m["integer add"]["unit"] == "ns"
    assert m["double div"]["value"] == 3.80


def test_runner_blocks_and_unfinished_block():
    text = (
        "@@@ BEGIN lat_pipe @@@\r\nPipe latency: 12.5 microseconds\r\n@@@ END lat_pipe rc=0 @@@\r\n"
        "@@@ BEGIN bw_mem_rd @@@\n0.065536 1234.5\n@@@ END bw_mem_rd rc=0 @@@\n"
        "@@@ BEGIN lat_sig_prot @@@\n@@@ END lat_sig_prot rc=1 @@@\n"
        "@@@ BEGIN lat_tcp @@@\n"
    )
    r = lp.parse_runner(text)
    assert r["lat_pipe"]["metrics"][0]["value"] == 12.5 and r["lat_pipe"]["rc"] == 0
    assert r["bw_mem_rd"]["metrics"][0]["name"] == "bw_mem_rd 64K"
    assert r["lat_sig_prot"] == {"rc": 1, "metrics": [], "text": ""}
    assert r["lat_tcp"]["rc"] is None, "a block that never ended is not a result"


def test_classic_results_file():
    r = lp.parse_any((DATA.parent / "lmbench-results-classic.txt").read_text())
    assert r["format"] == "results-file" and r["lmbench_version"] == "3alpha4"
    (rs,) = r["results"]
    # the header is `uname -a`: host and OS as getsummary takes them
    assert (rs["host"], rs["os"], rs["params"]) == ("tqm860l", "Linux 2.6.11.7", {"mhz": 50})
    m = {x["name"]: x for b in rs["benchmarks"].values() for x in b["metrics"]}
    assert m["Simple syscall"]["value"] == 2.5841
    assert m["ctx 16p/0K"]["value"] == 96.09
    assert m["0K file create"]["value"] == pytest.approx(1e6 / 1563, abs=1e-3)
    assert m["mappings 512K"]["value"] == 402 and m["mappings 512K"]["unit"] == "us"
    assert m["read bandwidth 512B"]["value"] == 18.87 and m["read bandwidth 512B"]["unit"] == "MB/s"
    assert m["libc bcopy aligned 512B"]["value"] == 42.90


def test_cli_parse_lmbench():
    import json

    p = run_cli("parse", "lmbench", str(DATA / "lat_ctx.txt"), check=True)
    r = json.loads(p.stdout)
    assert r["format"] == "raw" and r["text"]["assumed"] == "plain text"
    (rs,) = r["results"]
    first = rs["benchmarks"]["lat_ctx_16k"]["metrics"][0]
    assert first["name"] == "ctx 2p/16K" and first["line"] == 3 and rs["benchmarks"]["lat_ctx_16k"]["group"]


def test_block_lines_number_each_pass():
    text = (
        "=== lmbench run 1\n@@@ BEGIN lat_pipe @@@\r\nPipe latency: 1 microseconds\r\n@@@ END lat_pipe rc=0 @@@\n"
        "@@@ BEGIN lat_ctx_0k @@@\r\n@@@ END lat_ctx_0k rc=0 @@@\n"
        "=== lmbench run 2\n@@@ BEGIN lat_pipe @@@\r\n@@@ END lat_pipe rc=0 @@@\n"
    )
    assert lp.block_lines(text) == {"lat_pipe": [2, 8], "lat_ctx_0k": [5]}
    lines = text.split("\n")
    assert all(lines[n - 1].startswith("@@@ BEGIN lat_pipe") for n in lp.block_lines(text)["lat_pipe"])


# lmbench's summary layout (printf "%-9.9s %13.13s ..."), written here to try the
# shapes that people's copies take: a host name longer than its column, rows
# annotated or commented in between, a blank line inside a table.
HEAD = (
    "                 L M B E N C H  3 . 0   S U M M A R Y\n"
    "                 ------------------------------------\n"
    "\n"
    "Processor, Processes - times in microseconds - smaller is better\n"
    "------------------------------------------------------------------------------\n"
    "Host                 OS  Mhz null null      open slct sig  sig  fork exec sh\n"
    "                             call  I/O stat clos TCP  inst hndl proc proc proc\n"
    "--------- ------------- ---- ---- ---- ---- ---- ---- ---- ---- ---- ---- ----\n"
)


def test_summary_host_longer_than_its_column():
    r = lp.parse_any(HEAD + "example-vm Linux 3.10.0- 2881 0.08 0.12 0.70 1.51 2.45 0.18 1.12 117. 341. 1183\n")
    (rs,) = r["results"]
    assert (rs["host"], rs["os"], rs["params"]) == ("example-vm", "Linux 3.10.0-", {"mhz": 2881})
    b = rs["benchmarks"]
    assert b["lat_syscall_null"]["metrics"][0]["value"] == 0.08 and b["lat_proc_shell"]["metrics"][0]["value"] == 1183


def test_summary_rows_past_a_comment_and_an_annotation():
    rows = (
        "syzkaller Linux 6.8.0-g 1494 1.88 2.43 101. 212. 46.6 3.15 45.0 11.K 28.K 60.K\n"
        "# a remark someone added\n"
        "\n"
        "syzkaller Linux 6.8.0-g 2964 1.33 1.72 72.0 134. 32.6 2.15 32.0 14.K 33.K 62.K\n"
        "                        ~~~~~~~~~~~~~~~~~~~~~~~~~~~??\n"
    )
    r = lp.parse_any(HEAD + rows)
    assert [(x["run"], x["line"]) for x in r["results"]] == [(1, 9), (2, 12)]
    assert r["results"][1]["benchmarks"]["lat_proc_fork"]["metrics"][0]["value"] == 14000
    assert r["results"][0]["params"]["mhz"] == 1494


def test_summary_unknown_mhz_is_not_a_parameter():
    r = lp.parse_any(HEAD + "fedora-th Linux 5.15.3-   -1 0.46 0.60 1.50 2.76 5.61 0.54 1.26 400. 1853 2851\n")
    assert r["results"][0]["params"] == {} and r["results"][0]["measured"]


def test_pairs_without_a_known_unit_are_left_out():
    """lmbench 3's "Memory load parallelism" pairs are counts, not MB/s: no value rather than a wrong unit."""
    m = lp.parse_text('"Memory load parallelism\n0.000512 2.79\n\n"read bandwidth\n0.000512 18.87\n', first_line=1)
    assert [(x["name"], x["unit"], x["line"]) for x in m] == [("read bandwidth 512B", "MB/s", 5)]


def test_summary_condensed_by_hand_without_rules_or_host_columns():
    """Tables condensed by hand (kernel comparisons on linux-kernel): a section title,
    header lines, rows of a label and values; no dashed rule, no Host and OS columns."""
    text = (
        "lmbench 2.0 average of 3 runs\n"
        "Context switching - times in microseconds - smaller is better\n"
        "              2p/0K  2p/16K  8p/64K\n"
        "              ctxsw  ctxsw   ctxsw\n"
        "2.6.0-test9    1.50   12.25  190.01\n"
        "2.6.0-mm1      1.25    9.75  188.50\n"
        "\n"
        "File & VM system latencies in microseconds - smaller is better\n"
        "                 0K    File      Mmap\n"
        "              Create  Delete  Latency\n"
        "2.6.0-test9    40.10   12.00    980.5\n"
    )
    r = lp.parse_any(text)
    assert (r["format"], r["lmbench_version"], r["title_line"]) == ("summary", "2.0", 1)
    by = {x["host"]: x for x in r["results"]}
    assert list(by) == ["2.6.0-test9", "2.6.0-mm1"] and by["2.6.0-mm1"]["os"] is None
    ctx = by["2.6.0-mm1"]["benchmarks"]["lat_ctx_16k"]["metrics"]
    assert [(m["name"], m["value"], m["line"]) for m in ctx] == [("ctx 2p/16K", 9.75, 6)]
    fs = {m["name"]: m["value"] for m in by["2.6.0-test9"]["benchmarks"]["lat_fs"]["metrics"]}
    assert fs == {"0K file create": 40.1, "0K file delete": 12.0}
    assert by["2.6.0-test9"]["benchmarks"]["lat_mmap"]["metrics"][0]["value"] == 980.5


def test_summary_with_one_label_column_under_its_rule():
    """A rule with a `kernel` column and values: the label is no host and OS pair (the
    first value was taken as the OS)."""
    text = (
        "Processor, Processes - times in microseconds - smaller is better\n"
        "----------------------------------------------------------------\n"
        "                   fork    execve  /bin/sh\n"
        "kernel           process  process  process\n"
        "-------------    -------  -------  -------\n"
        "2.5.68               243      979     4401\n"
    )
    (rs,) = lp.parse_any(text)["results"]
    assert (rs["host"], rs["os"]) == ("2.5.68", None)
    b = rs["benchmarks"]
    assert [b[k]["metrics"][0]["value"] for k in ("lat_proc_fork", "lat_proc_exec", "lat_proc_shell")] == [
        243,
        979,
        4401,
    ]


def test_summary_title_alone_is_no_table():
    """A section title with prose under it and no rows of values gives nothing."""
    text = "Context switching - times in microseconds - smaller is better\nwas much the same on both kernels\n"
    assert lp.parse_any(text)["results"] == []


def test_summary_rows_go_on_past_a_blank_line_of_serial_noise():
    """A blank line between two kernels' runs that holds only bytes that were not text
    (U+FFFD once decoded) is blank: the rows after it are the same table's."""
    rows = "larsa     Linux 2.6.25-  897 0.23 0.52 3.73 6.26 12.3 0.65 5.08 330. 1406 8997\n"
    text = (
        "Processor, Processes - times in microseconds - smaller is better\n"
        "------------------------------------------------------------------------------\n"
        "Host                 OS  Mhz null null      open slct sig  sig  fork exec sh\n"
        "                             call  I/O stat clos TCP  inst hndl proc proc proc\n"
        "--------- ------------- ---- ---- ---- ---- -------- ---- ---- ---- ---- ----\n"
        + rows
        + "\ufffd\ufffd \n"
        + rows.replace("1406", "1335")
    )
    res = lp.parse_any(text)["results"]
    assert [r["run"] for r in res] == [1, 2]
    assert res[1]["benchmarks"]["lat_proc_exec"]["metrics"][0]["value"] == 1335


PIPE_PROC = (
    "## Processor, Processes - times in microseconds - smaller is better\n"
    "| Host | OS | Mhz | null call | null I/O | stat | open clos | slct TCP | sig inst | sig hndl | fork proc "
    "| exec proc | sh proc |\n"
    "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    "| larsa | Linux 2.6.25- | 897 | 0.23 | 0.52 | 3.73 | 6.26 | 12.3 | 0.65 | 5.08 | 330. | 1406 | 8997 |\n"
    "| larsa | Linux 2.6.25- | 897 | 0.23 | 0.52 | 3.65 | 5.82 | 12.3 | 0.66 | 4.88 | 329. | 1335 | |\n"
)


def test_summary_as_markdown_pipe_tables():
    """A summary converted to Markdown: pipe tables under '## ' headings, the cells
    the columns; the same host and OS twice in a table are two runs; a blank cell
    is not measured."""
    res = lp.parse_any("# LMbench 3.0 Summary\n\n" + PIPE_PROC)
    assert (res["format"], res["lmbench_version"], res["title_line"]) == ("summary", "3.0", 1)
    one, two = res["results"]
    assert (one["host"], one["os"], one["run"], two["run"], one["params"]) == (
        "larsa",
        "Linux 2.6.25-",
        1,
        2,
        {"mhz": 897},
    )
    assert one["benchmarks"]["lat_proc_exec"]["metrics"][0]["value"] == 1406
    opened = two["benchmarks"]["lat_syscall_open"]["metrics"][0]
    assert (opened["value"], opened["line"], opened["column"]) == (5.82, 7, "open clos")
    assert [m["column"] for m in two["not_measured"]] == ["sh proc"]


def test_pipe_table_header_cells_split_differently_from_the_rows_take_lmbench_columns():
    """A converter that split 'open clos' into two header cells (12 after OS) over
    rows of lmbench's 11 values: the values are lmbench's own columns in order."""
    text = (
        "## Processor, Processes - Times in Microseconds (Smaller is Better)\n"
        "| Host | OS | Mhz | null call | null I/O | stat | open | slct | clos | TCP inst | sig hndl | fork | exec "
        "| sh proc |\n"
        "|------|----|-----|-----|-----|-----|-----|-----|-----|-----|-----|-----|-----|-----|\n"
        "| AAwdallah | Linux 5.15.16 | 2993| 0.25 | 0.18 | 0.44 | 1.70 | 1.78 | 0.17 | 0.96 | 155.0 | 467.0| 1415.0|\n"
    )
    (rs,) = lp.parse_any(text)["results"]
    b = rs["benchmarks"]
    assert [b[k]["metrics"][0]["value"] for k in ("lat_syscall_open", "lat_proc_fork", "lat_proc_shell")] == [
        1.7,
        155.0,
        1415.0,
    ]


def test_local_section_title_without_its_asterisks():
    """'*Local*' rendered from Markdown (or copied from a web page) is 'Local': still
    the local-latency section, its columns the live names."""
    text = (
        "Local Communication latencies in microseconds - smaller is better\n"
        "-------------------------------------------------------------------\n"
        "Host                 OS 2p/0K  Pipe AF     UDP  RPC/   TCP  RPC/ TCP\n"
        "                        ctxsw       UNIX         UDP         TCP conn\n"
        "--------- ------------- ----- ----- ---- ----- ----- ----- ----- ----\n"
        "800       Linux 2.6.22- 7.620  16.8 15.9              26.9       32.4\n"
    )
    (rs,) = lp.parse_any(text)["results"]
    assert rs["benchmarks"]["lat_pipe"]["metrics"][0]["value"] == 16.8
    assert rs["benchmarks"]["lat_pipe"]["group"] == "Local communication latencies"


def test_a_markdown_table_under_no_lmbench_title_is_not_a_summary():
    text = "## Boards\n| board | MHz |\n|---|---|\n| a | 800 |\n"
    assert lp.parse_any(text)["results"] == []


def test_a_pasted_command_line_names_the_pairs_after_it():
    """A shell transcript: each `bw_mem SIZE OP` (bw_file_rd, bw_mmap_rd) echoed before its one
    untitled pair says what the pair measures, named as bringup's runner names the same
    command; -P N > 1 (N copies at once) is another measurement; a command line a mailer
    wrapped before its size still names the pair."""
    text = "\n".join(
        [
            "$ taskset -c 2 /usr/lib/lmbench/bin/x86_64-linux-gnu/bw_mem 256M rd",
            "256.00 14924.50",
            "root@Tony:~/lmbench/bin/arm-linux# ./bw_mem 1M cp  ",
            "1.00 191.86",
            "$ /usr/lib/lmbench/bin/x86_64-linux-gnu/bw_mem -W2 -N4 -P2 256m rd",
            "268.44 26896.42",
            "$ taskset -c 0   /usr/lib/lmbench/bin/x86_64-linux-gnu/bw_mem -W2 -N4 ",
            "-P1  512K wr",
            "0.512000 42357.43",
            "./bw_file_rd 1M io_only sample.txt",
            "1.00 2101.10",
        ]
    )
    res = lp.parse_any(text)
    (rs,) = res["results"]
    got = {b: [(m["name"], m["value"], m["line"]) for m in v["metrics"]] for b, v in rs["benchmarks"].items()}
    assert got == {
        "bw_mem_rd": [("bw_mem_rd 256M", 14924.5, 2), ("bw_mem_rd -P2 256M", 26896.42, 6)],
        "bw_mem_cp": [("bw_mem_cp 1M", 191.86, 4)],
        "bw_mem_wr": [("bw_mem_wr 500K", 42357.43, 9)],
        "bw_file_rd": [("read bandwidth 1M", 2101.1, 11)],
    }
    assert all(m["unit"] == "MB/s" for v in rs["benchmarks"].values() for m in v["metrics"])


def test_pipe_table_wrapped_by_a_mailer_is_joined_back():
    """A Markdown pipe table a mailer wrapped at 72 columns: the header over two lines before
    its rule, a spaced rule cut in two, a row cut inside 'Linux 2.6.25' and one cut right
    after a '|'; each row is numbered as its first line.  A row with fewer cells than the
    header is complete when what follows is a row or prose (even with a '|' in it)."""
    text = (
        "## Processor, Processes - Times in Microseconds (Smaller is Better)\n"  # 1
        "| Host | OS | Mhz | null call | null I/O | stat | open clos | slct TCP\n"  # 2
        "| sig inst | sig hndl | fork proc | exec proc | sh proc |\n"  # 3
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"  # 4: a rule cut ...
        "--- |\n"  # 5
        "| larsa | Linux\n"  # 6
        "2.6.25 | 897 | 0.31 | 0.52 | 4.1 | 5.82 | 8.1 | 1.0 | 4.3 | 822 | 2811 | 11.K |\n"  # 7
        "| larsa | Linux 2.6.25 | 897 | 0.32 | 0.53 | 4.2 | 5.90 | 8.2 |\n"  # 8
        "1.1 | 4.4 | 830 | 2830 | 11.K |\n"  # 9
        "| larsa | Linux 2.6.25 | 897 | 0.33 | 0.54 | 4.3 | 5.95 | 8.3 | 1.2 | 4.5 | 840 | 2850 |\n"  # 10
        "and the same with the patch applied | as you can see\n"  # 11
    )
    one, two, three = lp.parse_any(text)["results"]
    assert [(r["os"], r["run"], r["line"]) for r in (one, two, three)] == [
        ("Linux 2.6.25", 1, 6),
        ("Linux 2.6.25", 2, 8),
        ("Linux 2.6.25", 3, 10),
    ]
    sh = [r["benchmarks"]["lat_proc_shell"]["metrics"][0] for r in (one, two)]
    assert [(m["value"], m["line"]) for m in sh] == [(11000.0, 6), (11000.0, 8)]
    assert two["benchmarks"]["lat_sig_install"]["metrics"][0]["value"] == 1.1
    assert two["benchmarks"]["lat_proc_fork"]["metrics"][0]["value"] == 830
    assert "lat_proc_shell" not in three["benchmarks"]
    assert three["benchmarks"]["lat_proc_exec"]["metrics"][0]["value"] == 2850


def test_a_diff_of_two_outputs_is_two_result_sets():
    """`diff old new` of two raw outputs: the '<' lines are the first set, the '>' lines the
    second (a second run: no header names either); one changed line is enough with its hunk
    header; a line without '<' right after one (a mailer's wrap) stays on the old side."""
    text = (
        "3c3\n"
        "< Simple syscall: 0.30 microseconds\n"
        "---\n"
        "> Simple syscall: 0.35 microseconds\n"
        "7a8,9\n"
        "> Pipe latency: 12.5 microseconds\n"
        "9d10\n"
        "< Process fork+exit: 300.5\n"
        "microseconds\n"
    )
    res = lp.parse_any(text)
    assert (res["format"], res["sides"]) == ("diff", ["raw", "raw"])
    old, new = res["results"]
    assert (old["run"], new["run"]) == (1, 2)
    assert old["benchmarks"]["lat_syscall_null"]["metrics"][0]["value"] == 0.30
    assert new["benchmarks"]["lat_syscall_null"]["metrics"][0]["value"] == 0.35
    assert "lat_pipe" not in old["benchmarks"] and new["benchmarks"]["lat_pipe"]["metrics"][0]["line"] == 6
    assert "lat_proc_fork" not in new["benchmarks"]
    # quoted by a mail around it, the '>' lines keep one '>': still the new side
    quoted = lp.parse_lmbench(("".join(f"> {line}\n" for line in text.splitlines())).encode())
    assert quoted["results"][1]["benchmarks"]["lat_syscall_null"]["metrics"][0]["value"] == 0.35
