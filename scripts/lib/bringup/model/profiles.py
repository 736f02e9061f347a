"""configs/profiles/<name>.toml as a typed model: boot profiles.

A boot-timing run has a profile: what is added to the kernel command line (per
range of kernel versions, since the parameters changed over the eras), and what
the run keeps besides the milestones.  `timing` adds nothing (the headline
numbers); `initcalls` adds initcall_debug and what the era needs to print and time
its lines; `quiet` keeps the console nearly silent.  A profile is data: adding one
needs no Python.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, Field

from bringup.model.base import DataError, Strict, load_toml, no_control, validate_as
from bringup.model.board import VersionRange
from bringup.model.milestones import load_file
from bringup.model.values import Cmdline
from bringup.util import paths

PROFILE_NAME = r"^[a-z][a-z0-9_-]*$"


def _not_blank(v: str) -> str:
    if not v.strip():
        raise ValueError("empty or blank: give the arguments to add, or leave the [[args]] entry out")
    return v


class ProfileArgs(Strict):
    """Command-line arguments for the kernels in a version range."""

    kernel: Annotated[VersionRange, Field(description="kernel versions they apply to (empty: every kernel)")] = (
        VersionRange()
    )
    cmdline: Annotated[Cmdline, AfterValidator(_not_blank), Field(description="added to the kernel command line")]
    why: Annotated[
        str, Field(max_length=2000, description="what they do, and why this range"), AfterValidator(no_control)
    ] = ""


class ProfileFile(Strict):
    """configs/profiles/<name>.toml"""

    description: Annotated[str, Field(min_length=1, max_length=2000), AfterValidator(no_control)]
    args: Annotated[list[ProfileArgs], Field(max_length=32)] = []
    initcalls: Annotated[
        bool, Field(description="parse each run's initcall_debug lines into the boot-timing record")
    ] = False
    optional_milestones: Annotated[
        list[Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$", max_length=40)]],
        Field(max_length=100, description="milestones (configs/milestones.toml names) not required in these runs"),
    ] = []
    study_runs: Annotated[
        int | None,
        Field(ge=1, le=1000, description="rounds `make all` boots with this profile (none: the profile is not run)"),
    ] = None


class Profile:
    """A loaded profile: its name, its file's fields, and the arguments for a kernel version."""

    def __init__(self, name: str, spec: ProfileFile):
        self.name, self.spec = name, spec

    @property
    def record_initcalls(self) -> bool:
        return self.spec.initcalls

    def cmdline(self, version: str) -> str:
        """The arguments every matching range adds, in file order ('' for none)."""
        return " ".join(a.cmdline for a in self.spec.args if a.kernel.contains(version))


def profiles_dir(configs: Path | None = None) -> Path:
    return (configs or paths.CONFIGS) / "profiles"


def known_profiles(configs: Path | None = None) -> tuple[str, ...]:
    return tuple(sorted(p.stem for p in profiles_dir(configs).glob("*.toml")))


def load_profile(name: str, configs: Path | None = None) -> Profile:
    """configs/profiles/<name>.toml, validated; DataError (one line) for an unknown name or a bad file."""
    known = known_profiles(configs)
    if not re.fullmatch(PROFILE_NAME, name) or name not in known:
        raise DataError(f"profile {name!r}: no such profile (known: {', '.join(known) or 'none'})")
    return load_profile_file(profiles_dir(configs) / f"{name}.toml", configs)


def load_profile_file(f: Path, configs: Path | None = None) -> Profile:
    """One profile file, validated against the milestones of configs (or of the configs
    directory it lives in, when that has a milestones.toml)."""
    if configs is None and (f.absolute().parent.parent / "milestones.toml").is_file():
        configs = f.absolute().parent.parent
    spec = validate_as(ProfileFile, load_toml(f, "profile file"), paths.rel(f))
    names = [m.name for m in load_file(configs / "milestones.toml" if configs else None).milestone]
    for i, m in enumerate(spec.optional_milestones):
        if m not in names:
            where = f"{paths.rel(f)}: field 'optional_milestones[{i}]'"
            raise DataError(f"{where}: {m!r}: no such milestone (known: {', '.join(names)})")
        if m in spec.optional_milestones[:i]:
            first = spec.optional_milestones.index(m)
            where = f"{paths.rel(f)}: field 'optional_milestones[{i}]'"
            raise DataError(f"{where}: {m!r} is listed twice (first as optional_milestones[{first}])")
    return Profile(f.stem, spec)


def study_profiles(configs: Path | None = None) -> list[Profile]:
    """The profiles `make all` runs besides `timing` (those with study_runs), by name."""
    out = [load_profile(n, configs) for n in known_profiles(configs) if n != "timing"]
    return [p for p in out if p.spec.study_runs is not None]
