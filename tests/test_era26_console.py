"""The milestones of configs/milestones.toml on Linux 2.6.32 consoles: real boots
made by bringup (qemu-versatilepb, qemu-i386, qemu-bamboo: console.log of
`boot-timing --runs 5`, first run) with 2.6.32's wording: 'Freeing init memory:
92K' (ARM), 'Freeing unused kernel memory: 200k freed' (x86), '... 148k init'
(PowerPC), no 'Run /init as init process' line."""

from pathlib import Path

import pytest

from bringup.model.milestones import load_rules
from bringup.parse import milestones as ms

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize(
    "machine,freeing,console",
    [
        ("versatilepb", "Freeing init memory: 92K", "console [ttyAMA0] enabled"),
        ("i386", "Freeing unused kernel memory: 200k freed", "console [ttyS0] enabled"),
        ("bamboo", "Freeing unused kernel memory: 148k init", "console [ttyS0] enabled, bootconsole disabled"),
    ],
)
def test_2_6_32_console_reaches_every_required_milestone(machine, freeing, console):
    r = ms.parse_bootlog((DATA / f"boot-2.6.32-{machine}.stamped.log").read_bytes(), load_rules())
    assert r["format"] == "stamped"
    m = r["milestones"]
    assert "Linux version 2.6.32.71 " in m["linux_version"]["text"]
    assert m["console_enabled"]["text"].endswith(console), "not the bootconsole line"
    assert m["freeing_init"]["text"].endswith(freeing), "not 'Freeing initrd memory'"
    assert m["userspace"]["text"].endswith("bringup: userspace up")
    assert m["login"]["text"].strip() == "bringup login:"
    assert "run_init" not in m, "2.6.32 does not say 'Run /init as init process'"
    order = ["linux_version", "console_enabled", "freeing_init", "userspace", "login"]
    times = [m[name]["host_s"] for name in order]
    assert times == sorted(times)
    assert r["missing"] == [] and r["fault"] is None and r["complete"]
