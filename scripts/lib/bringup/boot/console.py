"""The serial console: any pyserial URL, every line stamped on arrival.

  /dev/ttyUSB0 (with a baud rate), socket://127.0.0.1:PORT (QEMU),
  rfc2217://host:port (ser2net, labgrid exporter), loop:// (tests)

A reader thread owns the port.  When bytes arrive it takes the host's
monotonic time, and a line's time is the time its *first* byte arrived.
Matching runs elsewhere (the boot engine reads `lines`, dialogues use the
pexpect object from `expect()`), so a slow match never delays a timestamp.
Raw bytes are kept as received; text is decoded with replacement, so bytes
that are not UTF-8 break nothing.
"""

from __future__ import annotations

import codecs
import contextlib
import select
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, TextIO

import pexpect
import serial
from pexpect.spawnbase import SpawnBase

from bringup.errors import BootFailed


@dataclass
class Line:
    t: float  # host seconds since t0, when the line's first byte arrived
    text: str  # decoded, without the line ending
    n: int  # 1-based line number


class ConsoleClosed(BootFailed):
    pass


class _LogFailed(Exception):
    """console.log or console.raw could not be written (a full disk): the console stops, and
    its reason names the file."""


class Console:
    def __init__(
        self,
        url: str,
        baud: int = 115200,
        t0: float | None = None,
        log_path: Path | None = None,
        raw_path: Path | None = None,
        connect_timeout: float = 10.0,
    ):
        self.url, self.baud = url, baud
        self.t0 = time.monotonic() if t0 is None else t0
        self.lines: list[Line] = []
        self.closed_reason: str | None = None
        self._log_path, self._raw_path = log_path, raw_path
        self._cond = threading.Condition()
        self._partial = bytearray()
        self._partial_t: float | None = None
        self._pending: deque[bytes] = deque()  # raw bytes not yet consumed by a dialogue
        self._stop = threading.Event()
        self._last_t = 0.0
        with contextlib.ExitStack() as files:  # the logs are closed if the port cannot be opened
            self._log: TextIO | None = files.enter_context(open(log_path, "w", encoding="utf-8")) if log_path else None
            self._raw: BinaryIO | None = files.enter_context(open(raw_path, "wb")) if raw_path else None
            self.ser = self._open(connect_timeout)
            self._files = files.pop_all()  # from now on close() closes them
        self._thread = threading.Thread(target=self._reader, name="console-reader", daemon=True)
        self._thread.start()

    # -- port ---------------------------------------------------------------
    def _open(self, connect_timeout: float) -> serial.SerialBase:
        deadline = time.monotonic() + connect_timeout
        while True:
            try:
                s = serial.serial_for_url(self.url, baudrate=self.baud, timeout=0, do_not_open=True)
                # pyserial's open() ends with reset_input_buffer(), which throws away
                # bytes that arrived already: on a socket that is the start of the boot
                # (so shadow the method on this instance while it opens: assigning to a
                # method is what mypy refuses, and here it is the intent)
                s.reset_input_buffer = lambda: None  # type: ignore[method-assign]
                s.open()
                del s.reset_input_buffer
                return s
            except (serial.SerialException, OSError, ValueError) as e:
                # QEMU may not listen yet; a device may not exist yet (USB re-enumeration)
                if time.monotonic() > deadline:
                    raise ConsoleClosed(f"serial console {self.url}: cannot open: {e}") from e
                time.sleep(0.002)  # QEMU holds the guest until we connect: every ms counts

    def write(self, data: bytes | str) -> None:
        if isinstance(data, str):
            data = data.encode()
        try:
            self.ser.write(data)
            self.ser.flush()
        except (serial.SerialException, OSError) as e:
            raise ConsoleClosed(f"serial console {self.url}: write failed: {e}") from e

    # -- reader -------------------------------------------------------------
    def _reader(self) -> None:
        fileno = None
        try:
            fileno = self.ser.fileno()
        except (AttributeError, NotImplementedError, serial.SerialException, OSError, ValueError):
            fileno = None
        try:
            while not self._stop.is_set():
                if fileno is not None:
                    r, _, _ = select.select([fileno], [], [], 0.1)
                    if not r:
                        continue
                    t = time.monotonic()
                    data = self.ser.read(65536)
                    if not data:
                        # readable but nothing: the peer closed the connection
                        if self.url.startswith("socket://"):
                            raise serial.SerialException("connection closed by the other end")
                        continue
                else:
                    data = self.ser.read(65536)
                    t = time.monotonic()
                    if not data:
                        time.sleep(0.001)
                        continue
                self._feed(data, t)
        except _LogFailed as e:  # the boot cannot be recorded: said as the file, not as the console
            self.closed_reason = str(e)
        except (serial.SerialException, OSError, TypeError, ValueError) as e:
            if not self._stop.is_set():
                self.closed_reason = f"serial console {self.url} gone: {e}"
        finally:
            with self._cond, contextlib.suppress(_LogFailed):
                self._flush_partial()
                if self.closed_reason is None and not self._stop.is_set():
                    self.closed_reason = f"serial console {self.url} closed"
                self._cond.notify_all()

    def _feed(self, data: bytes, arrived: float) -> None:
        """data arrived at time.monotonic() `arrived`; stamped against t0 under the lock,
        so that a rebase() never sees a stamp on the old t0."""
        if self._raw:
            try:
                self._raw.write(data)
                self._raw.flush()
            except OSError as e:
                self._log_failed(e, self._raw_path)
        with self._cond:
            t = arrived - self.t0
            self._pending.append(data)
            start = 0
            while True:
                if self._partial_t is None and start < len(data):
                    self._partial_t = t
                nl = data.find(b"\n", start)
                if nl < 0:
                    self._partial.extend(data[start:])
                    break
                self._partial.extend(data[start:nl])
                self._emit(self._partial, self._partial_t if self._partial_t is not None else t)
                self._partial = bytearray()
                self._partial_t = None
                start = nl + 1
            self._cond.notify_all()

    def _emit(self, raw: bytes | bytearray, t: float) -> None:
        text = bytes(raw).decode("utf-8", errors="replace").replace("\r", "")
        line = Line(t=t, text=text, n=len(self.lines) + 1)
        self.lines.append(line)
        if self._log:
            try:
                self._log.write(format_line(t, t - self._last_t, text) + "\n")
                self._log.flush()
            except OSError as e:
                self._log_failed(e, self._log_path)
        self._last_t = t

    def _log_failed(self, e: OSError, path: Path | None) -> None:
        """Writing a console log failed: no more writes (closing them later writes nothing), and
        the reader stops with a reason naming the file."""
        self._log = self._raw = None
        raise _LogFailed(f"{path}: not written: {e.strerror or e}")

    def _flush_partial(self) -> None:
        if self._partial:
            self._emit(self._partial, self._partial_t or 0.0)
            self._partial = bytearray()
            self._partial_t = None

    def partial(self) -> Line | None:
        """The line being received (no newline yet): prompts end this way."""
        with self._cond:
            if not self._partial:
                return None
            text = bytes(self._partial).decode("utf-8", errors="replace").replace("\r", "")
            return Line(t=self._partial_t or 0.0, text=text, n=len(self.lines) + 1)

    def wait(self, n_lines: int, timeout: float) -> bool:
        """Block until more than n_lines lines exist, the port closes, or timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: len(self.lines) > n_lines or bool(self.closed_reason), timeout=timeout)

    def now(self) -> float:
        return time.monotonic() - self.t0

    def rebase(self, t0: float) -> None:
        """Count host time from t0 from now on, and for the lines already received: the
        console of a bench board is opened before power-on, and t0 is power-on.  Lines
        received before it get negative times; console.log is rewritten to match."""
        with self._cond:
            shift = self.t0 - t0
            if shift == 0:
                return
            self.t0 = t0
            for line in self.lines:
                line.t += shift
            if self._partial_t is not None:
                self._partial_t += shift
            self._last_t += shift
            if self._log:
                self._log.seek(0)
                self._log.truncate()
                prev = 0.0
                for line in self.lines:
                    self._log.write(format_line(line.t, line.t - prev, line.text) + "\n")
                    prev = line.t
                self._log.flush()

    # -- dialogues ----------------------------------------------------------
    def expect(self, timeout: float = 30.0) -> ConsoleExpect:
        """A pexpect object reading this console's bytes (from where the last
        dialogue stopped) and writing to it."""
        return ConsoleExpect(self, timeout)

    def _take(self, size: int, timeout: float | None) -> bytes:
        deadline = time.monotonic() + (timeout if timeout is not None else 1e9)
        with self._cond:
            while not self._pending:
                if self.closed_reason:
                    raise pexpect.EOF(self.closed_reason)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise pexpect.TIMEOUT("timeout")
                self._cond.wait(left)
            chunk = self._pending.popleft()
            if len(chunk) > size:
                self._pending.appendleft(chunk[size:])
                chunk = chunk[:size]
            return chunk

    # -- end ----------------------------------------------------------------
    def close(self) -> None:
        self._stop.set()
        with contextlib.suppress(Exception):
            self.ser.close()
        self._thread.join(timeout=2)
        with self._cond, contextlib.suppress(_LogFailed):
            self._flush_partial()
        try:
            self._files.close()
        except OSError:
            if self._log_path is not None and self._log is None:  # a log that failed: said already
                return
            raise

    def __enter__(self) -> Console:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ConsoleExpect(SpawnBase):
    """pexpect over a Console: expect()/sendline() for bootloader and shell dialogues."""

    # set by SpawnBase.__init__ (with encoding, a codec pair); types-pexpect does not declare them
    _decoder: codecs.IncrementalDecoder
    _encoder: codecs.IncrementalEncoder
    _log: Callable[[str, str], None]

    def __init__(self, console: Console, timeout: float):
        super().__init__(timeout=timeout, maxread=65536, encoding="utf-8", codec_errors="replace")
        self.console = console
        self.delaybeforesend = None  # pexpect's 50 ms default skews round-trip timings

    def read_nonblocking(self, size: int = 1, timeout: float | None = -1) -> str:
        if timeout == -1:
            timeout = self.timeout
        try:
            data = self.console._take(size, timeout)
        except pexpect.EOF:
            self.flag_eof = True
            raise
        s = self._decoder.decode(data, final=False)
        self._log(s, "read")
        return s

    def send(self, s: str | bytes) -> int:
        b = self._encoder.encode(s, final=False) if isinstance(s, str) else s
        self.console.write(b)
        return len(b)

    def sendline(self, s: str = "") -> int:
        return self.send(s + "\n")

    def isalive(self) -> bool:
        return self.console.closed_reason is None


def format_line(t: float, delta: float, text: str) -> str:
    """grabserial's timestamped format: [absolute delta] text."""
    return f"[{t:11.6f} {delta:9.6f}] {text}"
