"""bringup.boot: one boot, logs/<board>/<kernel>/boot/<run-id>/boot.json;
bringup.boot-timing: the summary of an invocation, logs/<board>/boot-timing.json."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from bringup.records.base import (
    ClockInfo,
    Count,
    Environment,
    FileName,
    Id,
    KernelRecord,
    LineNo,
    Name,
    NonNeg,
    Part,
    Real,
    Record,
    RelPath,
    Seconds,
    Sha256,
    Text,
    Timestamp,
    migrations,
)
from bringup.records.imported import Imported
from bringup.records.rootfs import RootfsRef

BootPath = Literal["direct", "u-boot"]
Root = Literal["ramdisk", "nfs"]


class Nfs(Part):
    server: Literal["ganesha", "external"]
    export: str  # host directory
    path: str | None  # what the kernel mounts
    address: str
    port: Count
    version: str
    files: Count | None  # entries copied into the export
    bind: str | None = None  # ganesha only
    server_log: str | None = None
    server_start_s: Seconds | None = None


class Hit(Part):
    """Where a milestone was seen: host time since t0, printk time, console.log line."""

    host_s: Real | None  # negative when a bench board printed before its power command returned
    printk_s: Seconds | None
    line: LineNo
    text: Text


class Interval(Part):
    from_: Name = Field(alias="from")
    to: Name
    host_s: Real
    printk_s: Real | None


class Fault(Part):
    kind: Name
    line: LineNo
    text: Text
    message: Text


class Lag(Part):
    n: Count
    median: NonNeg  # ms
    p95: NonNeg


class HostLoad(Part):
    """bringup.util.hostload.judge(): how busy the host was during one run."""

    seconds: NonNeg
    other_cpu_pct: NonNeg  # other processes' CPU, % of one CPU
    steal_pct: Real
    load1: NonNeg
    calibration: NonNeg  # calibration loop speed after the run / its baseline
    ncpu: Annotated[int, Field(ge=1)]
    disturbed: Text | None  # why the run counts as disturbed, or None


class LabgridResource(Part):
    cls: Name  # NetworkSerialPort, NetworkPowerPort, RemoteTFTPProvider, ...
    path: Text  # exporter/group/class/name
    params: dict[str, Any]  # as the coordinator published them


class LabgridPlace(Part):
    """The labgrid place a boot ran on (targets/labgrid.py)."""

    place: Name
    coordinator: Text
    exporter: Name | None  # the exporter of the console's resource
    acquired_by: Text | None  # host/user, as the coordinator shows it
    wait_s: Seconds  # how long the place was waited for
    resources: list[LabgridResource]
    power: Text  # how power was switched: 'labgrid-client power' (the place's power driver)
    tftp: Text | None  # where the boot files went (the place's TFTP provider or the board's [tftp])


class Boot(KernelRecord):
    """One boot of one kernel: boot.json in its run directory (logs/<board>/<kernel>/boot/<run>/)."""

    KIND = "bringup.boot"
    VERSION = 4
    MIGRATIONS = migrations(range(1, 4))

    run_id: FileName
    run_index: Count
    status: Literal["ok", "fail", "interrupted"]
    error: Text | None
    path: BootPath
    root: Root = "ramdisk"  # records made before NFS roots have none
    nfs: Nfs | None = None
    started: Timestamp
    finished: Timestamp
    kernelrelease: str | None
    build_key: Sha256 | None
    initrd: str
    cmdline: Text
    t0: Literal["QEMU spawn", "power-on"]
    log: FileName  # console.log, next to the record
    raw: FileName  # console.raw
    qemu_argv: list[str] | None = None  # None for a real board, or when QEMU never started
    console: str | None = None  # the console URL, once the target was up
    milestones: dict[Name, Hit]
    intervals: list[Interval]
    missing: list[Name]
    fault: Fault | None
    clock_zero_host_s: Real | None
    hidden_at_zero_s: Seconds | None
    printk_lag_ms: Lag | None
    round: Annotated[int, Field(ge=1)] | None = None  # the round of boots this run belongs to (/2)
    host: HostLoad | None = None  # the host-load guard's view of this run (/2)
    booted_kernel: Text | None = None  # the 'Linux version' banner the console showed (/3)
    labgrid: LabgridPlace | None = None  # the labgrid place the boot ran on (/3)
    clock: ClockInfo = ClockInfo()  # what measured its times (/4); older records: the host clock


class Stats(Part):
    """bringup.stats.summarize() of the runs' values."""

    n: Annotated[int, Field(ge=1)]
    median: Real
    mean: Real
    min: Real
    max: Real
    stdev: NonNeg
    ci95: Annotated[list[Real], Field(min_length=2, max_length=2)] | None
    ci95_half_pct: Real | None


class MilestoneStats(Part):
    label: Text
    host: Stats | None  # time since the reference; None only in an imported log without host times (/4)
    printk: Stats | None
    values: list[Real] | None = None  # per-run host times; records before significance tests have none
    rounds: list[Annotated[int, Field(ge=1)]] | None = None  # the round of each value (/3): pairs runs by round
    line: LineNo | None = None  # an imported log: the milestone's line in the copy of the log (/4)
    places: list[Name] | None = None  # the labgrid place of each of `values` (/5); None off labgrid


class LagStats(Part):
    median: Stats | None
    p95: Stats | None


class Failure(Part):
    run_id: FileName
    error: Text | None


UsecOrNone = Annotated[int, Field(ge=0)] | None


class Initcall(Part):
    """One initcall over a kernel's runs (/4): lists in the order of KernelInitcalls.runs."""

    fn: Name  # the function (its address when no System.map named it)
    module: Name | None  # the module the kernel printed (`[mod]`)
    object: Name | None  # the object file its initcall entry names (5.13+ System.map)
    level: Name | None  # early, pure, core, postcore, arch, subsys, fs, rootfs, device, late (from System.map)
    us: list[UsecOrNone]  # its duration in each run, as printed; None: not in that run (or no duration printed)
    start_s: list[Seconds | None]  # printk time of its start in each run
    rc: int | None  # a non-zero return value seen in any run


class KernelInitcalls(Part):
    """A kernel's initcalls over its good runs, for the initcalls profile (/4)."""

    runs: list[FileName]
    rounds: list[Annotated[int, Field(ge=1)]]
    count: list[Count]  # initcalls with a result, per run
    total_us: list[Count]  # their durations summed, per run
    end_s: list[Real | None]  # time from the reference to the after_initcalls milestone, per run
    before_clock_s: list[Real | None]  # time from the reference to the kernel's clock zero, per run
    hidden_at_zero_s: list[Real | None] = []  # of before_clock_s: the part after the kernel's first line (/6)
    unresolved: Count  # initcalls printed as addresses that the System.map did not name (all runs)
    format: Name | None  # parse/initcalls.py FORMATS key
    end_milestone: Name | None  # the after_initcalls milestone
    calls: list[Initcall]  # in the order of their first run


class ConsoleCost(Part):
    """What the console printed before user space, per run (/4)."""

    until: Name | None  # the after_initcalls milestone: bytes up to its line
    bytes: Stats  # every byte (bootloader and kernel), with CR LF per line
    kernel_bytes: Stats | None  # from the kernel's first line with a printk time
    baud: Annotated[int, Field(ge=1)] | None  # from the board's console= argument
    cost_s: Seconds | None  # median bytes x 10 bits / baud: what a real serial line takes to send them


class DeferredProbe(Part):
    """A device whose probe was deferred (-EPROBE_DEFER), over a kernel's good runs (/6)."""

    device: Text
    bus: Text | None  # as the line printed it ("platform"), None when it named none
    driver: Text | None  # the driver, when a line named it ("requests probe deferral")
    reason: Text | None  # the reason a line gave (6.x "deferred probe pending: <reason>", dev_err_probe)
    kinds: list[Name]  # parse/deferred.py kinds seen: requested, returned, pending, reason, timeout
    runs: Count  # good runs that printed a deferral of it
    events: Count  # deferral lines over those runs


class KernelTiming(Part):
    runs: Count
    ok: Count
    failed: Count
    reference: Name | None  # the reference milestone, 't0', 'mixed', or None without a good run
    kernelrelease: str | None
    build_key: Sha256 | None
    milestones: dict[Name, MilestoneStats]
    hidden_at_zero_s: Stats | None
    printk_lag_ms: LagStats | None
    failures: list[Failure]
    run_ids: list[FileName]
    disturbed: list[Failure] = []  # runs done again because the host was disturbed (/3)
    initcalls: KernelInitcalls | None = None  # the initcalls profile's (/4)
    console: ConsoleCost | None = None  # console output before user space (/4)
    deferred: list[DeferredProbe] | None = None  # deferred probes of the good runs (/6); None before /6


def _timing_1_to_2(d: dict[str, Any]) -> dict[str, Any]:
    """/2 added rootfs.inputs_key; /1 records without a root were ramdisk boots."""
    out = {"root": "ramdisk", **d}
    if isinstance(d.get("rootfs"), dict):
        out["rootfs"] = {**d["rootfs"], "inputs_key": None}
    return out


class BootTiming(Record):
    """The boot timing of a board's kernels, each over its rounds: logs/<board>/boot-timing*.json
    (records.boot_timing_name)."""

    KIND = "bringup.boot-timing"
    VERSION = 8
    MIGRATIONS = migrations(range(1, 8), {1: _timing_1_to_2})

    board: Id
    created: Timestamp
    path: BootPath | Literal["imported"]  # "imported" only in an imported record (/4)
    root: Root
    runs_requested: Annotated[int, Field(ge=1)]
    rootfs: RootfsRef | None  # None only in an imported record (/4)
    kernels: dict[Id, KernelTiming]
    order: list[list[Name]] = []  # the kernels in boot order, one list per round (/3)
    stopped: Text | None = None  # why no more rounds were run (/3)
    run: RelPath | None = None  # an imported record: the directory with the copy of the log (/4)
    imported: Imported | None = None  # where an imported record came from (/4); None for a live run
    profile: Name = "timing"  # the boot profile (configs/profiles/) of these runs (/4)
    cmdline_args: dict[Name, Text] = {}  # what the profile added to each kernel's command line (/4)
    places: list[Name] = []  # the labgrid places the rounds were spread over (/5); empty off labgrid
    round_places: list[Name] = []  # the place that ran each round, in the order of `order` (/5)
    clock: ClockInfo = ClockInfo()  # what measured the times (/7): on the instruction clock every
    # milestone's `values` are the kernel's own printk times; older records: the host clock
    environment: Environment | None = None  # the machine that measured (/8); None: older records, not recorded

    def times(self, st: MilestoneStats) -> Stats | None:
        """A milestone's statistics on the record's clock: its printk times on the
        instruction clock, else its host times from the reference."""
        return st.printk if self.clock.kind == "instructions" else st.host
