"""vmlinux sizes from the ELF section headers (pyelftools).

`sections` gives .text, .rodata, .data, .bss, .init.* and the rest, each as
the ELF says.  `berkeley` reproduces GNU size's default (Berkeley) columns:
text counts every allocated read-only or executable section (so .rodata is in
"text", as in the seed's tables), data the allocated writable sections with
contents, bss the allocated sections without contents.
"""

from __future__ import annotations

from pathlib import Path

from elftools.common.exceptions import ELFError
from elftools.elf.constants import SH_FLAGS
from elftools.elf.elffile import ELFFile


def section_sizes(vmlinux: Path) -> dict:
    """Raises ValueError, naming the file, when it is not a readable ELF file."""
    try:
        return _section_sizes(vmlinux)
    except ELFError as e:
        raise ValueError(f"{vmlinux}: not a readable ELF file: {e}") from None


def _section_sizes(vmlinux: Path) -> dict:
    with open(vmlinux, "rb") as f:
        elf = ELFFile(f)
        sections = {}
        text = data = bss = 0
        for s in elf.iter_sections():
            flags = s["sh_flags"]
            if not flags & SH_FLAGS.SHF_ALLOC:
                continue
            size = s["sh_size"]
            if s.name:
                sections[s.name] = sections.get(s.name, 0) + size
            if flags & SH_FLAGS.SHF_EXECINSTR or not flags & SH_FLAGS.SHF_WRITE:
                text += size
            elif s["sh_type"] != "SHT_NOBITS":
                data += size
            else:
                bss += size
        groups = {}
        for name, size in sections.items():
            key = _group(name)
            groups[key] = groups.get(key, 0) + size
        return {
            "elf_class": elf.elfclass,
            "machine": elf["e_machine"],
            "sections": dict(sorted(sections.items())),
            "groups": groups,
            "berkeley": {"text": text, "data": data, "bss": bss, "dec": text + data + bss},
        }


def _group(name: str) -> str:
    """Coarse groups for charts: .text, .rodata, .data, .bss, .init, other."""
    if name.startswith(".init") or name.startswith(".exit"):
        return "init"
    for g in ("text", "rodata", "data", "bss"):
        if name == f".{g}" or name.startswith(f".{g}."):
            return g
    return "other"
