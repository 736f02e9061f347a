"""On/off values as people write them: 1/yes/true/on and 0/no/false/off (any case), for make's
switches (FORCE=1) and bringup's environment switches (BRINGUP_CCACHE=0)."""

from __future__ import annotations

import os

from bringup.errors import BringupError
from bringup.util import paths

YES, NO = ("1", "yes", "true", "on"), ("0", "no", "false", "off")

# environment switches, on when unset, and what each turns on
ENV_SWITCHES = {"BRINGUP_HOST_GUARD": "the host-load guard", "BRINGUP_CCACHE": "ccache for kernel builds"}


def env_switch(var: str) -> bool:
    """An on/off environment variable of ENV_SWITCHES (on when unset); any other value is refused."""
    v = os.environ.get(var)
    if v is None:
        return True
    if v.strip().lower() not in YES + NO:
        raise BringupError(f"{var}={paths.show(v, 40)}: give 1 ({ENV_SWITCHES[var]} on) or 0 (off)")
    return v.strip().lower() in YES
