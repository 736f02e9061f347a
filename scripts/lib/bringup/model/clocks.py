"""What measures time in a study: the board's clock (docs/clock.md).

  host          the guest runs as fast as the host lets it; every time is a
                host-clock reading (or a guest clock that follows the host's),
                so a busy host slows the guest: measured in rounds of boots,
                judged by the host-load guard, compared with statistical tests.
  instructions  QEMU's instruction counter (-icount): guest time advances by
                2^shift ns per executed instruction and jumps over idle time
                (sleep=off), the RTC reads that virtual clock from a fixed date,
                and QEMU's guest random numbers come from a fixed seed.  What
                the guest measures no longer depends on the host: one boot per
                kernel is a measurement, and a difference larger than the A/A
                floor is a finding.  It models executed instructions at a fixed
                rate; not caches, memory stalls, bus or device latency.

A board chooses its clock in its target table ([qemu]: clock, icount_shift; the
table answers measuring_clock() and with_clock(), model/targetkind.py); a boot profile or
the command line (CLOCK=) may choose another for one run (with_clock).  Only a
QEMU board can have the instruction clock.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, field_validator

from bringup.model.base import DataError, Strict, load_toml, validate_as
from bringup.util import paths

ClockKind = Literal["host", "instructions"]
KINDS: tuple[ClockKind, ...] = ("host", "instructions")

RTC_BASE = "2000-01-01T00:00:00"  # the guest's wall clock at power-on under the instruction clock
SEED = 1  # QEMU's -seed: the guest's random numbers (a virt DTB's rng-seed and kaslr-seed)

# rounds when the user gives none: the instruction clock needs one boot per kernel (its
# A/A floor, docs/clock.md, says how far one boot is from the next); the host clock needs
# rounds to see through its noise
DEFAULT_RUNS = {"host": 5, "instructions": 1}
DEFAULT_LMBENCH_RUNS = {"host": 5, "instructions": 1}
DEFAULT_WORKLOAD_RUNS = {"host": 3, "instructions": 1}

# a difference on the instruction clock is a finding when it is at least FLOOR_MULTIPLE times the
# metric's A/A floor (the largest spread of a kernel against itself) and at least SIZE_PCT %: the
# rule and its constants live once, in stats/deterministic.py


@dataclass(frozen=True)
class Clock:
    kind: ClockKind = "host"
    shift: int | None = None  # the icount shift (instruction clock only)

    @property
    def ns_per_instruction(self) -> int | None:
        return 2**self.shift if self.shift is not None else None

    @property
    def deterministic(self) -> bool:
        return self.kind == "instructions"

    def qemu_args(self, seed: int = SEED) -> list[str]:
        """QEMU's arguments for this clock (none for the host clock); seed: QEMU's -seed, the
        guest's random numbers (a round's: rounds differ, the kernels of one round do not)."""
        if self.kind != "instructions":
            return []
        return [
            "-icount",
            f"shift={self.shift},sleep=off,align=off",
            "-rtc",
            f"base={RTC_BASE},clock=vm",
            "-seed",
            str(seed),
        ]

    @property
    def label(self) -> str:
        if self.kind == "instructions":
            return f"instruction clock ({self.ns_per_instruction} ns per instruction, QEMU icount)"
        return "host clock"

    @property
    def short(self) -> str:
        return "instruction clock" if self.kind == "instructions" else "host clock"

    def record(self, seed: int | None = None) -> dict:
        """The record's `clock` entry (records.ClockInfo); seed: a boot's QEMU -seed."""
        return {
            "kind": self.kind,
            "shift": self.shift,
            "ns_per_instruction": self.ns_per_instruction,
            "seed": seed if self.kind == "instructions" else None,
        }


HOST = Clock()


def clock_of(board) -> Clock:
    """The clock a board measures with: its target table's (model/targetkind.py)."""
    target = getattr(board, "target", None)
    return HOST if target is None else target.measuring_clock()


def check_kind(kind: str, option: str = "--clock") -> ClockKind:
    if kind not in KINDS:
        raise DataError(f"{option} {kind!r}: use host or instructions")
    return kind


def with_clock(board, kind: str | None, option: str = "--clock"):
    """The board measured with another clock (None: its own).  The instruction clock
    needs QEMU: a bench board or a labgrid place is refused in one line."""
    if not kind:
        return board
    kind = check_kind(kind, option)
    target = board.target.with_clock(kind)
    if target is None:
        raise DataError(
            f"{option} {kind}: board {board.name} is not a QEMU board; only QEMU has an instruction clock "
            "(a real board runs on its own time)"
        )
    if target.measuring_clock().deterministic:
        untimed = [k.id for k in board.kernels if not k.era.printk_times]
        if untimed:
            raise DataError(
                f"{option} {kind}: board {board.name}'s kernel {untimed[0]} prints no printk times (era "
                f"{board.kernel(untimed[0]).era.name}): its milestones can only be timed on the host clock"
            )
    return board if target is board.target else board.model_copy(update={"target": target})


def for_root(board, root: str, say=None):
    """The board as a boot with this root measures it: an NFS root's mount and every
    milestone after it wait for the host's NFS server, so on the instruction clock they
    are host time in disguise (docs/clock.md); such a boot is measured on the host clock."""
    if root != "nfs" or not clock_of(board).deterministic:
        return board
    if say is not None:
        say("  root over NFS: measured on the host clock (the NFS server's answers are host time; docs/clock.md)")
    return with_clock(board, "host")


def guard_needed(board) -> bool:
    """The host-load guard judges runs on the host clock only: on the instruction
    clock a busy host slows the run, not what it measures."""
    return not clock_of(board).deterministic


def boot_jobs(board, given: int | None) -> int:
    """Boots at once of a measuring step (the round engine's local workers): as given, else on
    the instruction clock of a board that is not a labgrid place one per CPU (runs at once do not
    disturb what they measure), else one (the host clock: parallel boots would)."""
    if given is not None:
        return given
    if clock_of(board).deterministic and not board.target.lab:
        return os.cpu_count() or 1
    return 1


def default_runs(board, given: int | None, table: dict[str, int]) -> int:
    """The rounds asked for, or the clock's default."""
    return given if given is not None else table[clock_of(board).kind]


# --- the A/A floors of the instruction clock (configs/clock.toml) -------------


class FloorsFile(Strict):
    """configs/clock.toml: the A/A floors a deterministic finding is judged against when
    the board has no A/A check of its own on the instruction clock."""

    default_floor_pct: Annotated[
        float, Field(gt=0, le=100, description="the floor of a metric without one of its own, in %")
    ] = 0.1
    floors: Annotated[
        dict[Annotated[str, Field(min_length=1, max_length=300)], Annotated[float, Field(gt=0, le=1000)]],
        Field(description="metric key (as the report's findings name it) -> its measured A/A spread, in %"),
    ] = {}
    measured: Annotated[str, Field(max_length=2000, description="where and how the floors were measured")] = ""

    @field_validator("floors")
    @classmethod
    def _known_kinds(cls, v: dict[str, float]) -> dict[str, float]:
        for key in v:
            if not FLOOR_KEY.fullmatch(key):
                raise ValueError(
                    f"@[{key!r}]@not a finding's key, so it would never apply: "
                    f"<kind>:<metric> with kind one of {', '.join(FLOOR_KINDS)}"
                )
        return v


# the kinds of the report's finding keys (report/summary.py, report/workloads.py): a floor's key names one
FLOOR_KINDS = ("boot-timing.json", "boot-timing-nfs.json", "build-cost.json", "footprint", "lmbench", "workload")
FLOOR_KEY = re.compile(rf"({'|'.join(re.escape(k) for k in FLOOR_KINDS)}):.+", re.S)


def load_floors(path: Path | None = None) -> FloorsFile:
    f = path or paths.CONFIGS / "clock.toml"
    if not f.exists():
        return FloorsFile()
    return validate_as(FloorsFile, load_toml(f, "clock file"), paths.rel(f))


def floors(board_name: str, logs: Path, own: bool = True) -> dict:
    """The floors the report judges the board's deterministic findings against: the
    shipped ones (configs/clock.toml), each raised to the board's own A/A spread when
    logs/<board>-aa/aa.json was measured on the instruction clock (own=False: the A/A
    check itself, judged against the shipped floors only)."""
    shipped = load_floors()
    metrics: dict[str, float] = dict(shipped.floors)
    out: dict = {"default_pct": shipped.default_floor_pct, "metrics": metrics, "source": "configs/clock.toml"}
    aa = Path(logs) / f"{board_name}-aa" / "aa.json"
    if own and aa.exists():
        try:
            rec = json.loads(aa.read_text())
        except (OSError, ValueError):
            return out
        if (rec.get("clock") or {}).get("kind") == "instructions" and isinstance(rec.get("spread"), dict):
            for k, v in rec["spread"].items():
                if isinstance(v, int | float) and v >= 0:
                    metrics[k] = max(metrics.get(k, shipped.default_floor_pct), float(v))
            out["source"] = f"configs/clock.toml and logs/{board_name}-aa/aa.json"  # the same wherever logs/ is
    return out
