"""A log's text as it reaches people, made plain again.  Pure, streaming.

A console log pasted into a mail, a wiki or a bug report arrives quoted (`> `,
`>> `), indented, with CRLF line ends, terminal escapes, bytes that are not
UTF-8, or as the output of a tool that prefixes every line (syslog, journalctl,
`dmesg -T`, grabserial).  `LogText` reads such a file once, in bounded memory,
decides from its first lines what it is (and says so: `info()`), and yields each
line as `(line number, host time or None, text)` with the wrapping taken off, the
printk time (`[    0.000000] `) left in place for the scanner.

Line prefixes (`stamps`), one per log:

  stamped            grabserial and bringup: `[abs delta] text`; abs is the host time
  printk             `[    1.234567] text` (dmesg, a console with printk times); kept
  kmsg               /dev/kmsg records `6,123,4567890,-;text` (printk time in us)
  dmesg-x            `dmesg -x`: `kern  :info  : [    1.2] text`
  journal-monotonic  `journalctl -k -o short-monotonic`: `[    1.2] host kernel: text`
  syslog             syslog files and `journalctl -k`: `Mar  5 10:11:12 host kernel: text`,
                     also with a weekday and year and `kern.info` (OpenWrt's logread);
                     host time = time of day, relative to the first line
  syslog-iso         the same with an ISO date (`journalctl -o short-iso`, RFC 3339 syslog)
  dmesg-T            `[Tue Mar  5 10:11:12 2024] text`; host time as above (1 s steps)
  host-clock         a terminal program's stamps `[10:11:12.345] ` or `[2024-03-05 10:11:12] `
  ts                 moreutils' `ts` by default: `Mar 05 10:11:12 text` (no host, no "prog:")
  host-clock-bare    the same as host-clock without brackets, with a fraction of a second (`ts '%.T'`,
                     `ts '%F %.T'`, a capture script, LAVA's logs with a UTC offset and two
                     spaces): `10:11:12.345678 text`, `2021-02-02 16:17:29.081000+00:00  text`
  renode             Renode's log of a UART: `12:34:56.7890 [INFO] uart0: [host: 0.38s (+0.38s)|virt:
                     0.5ms (+0.5ms)] text` (the time of day and the machine's name optional), a
                     peripheral's path without a level (`sysbus.uart0: text`), 1.x's
                     `[DEBUG] cpu.uart: [+0.22s host +0s virt 0s virt from start] text`; host time =
                     the time of day, else the analyzer's host clock; the emulator's own lines
                     (`[WARNING] sysbus: ...`) keep their `name: text`
  sim-level          a simulator's or build tool's level before every line (sbt running a
                     SpinalHDL/VexRiscv simulation: `[info] U-Boot 2019.10 ...`); no host time
  raw                none

Besides: a `<N>` printk level before the text is taken off (and a line is split
where one appears inside it, as when a message was printed after an unfinished
one); UTF-16 with a byte order mark is decoded; NUL and other control bytes,
backspaces and ANSI escapes are removed; undecodable bytes become U+FFFD.
"""

from __future__ import annotations

import html
import io
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import BinaryIO

from bringup.parse.errors import ParseError
from bringup.parse.logstamps import (
    DESCRIBE,
    LEVEL_RE,
    RENODE_OLD_RE,
    RENODE_UART_RE,
    STAMP_RE,
    UNIT_S,
    seconds,
    stamp,
    which_stamps,
)

MAX_LINE = 64 * 1024  # longer lines are cut (the rest of the line is read and dropped)
HEAD_LINES = 200  # non-blank lines read ahead to tell the format
QP_RESTS_NEEDED = 4  # rests of cut lines needed to tell their own indentation
HEAD_MAX = 2000  # ... looking at no more lines than this
HEAD_BYTES = 1 << 20  # ... nor more bytes
BINARY_SHARE = 0.25  # more non-text than this in the head: not a log

ANSI_RE = re.compile(
    r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[()*+][0-9A-Za-z]|[ -/]*[0-~])|\x9b[0-?]*[ -/]*[@-~]"
)
# a colour escape whose ESC byte was lost (a mail archive, a copy from a web page): "[0;32m",
# "[0;1;39m", "[0m"; taken off when unmistakable: with a ';', a reset, or two on a line; "[m"
# before a letter is a word in brackets ("[mem 0x00000000-0x0fffffff]" of every 4.x+ boot)
BARE_SGR_RE = re.compile(r"\[(?:(?:\d{1,3};)+\d{0,3}m|\d{1,3}m|m(?![A-Za-z]))")
CTRL_RE = re.compile(r"[\x00-\x07\x0b-\x1f\x7f]")  # what is left after escapes and backspaces (tab kept)
BS_RE = re.compile(r"[^\x08]\x08")
QUOTE_RE = re.compile(r"^[ \t]*(?:>[ \t]?)+")
# the inline formatting tags of a log pasted as a web page's source (`<pre>`, a colour's `<span>`)
TAG_RE = re.compile(r"</?(?:span|font|pre|code|tt|kbd|samp|b|i|u|em|strong)(?:\s[^<>]*)?>", re.IGNORECASE)
ENTITY_RE = re.compile(r"&(?:lt|gt|amp|quot|apos|nbsp|#\d{1,5}|#x[0-9a-fA-F]{1,4});")  # a log copied from a web page
MID_LEVEL_RE = re.compile(r"(?<=\S)<[0-7]>(?=\S)")
# a mail body or attachment left quoted-printable: "=3D" for "=", lines cut at 76 with "=" at the end
QP_ESC_RE = re.compile(r"(?:=[0-9A-F]{2})+")
QP_MARK_RE = re.compile(r"=(?:3D|20|09)")


class _Prefixed(io.RawIOBase):
    """A stream with some bytes already read put back in front."""

    def __init__(self, first: bytes, rest: BinaryIO):
        self._first, self._rest = first, rest

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        if self._first:
            n = min(len(b), len(self._first))
            b[:n] = self._first[:n]
            self._first = self._first[n:]
            return n
        data = self._rest.read(len(b))
        b[: len(data)] = data
        return len(data)


@dataclass
class TextStats:
    """What was found in (and taken off) a log's text, counted as it is read."""

    encoding: str = "utf-8"
    crlf_lines: int = 0
    ansi_lines: int = 0
    control_chars: int = 0
    non_utf8_lines: int = 0
    level_prefixes: int = 0
    split_lines: int = 0
    stamped_lines: int = 0
    html_lines: int = 0
    quoted_lines: int = 0
    cr_lines: int = 0  # 1 when CR alone ends the lines
    qp_joins: int = 0  # quoted-printable soft line breaks joined
    bare_ansi_lines: int = 0  # lines with colour escapes that had lost their ESC byte


def _physical_lines(f: BinaryIO, stats: TextStats) -> Iterator[bytes]:
    """Lines as bytes (UTF-16 recoded to UTF-8), each cut at MAX_LINE, in bounded memory."""
    first = f.read(4096)
    stream = io.BufferedReader(_Prefixed(first, f))
    half = len(first) // 2
    # UTF-16 without a byte order mark: ASCII text has every other byte NUL, and only those
    utf16le = half >= 32 and first[1::2].count(0) > 0.4 * half and first[0::2].count(0) < 0.05 * half
    if first.startswith((b"\xff\xfe", b"\xfe\xff")) or utf16le:
        enc = "utf-16" if first.startswith((b"\xff\xfe", b"\xfe\xff")) else "utf-16-le"
        stats.encoding = enc
        text = io.TextIOWrapper(stream, encoding=enc, errors="replace", newline="\n")
        while True:
            line = text.readline(MAX_LINE)
            if not line:
                return
            if not line.endswith("\n"):
                tail = line
                while tail and not tail.endswith("\n"):
                    tail = text.readline(MAX_LINE)
            yield line.encode("utf-8")
    if first.startswith(b"\xef\xbb\xbf"):
        stream.read(3)
    if b"\r" in first and b"\n" not in first:  # CR alone ends the lines (some terminal captures)
        stats.cr_lines = 1
        yield from _cr_lines(stream)
        return
    while True:
        chunk = stream.readline(MAX_LINE)
        if not chunk:
            return
        if not chunk.endswith(b"\n"):
            rest = chunk
            while rest and not rest.endswith(b"\n"):
                rest = stream.readline(MAX_LINE)
        yield chunk


def _cr_lines(stream: BinaryIO) -> Iterator[bytes]:
    """Lines ended by CR alone (or CR LF), each cut at MAX_LINE."""
    buf, skipping = b"", False  # skipping: the rest of a line longer than MAX_LINE
    while True:
        chunk = stream.read(MAX_LINE)
        *lines, buf = (buf + chunk.replace(b"\r\n", b"\r")).split(b"\r")
        for line in lines:
            if skipping:
                skipping = False
                continue
            yield line.lstrip(b"\n")[:MAX_LINE] + b"\n"
        if len(buf) > MAX_LINE:
            if not skipping:
                yield buf[:MAX_LINE] + b"\n"
            buf, skipping = b"", True
        if not chunk:
            break
    if buf and not skipping:
        yield buf[:MAX_LINE]


def clean(raw: bytes, stats: TextStats) -> str:
    """One physical line as plain text: decoded, no CR, no escapes, no control bytes."""
    try:
        s = raw.decode("utf-8")
    except UnicodeDecodeError:
        s = raw.decode("utf-8", errors="replace")
        stats.non_utf8_lines += 1
    s = s.removesuffix("\n")
    if "\r" in s:
        if s.endswith("\r"):
            stats.crlf_lines += 1
        s = s.replace("\r", "")
    if "\x1b" in s or "\x9b" in s:
        s, k = ANSI_RE.subn("", s)
        stats.ansi_lines += k > 0
    if "m" in s and "[" in s:
        s = _bare_sgr(s, stats)
    if "\x08" in s:
        for _ in range(len(s)):
            s, k = BS_RE.subn("", s, count=1)
            if not k:
                break
        s = s.replace("\x08", "")
    if CTRL_RE.search(s):
        s, k = CTRL_RE.subn("", s)
        stats.control_chars += k
    return s


def _bare_sgr(s: str, stats: TextStats) -> str:
    """A line without the colour escapes that lost their ESC byte ("[[0;32m  OK  [0m] ...")."""
    found = BARE_SGR_RE.findall(s)
    if found and (len(found) >= 2 or any(";" in f or f in ("[0m", "[m") for f in found)):
        stats.bare_ansi_lines += 1
        return BARE_SGR_RE.sub("", s)
    return s


def _non_text(raw: bytes, text: str) -> tuple[int, int]:
    """(bytes that are not text, all bytes) of one physical line: control bytes other
    than tab, CR, LF, FF, BS and ESC, and bytes that are not UTF-8."""
    bad = sum(1 for b in raw if (b < 0x20 and b not in (9, 10, 12, 13, 8, 27)) or b == 0x7F)
    bad += text.count("\ufffd") - raw.count(b"\xef\xbf\xbd")
    return bad, len(raw)


class LogText:
    """Read a log once: `info()` says what it was taken to be, `lines()` yields its lines."""

    def __init__(self, f: BinaryIO, name: str = "input", what: str = "a boot log", console: bool = True):
        """what: what the input is not, when it is not text ("a boot log"); console: a console or kernel
        log (line prefixes, '<N>' levels); else plain text (lmbench output)."""
        self.name, self.console = name, console
        self.stats = TextStats()
        self._raw = _physical_lines(f, self.stats)
        head: list[str] = []
        bad = total = nonblank = 0
        for raw in self._raw:
            text = clean(raw, self.stats)
            b, t = _non_text(raw, raw.decode("utf-8", errors="replace"))
            bad, total = bad + b, total + t
            head.append(text)
            nonblank += bool(text.strip())
            if nonblank >= HEAD_LINES or len(head) >= HEAD_MAX or total >= HEAD_BYTES:
                break
        if total == 0:
            raise ParseError(f"{name}: not {what} (empty)")
        if bad > BINARY_SHARE * total:  # before 'blank': NUL bytes clean() removes are binary, not blank
            raise ParseError(
                f"{name}: not {what} (binary data: {100 * bad // total} % of its first {total} bytes are not text)"
            )
        if not any(line.strip() for line in head):
            raise ParseError(f"{name}: not {what} (empty)")
        self.html = any(ENTITY_RE.search(line) or TAG_RE.search(line) for line in head)
        if self.html:
            head = [self._unescape(line) for line in head]
        self._head = head
        self.physical_lines = 0
        soft = sum(1 for line in head if line.endswith("=") and not line.endswith("=="))
        self.qp = soft >= 2 and any(QP_MARK_RE.search(line) for line in head)
        # the indentation of the text, after a console's '<N>' level when the lines have one (an
        # indented copy of a log whose console then added levels: '<6>    text')
        self.indent = _indent([LEVEL_RE.sub("", line, count=1) for line in head] if console else head)
        # a quoted-printable text indented before its lines were cut (a mail quoting a log): the
        # indentation of the lines, not of the rest of a line a soft break cut
        starts = [self._unwrap(x) for i, x in enumerate(head) if not (i and _soft(head[i - 1]))]
        self.qp_indent = _indent(starts) if self.qp else None
        # and the rest of a cut line indented too (a whole mail pasted as an indented block):
        # the indent all of those rests share, when there are enough of them to tell
        rests = [self._unwrap(x) for i, x in enumerate(head) if i and _soft(head[i - 1])] if self.qp else []
        self.qp_rest_indent = _indent(rests) if len(rests) >= QP_RESTS_NEEDED else None
        self.stats.quoted_lines = 0
        qpi = self.qp_indent or ""
        starts = [x[len(qpi) :] if qpi and x.startswith(qpi) else x for x in map(self._unwrap, head)]
        self.stamps = which_stamps(starts) if console else "raw"
        self.stats.quoted_lines = 0  # counted again as the lines are read
        self._t0: float | None = None
        self._renode_s = 0.0  # Renode 1.x: the analyzer's host time, summed from its steps
        self._renode_clock: bool | None = None  # Renode: host times from the time of day, or the analyzer's

    def _unescape(self, s: str) -> str:
        tagged = "<" in s and TAG_RE.search(s) is not None
        if tagged:
            s = TAG_RE.sub("", s)
        if "&" in s and ENTITY_RE.search(s):
            self.stats.html_lines += 1
            return html.unescape(s).replace("\xa0", " ")
        self.stats.html_lines += tagged
        return s

    def _unwrap(self, s: str) -> str:
        if s[:1] in (">", " ", "\t"):  # a mail quote, on any line: logs never begin a line with '>'
            s, k = QUOTE_RE.subn("", s, count=1)
            self.stats.quoted_lines += k
        if self.indent and s.startswith(self.indent):
            s = s[len(self.indent) :]
        return s

    def info(self) -> dict:
        """What the text was taken to be, and what was taken off it."""
        st = asdict(self.stats)
        words = [DESCRIBE[self.stamps] if self.console else "plain text"]
        if st["encoding"] != "utf-8":
            words.append(f"decoded from {st['encoding'].upper()}")
        if st["cr_lines"]:
            words.append("lines ended by CR alone")
        if st["quoted_lines"]:
            words.append(f"{st['quoted_lines']} mail-quoted lines ('>' taken off)")
        if st["qp_joins"]:
            words.append(f"quoted-printable ({st['qp_joins']} soft line breaks joined, '=XX' decoded)")
        if self.indent:
            words.append(f"indented by {self.indent!r} (taken off)")
        if self.qp_indent:
            words.append(f"its quoted-printable lines indented by {self.qp_indent!r} (taken off)")
        if self.qp_rest_indent:
            words.append(f"the rests of its cut lines indented by {self.qp_rest_indent!r} (taken off)")
        for key, what in (
            ("crlf_lines", "CRLF line ends"),
            ("ansi_lines", "lines with ANSI escapes (removed)"),
            ("bare_ansi_lines", "lines with colour escapes that lost their ESC byte (removed)"),
            ("non_utf8_lines", "lines with bytes that are not UTF-8 (shown as U+FFFD)"),
            ("level_prefixes", "'<N>' printk level prefixes (taken off)"),
            ("split_lines", "lines split where a '<N>' level began a new message"),
            ("control_chars", "control bytes (removed)"),
            ("html_lines", "lines with HTML entities or tags (decoded, tags taken off: a copy from a web page)"),
        ):
            if st[key]:
                words.append(f"{st[key]} {what}")
        return {
            "stamps": self.stamps,
            "quoted": bool(st["quoted_lines"]),
            "indent": self.indent,
            **st,
            "assumed": "; ".join(words),
        }

    def _texts(self) -> Iterator[str]:
        yield from self._head
        for raw in self._raw:
            text = clean(raw, self.stats)
            yield self._unescape(text) if self.html else text

    def lines(self) -> Iterator[tuple[int, float | None, str]]:
        """(physical line number, host time, text); a quoted-printable line cut by a soft
        break ('=' at its end) is joined with the next and numbered as its first line.
        `physical_lines` counts the lines read so far (joined ones too)."""
        n = 0
        pending: tuple[int, str] | None = None
        for text in self._texts():
            n += 1
            self.physical_lines = n
            if not self.qp:
                yield from self._split(n, *self._line(text))
                continue
            text = self._unwrap(text)
            first = n
            if pending is not None:
                if self.qp_rest_indent and text.startswith(self.qp_rest_indent):
                    text = text[len(self.qp_rest_indent) :]
                first, text = pending[0], pending[1] + text
                pending = None
            elif self.qp_indent and text.startswith(self.qp_indent):
                text = text[len(self.qp_indent) :]
            if text.endswith("=") and len(text) < MAX_LINE:
                pending = (first, text[:-1])
                self.stats.qp_joins += 1
                continue
            yield from self._split(first, *self._line(self._qp(text), unwrapped=True))
        if pending is not None:
            yield from self._split(pending[0], *self._line(self._qp(pending[1]), unwrapped=True))

    def _qp(self, text: str) -> str:
        """=XX escapes decoded (UTF-8 sequences too); escapes and control bytes they make removed."""
        if "=" not in text:
            return text
        text = QP_ESC_RE.sub(lambda m: bytes.fromhex(m.group().replace("=", "")).decode("utf-8", "replace"), text)
        if "\x1b" in text:
            text = ANSI_RE.sub("", text)
        return CTRL_RE.sub("", text)

    def _split(self, n: int, host: float | None, text: str) -> Iterator[tuple[int, float | None, str]]:
        if self.console and "<" in text and MID_LEVEL_RE.search(text):
            parts = MID_LEVEL_RE.split(text)
            self.stats.split_lines += 1
            for part in parts:
                yield n, host, part
        else:
            yield n, host, text

    def _line(self, text: str, unwrapped: bool = False) -> tuple[float | None, str]:
        if not unwrapped:
            text = self._unwrap(text)
        m = LEVEL_RE.match(text) if self.console else None
        if m:
            text = text[m.end() :]
            self.stats.level_prefixes += 1
            if text[:1] == ">" or (self.indent and text.startswith(self.indent)):
                text = self._unwrap(text)  # the level of a console that printed a quoted or indented line
        if self.stamps in ("printk", "raw"):
            return None, text
        m = STAMP_RE[self.stamps].match(text)
        if not m:
            return None, text
        self.stats.stamped_lines += 1
        if self.stamps == "renode":
            return self._renode(m)
        host, text = stamp(self.stamps, m)
        if host is not None and self.stamps not in ("stamped",):
            if self._t0 is None:
                self._t0 = host
            host = host - self._t0
            if host < -43200:  # past midnight (or new year) of a time of day
                host += 86400 if self.stamps not in ("syslog", "ts", "syslog-host") else 365 * 86400
            host = round(host, 6)
        return host, text

    def _renode(self, m: re.Match) -> tuple[float | None, str]:
        """A Renode log line: a UART's text with its host time, or the emulator's own line."""
        hh, mm, ss, frac, name, bare, rest = m.groups()
        clock = seconds(2000, 1, 1, int(hh), int(mm), int(ss), frac) if hh else None
        u, old = RENODE_UART_RE.match(rest), RENODE_OLD_RE.match(rest)
        if u is None and old is None:
            # a peripheral's path without a level ("sysbus.uart0: text"): the UART's words; with a
            # level and no analyzer clocks, the emulator's own message, never a console line
            text = rest if bare else f"{name}: {rest}"
            host = clock
        else:
            text = (u or old).group(3)  # type: ignore[union-attr]
            if old is not None:  # 1.x: the host time since the line before
                self._renode_s += float(old.group(1)) * UNIT_S[old.group(2)]
                analyzer = self._renode_s
            else:
                analyzer = float(u.group(1)) * UNIT_S[u.group(2)]  # type: ignore[union-attr]
            host = clock if clock is not None else analyzer
        if self._renode_clock is None and host is not None:  # one clock per log: the first line's
            self._renode_clock = clock is not None
        if host is not None and self._renode_clock != (clock is not None):
            host = None
        if host is None:
            return None, text
        if self._t0 is None:
            self._t0 = host
        host -= self._t0
        if host < -43200:  # past midnight
            host += 86400
        return round(host, 6), text


def _soft(line: str) -> bool:
    """Whether a quoted-printable line ends with a soft break."""
    return line.endswith("=") and not line.endswith("==")


def _unquoted_for_indent(s: str) -> str:
    """A line as its indentation counts: a mail-quoted line ('> text') by the text after
    the quote, a quote indented with the rest of the text ('    > text', an indented
    copy of a quoted log) by the whitespace before it."""
    m = QUOTE_RE.match(s)
    if m is None:
        return s
    lead = s[: len(s) - len(s.lstrip(" \t"))]
    return lead + ">" if lead else s[m.end() :]


def _indent(head: list[str]) -> str | None:
    """The indentation 90 % of the (unquoted) non-blank lines share, if any (two levels:
    a tab before a Markdown block's four spaces)."""
    lines = [_unquoted_for_indent(s) for s in head]
    lines = [s for s in lines if s.strip()]
    found = ""
    for _ in range(2):
        cand = next(
            (
                c
                for c in ("\t", " " * 8, " " * 4, " " * 3, " " * 2, " ")
                if lines and sum(1 for s in lines if s.startswith(found + c)) >= 0.9 * len(lines)
            ),
            None,
        )
        if cand is None:
            break
        found += cand
    return found or None
