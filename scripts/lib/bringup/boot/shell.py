"""A shell dialogue on a console: log in, run commands, get output and exit
status back reliably from a chatty console.

Each command is wrapped in markers (as labgrid does).  The marker is written
split in the command (`echo 'AB''CD'`), so the terminal's echo of the typed
command never matches; only the shell's output does.
"""

from __future__ import annotations

import contextlib
import re
import secrets
import threading
import time
from collections.abc import Callable

import pexpect

from bringup.errors import BootFailed

SLICE = 0.25  # seconds between looks at the cancel event while a step runs


def expect(exp, pattern, timeout: float, cancel: threading.Event | None = None) -> int:
    """exp.expect(pattern, timeout), in slices when a cancel event is given: once it is set
    (another worker of the study failed, Ctrl-C) the step stops as interrupted
    (KeyboardInterrupt) instead of running on for minutes."""
    if cancel is None:
        return exp.expect(pattern, timeout=timeout)
    deadline = time.monotonic() + timeout
    while True:
        if cancel.is_set():
            raise KeyboardInterrupt
        left = deadline - time.monotonic()
        try:
            return exp.expect(pattern, timeout=max(0.0, min(SLICE, left)))
        except pexpect.TIMEOUT:
            if left <= SLICE:
                raise


class Shell:
    def __init__(
        self,
        exp,
        prompt: str = "bringup-shell# ",
        factor: float = 1.0,
        cancel: threading.Event | None = None,
        why_closed: Callable[[], str] | None = None,
    ):
        self.exp = exp
        self.prompt = prompt
        self.factor = factor
        self.cancel = cancel
        self.why_closed = why_closed  # the console's end in words (QEMU killed, its exit code), from the session

    def _closed(self, e: pexpect.EOF) -> str:
        return self.why_closed() if self.why_closed is not None else f"console closed: {e}"

    def login(self, user: str = "root", timeout: float = 30.0) -> None:
        """At the login prompt: log in and wait for the shell prompt."""
        self.exp.sendline(user)
        try:
            i = self.exp.expect(
                [re.escape(self.prompt), r"[Pp]assword: ?$", r"Login incorrect"], timeout=timeout * self.factor
            )
        except pexpect.TIMEOUT:
            raise BootFailed(
                f"login as {user}: no shell prompt {self.prompt!r} within {timeout * self.factor:.0f}s"
            ) from None
        except pexpect.EOF as e:
            raise BootFailed(f"login as {user}: {self._closed(e)}") from None
        if i != 0:
            raise BootFailed(f"login as {user}: refused ({self.exp.after.strip()!r})")
        # quiet the kernel on the console so that its messages do not land in outputs
        self.run("echo 1 > /proc/sys/kernel/printk", timeout=10, name="quiet console")

    def run(self, cmd: str, timeout: float = 60.0, name: str | None = None) -> tuple[str, int]:
        """Run cmd; returns (output, exit status).  A timeout names the step."""
        a, b = secrets.token_hex(4), secrets.token_hex(4)
        begin, end = f"{a}{b}B", f"{a}{b}E"
        self.exp.sendline(f"echo '{a}''{b}B'; {cmd}; echo '{a}''{b}E' $?")
        step = name or cmd
        try:
            expect(self.exp, begin + r"\r?\n", timeout * self.factor, self.cancel)
            expect(self.exp, end + r" (\d+)\r?\n", timeout * self.factor, self.cancel)
        except pexpect.TIMEOUT:
            raise BootFailed(f"step '{step}' did not finish within {timeout * self.factor:.0f}s") from None
        except pexpect.EOF as e:
            raise BootFailed(f"step '{step}': {self._closed(e)}") from None
        out = self.exp.before.replace("\r\n", "\n").replace("\r", "")
        rc = int(self.exp.match.group(1))
        with contextlib.suppress(pexpect.TIMEOUT, pexpect.EOF):
            self.exp.expect(re.escape(self.prompt), timeout=10 * self.factor)
        return out, rc
