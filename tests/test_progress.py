"""util/progress.py: percent and time left from the counts callers pass; plain lines
when the output is not a terminal, a tqdm bar when it is."""

import io

from bringup.util.progress import Progress, fmt_duration


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def plain(total, every=20.0):
    lines: list[str] = []
    clock = Clock()
    p = Progress(
        "  5.10: make zImage", total=total, unit="commands", say=lines.append, every=every, clock=clock, tty=False
    )
    return p, lines, clock


def test_plain_line_has_percent_count_elapsed_and_time_left():
    p, lines, clock = plain(100)
    clock.t += 10
    p.update(25, "  CC      kernel/fork.o")
    assert lines == []  # not before `every` seconds
    clock.t += 20  # 30 s in, 40 done: 45 s left at that rate
    p.update(40, "  CC      kernel/fork.o")
    assert lines == ["  5.10: make zImage: 40 % (40/100 commands), 0m30s, about 0m45s left  CC      kernel/fork.o"]
    clock.t += 5
    p.update(50)
    assert len(lines) == 1, "at most one plain line every 20 s"


def test_without_a_total_only_count_and_elapsed():
    p, lines, clock = plain(None, every=0)
    clock.t += 75
    p.update(12)
    assert lines == ["  5.10: make zImage: 12 commands, 1m15s"]
    assert p.fraction() is None and p.remaining() is None


def test_a_total_exceeded_is_raised_so_percent_stays_at_most_100():
    p, lines, clock = plain(10, every=0)
    clock.t += 10
    p.update(15)
    assert p.total == 15 and p.fraction() == 1.0
    assert lines[-1].startswith("  5.10: make zImage: 100 % (15/15 commands), 0m10s, about 0m00s left")


def test_advance_and_boot_rounds_eta():
    lines: list[str] = []
    clock = Clock()
    p = Progress("  boot rounds", total=10, unit="boots", say=lines.append, every=0, clock=clock, tty=False)
    for _ in range(4):
        clock.t += 6
        p.advance()
    assert lines[-1] == "  boot rounds: 40 % (4/10 boots), 0m24s, about 0m36s left"


def test_a_terminal_gets_a_bar_and_callers_lines_above_it():
    out = io.StringIO()
    said: list[str] = []
    with Progress("  5.10: make zImage", total=200, unit="commands", say=said.append, stream=out, tty=True) as p:
        p.update(50)
        p.say("  run 1/5 5.10: ok")
    text = out.getvalue()
    assert "5.10: make zImage" in text and "25%" in text and "50/200" in text
    assert said == ["  run 1/5 5.10: ok"]


def test_durations():
    assert fmt_duration(0) == "0m00s" and fmt_duration(61.9) == "1m01s" and fmt_duration(3725) == "1h02m"


# --- the long steps that report progress ------------------------------------------


def _counts(lines: list[str], unit: str) -> list[tuple[int, int]]:
    import re

    return [(int(a), int(b)) for a, b in re.findall(rf"\((\d+)/(\d+) {unit}\)", "\n".join(lines))]


def _every_line(monkeypatch, module) -> None:
    """A plain line at every count (the module's Progress prints at most every 20 s)."""
    import functools

    monkeypatch.setattr(module, "Progress", functools.partial(module.Progress, every=0, tty=False))


def test_extraction_counts_megabytes_of_the_tarball(tmp_path, monkeypatch):
    import io
    import random
    import tarfile

    from bringup.builder import sources

    _every_line(monkeypatch, sources)
    tb = tmp_path / "linux-x.tar"
    with tarfile.open(tb, "w") as tf:
        for i in range(3):  # three 1.5 MB members that do not compress
            data = random.Random(i).randbytes(3 * 2**19)
            ti = tarfile.TarInfo(f"linux-x/part{i}")
            ti.size = len(data)
            tf.addfile(ti, io.BytesIO(data))
    lines: list[str] = []
    sources.safe_extract(tb, tmp_path / "out", lines.append)
    assert lines[0] == "extracting linux-x.tar (5 MB)", lines
    counts = _counts(lines, "MB")
    assert counts and all(total == 5 for _, total in counts), lines
    done = [d for d, _ in counts]
    assert done == sorted(done) and done[-1] == 5 and len(set(done)) >= 3, lines
    assert (tmp_path / "out" / "linux-x" / "part2").stat().st_size == 3 * 2**19


def test_download_counts_megabytes_against_the_content_length(tmp_path, monkeypatch):
    import functools
    import hashlib
    import http.server
    import random
    import threading

    from bringup.builder import sources

    _every_line(monkeypatch, sources)
    www = tmp_path / "www"
    www.mkdir()
    data = random.Random(7).randbytes(3 * 2**20 + 5)
    (www / "linux-y.tar.xz").write_bytes(data)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(www))
    handler.log_message = lambda *a: None  # type: ignore[attr-defined]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    lines: list[str] = []
    monkeypatch.delenv("BRINGUP_DL_DIR", raising=False)
    try:
        url = f"http://127.0.0.1:{server.server_port}/linux-y.tar.xz"
        got = sources.fetch_url(url, hashlib.sha256(data).hexdigest(), tmp_path / "dl", log=lines.append)
    finally:
        server.shutdown()
        server.server_close()
    assert got.read_bytes() == data
    counts = _counts(lines, "MB")
    assert [t for _, t in counts] == [4] * len(counts) and [d for d, _ in counts] == [1, 2, 3, 4], lines
    assert any("downloading linux-y.tar.xz: 100 % (4/4 MB)" in line for line in lines), lines


def test_an_lmbench_pass_says_each_benchmark_with_percent(monkeypatch):
    import re

    from bringup.measure import footprint
    from bringup.model.benchset import load_set

    bset = load_set()
    names = [b.name for b in bset.bench if b.quick]
    assert len(names) >= 3
    guest_text = "".join(f"@@@ BEGIN {n} @@@\nsome output\n@@@ END {n} rc=0 @@@\n" for n in names)
    guest_text += "@@@ RUNNER DONE 0\n"

    class Exp:
        """pexpect's spawn as run_benchmarks uses it, over the guest's canned output."""

        pos, before, after = 0, "", ""

        def sendline(self, line: str) -> None:
            assert line.startswith("bringup-bench")

        def expect(self, pattern: str, timeout: float) -> int:
            m = re.compile(pattern).search(guest_text, self.pos)
            assert m, pattern
            self.before, self.after, self.pos = guest_text[self.pos : m.start()], m.group(0), m.end()
            return 0

    lines: list[str] = []
    monkeypatch.setattr(footprint, "Progress", __import__("functools").partial(footprint.Progress, tty=False))
    text = footprint.run_benchmarks(Exp(), bset, "quick", 1.0, lines.append)
    assert text.count("@@@ BEGIN") == len(names)
    assert _counts(lines, "benchmarks") == [(i, len(names)) for i in range(1, len(names) + 1)], lines
    assert lines[-1].startswith("    lmbench pass: 100 %") and lines[-1].endswith(names[-1]), lines
