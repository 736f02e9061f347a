"""Child processes that do not outlive bringup."""

from __future__ import annotations

import contextlib
import ctypes
import signal

PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """preexec_fn for Popen: the kernel sends the child SIGKILL when bringup
    dies, even by SIGKILL, so no QEMU or NFS server is left behind."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
