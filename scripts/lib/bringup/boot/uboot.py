"""The U-Boot dialogue: stop autoboot, bring up the network, load the kernel,
ramdisk (and dtb) over TFTP, boot.  Works on any pexpect-like console."""

from __future__ import annotations

import re

import pexpect

from bringup.errors import BootFailed
from bringup.model.board import UbootSpec

AUTOBOOT = r"Hit any key to stop autoboot|Press SPACE to abort autoboot|autoboot in \d+ seconds"
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


def commands(
    uboot: UbootSpec, files: dict, cmdline: str, serverip: str | None, use_dhcp: bool = True, ipaddr: str | None = None
) -> list[tuple[str, bool]]:
    """The command list: (command, expect_prompt_after)."""
    cmds = []
    if use_dhcp:
        cmds += [("setenv autoload no", True), ("dhcp", True)]
    elif ipaddr:
        cmds.append((f"setenv ipaddr {ipaddr}", True))
    if serverip:
        cmds.append((f"setenv serverip {serverip}", True))
    cmds.append((f"setenv bootargs {cmdline}", True))
    cmds.append((f"tftpboot {uboot.kernel_addr} {files['kernel']}", True))
    initrd = "-"
    if files.get("initrd"):
        cmds.append((f"tftpboot {uboot.initrd_addr} {files['initrd']}", True))
        initrd = uboot.initrd_addr
    fdt = uboot.fdt
    if files.get("dtb"):
        cmds.append((f"tftpboot {uboot.fdt_addr} {files['dtb']}", True))
        fdt = str(uboot.fdt_addr)
    boot = [uboot.boot_command, uboot.kernel_addr, initrd]
    if fdt:
        boot.append(fdt)
    cmds.append((" ".join(boot), False))
    return cmds


def run(
    exp,
    uboot: UbootSpec,
    files: dict,
    cmdline: str,
    serverip: str | None = "10.0.2.2",
    use_dhcp: bool = True,
    ipaddr: str | None = None,
    timeout: float = 60.0,
) -> None:
    prompt = re.escape(uboot.prompt)
    try:
        i = exp.expect([AUTOBOOT, prompt], timeout=timeout)
    except pexpect.TIMEOUT:
        raise BootFailed(f"U-Boot: no autoboot prompt or '{uboot.prompt}' within {timeout:.0f}s")
    except pexpect.EOF as e:
        raise BootFailed(f"U-Boot: console closed before the prompt: {e}")
    if i == 0:
        exp.send(" ")
        _expect(exp, [prompt], "the U-Boot prompt after stopping autoboot", 10)
    for cmd, wait_prompt in commands(uboot, files, cmdline, serverip, use_dhcp, ipaddr):
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


def _expect(exp, patterns, what, timeout) -> int:
    try:
        return exp.expect(patterns, timeout=timeout)
    except pexpect.TIMEOUT:
        raise BootFailed(f"U-Boot: no answer to {what} within {timeout:.0f}s")
    except pexpect.EOF as e:
        raise BootFailed(f"U-Boot: console closed during {what}: {e}")
