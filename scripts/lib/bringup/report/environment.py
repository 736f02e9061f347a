"""The report's "Machine and versions" section, from the records only: the machine,
QEMU, Python and bringup commit each measurement record stored when it ran
(records.Environment), the toolchains and kernel sources of the build records.
Nothing is asked of the machine that renders the report; a record made before the
environment was captured is named under "not recorded"."""

from __future__ import annotations

from typing import Any

from bringup import records
from bringup.records import BootTiming, Build
from bringup.records.base import Environment, Record
from bringup.report.model import Inputs

NOT_RECORDED = "not recorded"


def machine(e: Environment) -> str:
    return f"{e.host}, {e.cpu}, {e.cpus} CPUs"


def measured_on(named: list[tuple[str, Record]]) -> dict[str, Any]:
    """named: (what, record) of every measurement record shown.  The distinct environments,
    each with the records measured in it, and the live records that did not record one."""
    groups: dict[str, dict[str, Any]] = {}
    missing: list[str] = []
    for what, rec in named:
        env: Environment | None = getattr(rec, "environment", None)
        if env is None:
            if getattr(rec, "imported", None) is None:  # an import says where it came from instead
                missing.append(what)
            continue
        key = env.model_dump_json()
        if key not in groups:
            groups[key] = {
                "machine": machine(env),
                "qemu": env.qemu,
                "bringup": env.bringup,
                "python": env.python,
                "records": [],
            }
        groups[key]["records"].append(what)
    return {"environments": list(groups.values()), "not_recorded": missing}


def section(build: dict[str, Build], named: list[tuple[str, Record]]) -> dict[str, Any]:
    """The section's model: where the measurements ran, the toolchains, the kernels."""
    return {
        **measured_on(named),
        "not_recorded_text": NOT_RECORDED,
        "toolchains": sorted({r.toolchain.version for r in build.values()}),
        "kernels": [
            {
                "kernel": k,
                "release": r.kernelrelease,
                "source": " ".join(
                    str(v)
                    for kk, v in r.source.model_dump().items()
                    if kk in ("kind", "package", "package_version", "suite", "url", "tarball", "path")
                ),
                "fixes": [
                    f.name
                    + (" (changes the running kernel)" if f.changes else "")
                    + (" (overrides what the tree's authors supported)" if f.overrides else "")
                    for f in r.fixes
                ],
            }
            for k, r in build.items()
        ],
    }


def for_report(inputs: Inputs, live_nfs: BootTiming | None) -> dict[str, Any]:
    """The section for the records the report shows, the imported kernels among the versions."""
    named: list[tuple[str, Any]] = [
        (name, r)
        for name, r in ((records.boot_timing_name(), inputs.live_boot), (records.boot_timing_name("nfs"), live_nfs))
        if r is not None
    ]
    for name, recs in (("footprint.json", inputs.footprint), ("lmbench.json", inputs.lmbench)):
        named += [(f"{k}/{name}", r) for k, r in recs.items()]
    named += [(f"{k}/workloads.json", r) for k, r in inputs.workloads.items()]
    env = section(inputs.build, named)
    for k, entries in inputs.imported.items():  # their release and where they came from
        fp, boot = inputs.footprint.get(k), inputs.boot
        release = (fp.kernelrelease if fp else None) or (
            boot.kernels[k].kernelrelease if boot and k in boot.kernels else None
        )
        env["kernels"].append(
            {"kernel": k, "release": release or "unknown", "source": "; ".join(e["mark"] for e in entries), "fixes": []}
        )
    return env
