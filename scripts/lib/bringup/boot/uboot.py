"""The U-Boot dialogue: stop autoboot, bring up the network, load the kernel,
ramdisk (and dtb) over TFTP, boot.  Works on any pexpect-like console."""

from __future__ import annotations

import contextlib
import re
import time

import pexpect

from bringup.boot.target import Network
from bringup.errors import BootFailed, BringupError
from bringup.model.specs import UbootSpec

AUTOBOOT = r"Hit any key to stop autoboot|Press SPACE to abort autoboot|autoboot in \d+ seconds"
# the board went on booting: its bootloader started an image, or a kernel speaks
BOOTED_ANYWAY = r"## Booting kernel|Starting kernel \.\.\.|Uncompressing Linux|Linux version \d"
ERRORS = [
    r"TFTP error",
    r"Retry count exceeded",
    r"Unknown command",
    r"Wrong Image Format",
    r"Bad Magic Number",
    r"Bad Data CRC",
    r"ERROR: ",
    r"File not found",
    r"Error: ",
]


# U-Boot's shells (hush, and the old simple parser) strip single quotes and expand
# nothing inside them.  Refused: a quote (it would end the quoting), a control
# character (a newline ends the command), and ';', '$', '`', '\' (the two parsers
# and old versions such as PPCBoot's treat them differently, some even in quotes)
_UNQUOTABLE = re.compile(r"['\\;$`\x00-\x1f\x7f]")


def quote(value: str) -> str:
    """value as one single-quoted word for U-Boot's shell: spaces, '#' and double
    quotes (kernel parameters such as dyndbg="file x.c +p") reach the variable as
    they are.  A value with a character no quoting makes safe is refused."""
    bad = sorted(set(_UNQUOTABLE.findall(value)))
    if bad:
        raise BringupError(f"kernel command line {value!r}: U-Boot's shell cannot pass {''.join(bad)!r} in bootargs")
    return f"'{value}'"


def commands(uboot: UbootSpec, files: dict, cmdline: str, net: Network) -> list[tuple[str, bool]]:
    """The command list: (command, expect_prompt_after)."""
    cmds = []
    if net.dhcp:
        cmds += [("setenv autoload no", True), ("dhcp", True)]
    elif net.ipaddr:
        cmds.append((f"setenv ipaddr {net.ipaddr}", True))
    if net.serverip:
        cmds.append((f"setenv serverip {net.serverip}", True))
    cmds.append((f"setenv bootargs {quote(cmdline)}", True))
    cmds.append((f"tftpboot {uboot.kernel_addr} {files['kernel']}", True))
    initrd = "-"
    if files.get("initrd"):
        cmds.append((f"tftpboot {uboot.initrd_addr} {files['initrd']}", True))
        initrd = str(uboot.initrd_addr)
    fdt = uboot.fdt
    if files.get("dtb"):
        cmds.append((f"tftpboot {uboot.fdt_addr} {files['dtb']}", True))
        fdt = str(uboot.fdt_addr)
    boot = [uboot.boot_command, str(uboot.kernel_addr), initrd]
    if fdt:
        boot.append(fdt)
    cmds.append((" ".join(boot), False))
    return cmds


def run(exp, uboot: UbootSpec, files: dict, cmdline: str, net: Network, timeout: float = 60.0) -> None:
    prompt = re.escape(uboot.prompt)
    try:
        i = exp.expect([AUTOBOOT, prompt], timeout=timeout)
    except pexpect.TIMEOUT:
        raise BootFailed(f"U-Boot: no autoboot prompt or '{uboot.prompt}' within {timeout:.0f}s") from None
    except pexpect.EOF as e:
        raise BootFailed(f"U-Boot: console closed before the prompt: {e}") from None
    if i == 0:
        stop_autoboot(exp, uboot, prompt, 10)
    cmds = commands(uboot, files, cmdline, net)  # refuses an unquotable command line before anything is sent
    for cmd, wait_prompt in cmds:
        exp.sendline(cmd)
        if not wait_prompt:
            return
        idx = _expect(exp, [prompt, *ERRORS], f"'{cmd}'", timeout)
        if idx > 0:
            start = (exp.before or "").replace("\r", "").rsplit("\n", 1)[-1]
            matched = exp.after
            try:  # the rest of the error line
                exp.expect([r"\r?\n"], timeout=2)
                rest = exp.before
            except (pexpect.TIMEOUT, pexpect.EOF):
                rest = ""
            detail = (start + matched + rest).strip()
            raise BootFailed(f"U-Boot: '{cmd}' failed: {detail}")


def stop_autoboot(exp, uboot: UbootSpec, prompt: str, timeout: float) -> None:
    """Send the board's interrupt string until the prompt answers: a board may
    flush its input when the countdown starts, or want a whole stop string, so
    one key is not enough.  Echoes and extra prompts that the repeated interrupt
    caused are read away, so the first command starts on a quiet line."""
    deadline = time.monotonic() + timeout
    while True:
        exp.send(uboot.interrupt)
        try:
            if exp.expect([prompt, BOOTED_ANYWAY], timeout=uboot.interrupt_interval) == 1:
                raise BootFailed(
                    f"U-Boot: autoboot not stopped by the interrupt {uboot.interrupt!r}: "
                    f"the board booted on its own ({exp.after.strip()!r})"
                )
            break
        except pexpect.TIMEOUT:
            if time.monotonic() >= deadline:
                raise BootFailed(
                    f"U-Boot: autoboot not stopped: no prompt {uboot.prompt!r} within {timeout:.0f}s "
                    f"of sending the interrupt {uboot.interrupt!r} every {uboot.interrupt_interval}s"
                ) from None
        except pexpect.EOF as e:
            raise BootFailed(f"U-Boot: console closed while stopping autoboot: {e}") from None
    # what the last sends caused (a prompt per newline, echoed keys) arrives now
    with contextlib.suppress(pexpect.TIMEOUT, pexpect.EOF):
        while True:
            exp.expect([prompt], timeout=min(0.2, 2 * uboot.interrupt_interval))
    exp.sendline("")  # a fresh prompt: any echoed key is cleared from the command line
    _expect(exp, [prompt], "the U-Boot prompt after stopping autoboot", timeout)


def _expect(exp, patterns, what, timeout) -> int:
    try:
        return exp.expect(patterns, timeout=timeout)
    except pexpect.TIMEOUT:
        raise BootFailed(f"U-Boot: no answer to {what} within {timeout:.0f}s") from None
    except pexpect.EOF as e:
        raise BootFailed(f"U-Boot: console closed during {what}: {e}") from None
