"""Child processes that do not outlive bringup."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """preexec_fn for Popen: the kernel sends the child SIGKILL when bringup
    dies, even by SIGKILL, so no QEMU or NFS server is left behind."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


# A process group's keeper: runs a command (make) in the keeper's own process
# group and kills the whole group when bringup dies, even by SIGKILL (the kernel
# sends the keeper SIGTERM then, through PR_SET_PDEATHSIG).  A plain PDEATHSIG
# on make would leave make's children (compilers, shell recipes) running.
# The keeper waits for the command, so wait4() on the keeper still reports the
# command's CPU times (a process's rusage includes the children it reaped).
_KEEPER = r"""
import os, signal, sys
def stop(sig, frame):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    os.killpg(0, signal.SIGKILL)
for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
    signal.signal(s, stop)
if os.getppid() != int(sys.argv[1]):
    stop(0, None)
pid = os.fork()
if pid == 0:
    for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(s, signal.SIG_DFL)
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    except OSError as e:
        print(f"{sys.argv[2]}: {e.strerror}", file=sys.stderr)
        os._exit(127)
while True:
    try:
        _, status = os.waitpid(pid, 0)
        break
    except InterruptedError:
        continue
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
"""


def group_argv(argv: list[str]) -> list[str]:
    """argv run under the keeper; start it with start_new_session=True and
    preexec_fn=term_with_parent."""
    return [sys.executable, "-c", _KEEPER, str(os.getpid()), *argv]


def term_with_parent() -> None:
    """preexec_fn: SIGTERM (which the keeper turns into killing its group) when bringup dies."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
