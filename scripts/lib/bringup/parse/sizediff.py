"""Why one kernel is bigger than another: a per-symbol size diff of two
vmlinux files, in the manner of the kernel's scripts/bloat-o-meter, and a
diff of their .config files.  Pure functions over files and text.

Symbols are the function and object symbols of the ELF symbol table with a
size (what `nm --size-sort` lists).  As in bloat-o-meter, the `.N` suffixes
compilers add to statics and clones (`foo.0`, `bar.constprop.0`) are dropped, so
that a renamed static still pairs with itself, and symbols that then share a
name are summed.  Every number
can be checked by hand with `nm --size-sort`.
"""

from __future__ import annotations

import re
from pathlib import Path

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

NUMBER_RE = re.compile(r"\.[0-9]+")


def symbols(vmlinux: Path) -> dict[str, int]:
    """Symbol sizes; ValueError, naming the file, when it is not a readable ELF file."""
    try:
        return _symbols(vmlinux)
    except ELFError as e:
        raise ValueError(f"{vmlinux}: not a readable ELF file: {e}") from None


def _symbols(vmlinux: Path) -> dict[str, int]:
    out: dict[str, int] = {}
    with open(vmlinux, "rb") as f:
        elf = ELFFile(f)
        for sec in elf.iter_sections():
            if not isinstance(sec, SymbolTableSection):
                continue
            for sym in sec.iter_symbols():
                if sym["st_size"] <= 0 or sym["st_info"]["type"] not in ("STT_FUNC", "STT_OBJECT"):
                    continue
                if sym["st_shndx"] in ("SHN_UNDEF", "SHN_ABS"):
                    continue
                name = NUMBER_RE.sub("", sym.name)
                out[name] = out.get(name, 0) + sym["st_size"]
    return out


def diff(old: dict[str, int], new: dict[str, int]) -> dict:
    rows = []
    for name in set(old) | set(new):
        a, b = old.get(name, 0), new.get(name, 0)
        if a != b:
            rows.append({"symbol": name, "old": a, "new": b, "delta": b - a})
    rows.sort(key=lambda r: (-abs(r["delta"]), r["symbol"]))
    before, after = sum(old.values()), sum(new.values())
    return {
        "added": sum(1 for r in rows if r["old"] == 0),
        "removed": sum(1 for r in rows if r["new"] == 0),
        "grown": sum(1 for r in rows if r["old"] and r["new"] and r["delta"] > 0),
        "shrunk": sum(1 for r in rows if r["old"] and r["new"] and r["delta"] < 0),
        "up": sum(r["delta"] for r in rows if r["delta"] > 0),
        "down": sum(r["delta"] for r in rows if r["delta"] < 0),
        "total_before": before,
        "total_after": after,
        "rows": rows,
    }


def render(d: dict, top: int = 20) -> str:
    out = [
        f"add/remove: {d['added']}/{d['removed']} grow/shrink: {d['grown']}/{d['shrunk']} "
        f"up/down: {d['up']}/{d['down']} ({d['up'] + d['down']})"
    ]
    rows = d["rows"][:top]
    if rows:
        w = max(len("function"), *(len(r["symbol"]) for r in rows))
        out.append(f"{'function':<{w}} {'old':>9} {'new':>9} {'delta':>9}")
        for r in rows:
            old = "-" if r["old"] == 0 else str(r["old"])
            new = "-" if r["new"] == 0 else str(r["new"])
            out.append(f"{r['symbol']:<{w}} {old:>9} {new:>9} {r['delta']:>+9}")
        if len(d["rows"]) > top:
            out.append(f"... {len(d['rows']) - top} more symbols changed")
    b, a = d["total_before"], d["total_after"]
    chg = (a - b) / b * 100 if b else 0.0
    out.append(f"Total: Before={b}, After={a}, chg {chg:+.2f}%")
    return "\n".join(out) + "\n"


def config_diff(old_text: str, new_text: str) -> dict:
    """Symbols added (set only in new), removed (set only in old) and changed.
    'is not set' counts as absent, as Kconfig treats it."""
    from bringup.build.kernel import parse_config

    a = {k: v for k, v in parse_config(old_text).items() if v != "n"}
    b = {k: v for k, v in parse_config(new_text).items() if v != "n"}
    return {
        "added": sorted((k, b[k]) for k in set(b) - set(a)),
        "removed": sorted((k, a[k]) for k in set(a) - set(b)),
        "changed": sorted((k, a[k], b[k]) for k in set(a) & set(b) if a[k] != b[k]),
    }


def render_config_diff(d: dict, top: int = 40) -> str:
    out = [f".config: {len(d['added'])} added, {len(d['removed'])} removed, {len(d['changed'])} changed"]
    for k, v in d["added"][:top]:
        out.append(f"  + {k}={v}")
    for k, v in d["removed"][:top]:
        out.append(f"  - {k}={v}")
    for k, a, b in d["changed"][:top]:
        out.append(f"  ~ {k}: {a} -> {b}")
    shown = min(top, len(d["added"])) + min(top, len(d["removed"])) + min(top, len(d["changed"]))
    total = len(d["added"]) + len(d["removed"]) + len(d["changed"])
    if total > shown:
        out.append(f"  ... {total - shown} more")
    return "\n".join(out) + "\n"
