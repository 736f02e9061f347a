"""A private apt configuration: download Debian packages without touching the
machine's own apt sources, lists or caches.

Everything lives under one directory (the bringup cache): an apt.conf, a
sources.list, the package lists and the downloaded archives.  The machine's
configuration fragments (/etc/apt/apt.conf.d) are *not* read, because one of
them (docker-clean) deletes downloaded .debs after every update.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bringup.errors import BringupError

# BRINGUP_DEBIAN_MIRROR / BRINGUP_DEBIAN_SECURITY_MIRROR point at another mirror (a local one)
MIRROR = "http://deb.debian.org/debian"
SECURITY_MIRROR = "http://deb.debian.org/debian-security"
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"

# suite -> the sources lines it needs.  A suite's packages may live in its
# security or backports companion, so those come along.
SUITES = {
    "bullseye": [
        (MIRROR, "bullseye"),
        (SECURITY_MIRROR, "bullseye-security"),
    ],
    "bookworm": [
        (MIRROR, "bookworm"),
        (SECURITY_MIRROR, "bookworm-security"),
    ],
    "bookworm-backports": [
        (MIRROR, "bookworm"),
        (MIRROR, "bookworm-backports"),
    ],
}


_UPDATE_FAILED: dict[Path, str] = {}  # private apt directories whose update failed in this process: why


@dataclass
class PrivateApt:
    root: Path  # private state lives here
    suite: str
    components: tuple[str, ...] = ("main",)
    architectures: tuple[str, ...] = ("amd64",)
    deb_src: bool = False
    warn: Callable[[str], None] = field(default=lambda m: print(f"bringup: warning: {m}", file=sys.stderr))

    def __post_init__(self):
        if self.suite not in SUITES:
            raise BringupError(f"apt suite {self.suite!r} is not one of {sorted(SUITES)}")
        tag = "-".join([self.suite, *self.components, *self.architectures])
        self.dir = Path(self.root) / tag
        self.conf = self.dir / "apt.conf"
        # package -> candidate version, as apt-cache policy said since the last update:
        # every apt-cache call reads the whole package lists (about half a second)
        self._versions: dict[str, str | None] = {}

    def _write_config(self) -> None:
        d = self.dir
        for sub in ("lists/partial", "archives/partial", "etc/parts", "etc/prefs", "debs"):
            (d / sub).mkdir(parents=True, exist_ok=True)
        lines = []
        comps = " ".join(self.components)
        for uri, suite in SUITES[self.suite]:
            uri = _mirror(uri)
            lines.append(f"deb [signed-by={KEYRING}] {uri} {suite} {comps}")
            if self.deb_src:
                lines.append(f"deb-src [signed-by={KEYRING}] {uri} {suite} {comps}")
        _write_if_changed(d / "sources.list", "\n".join(lines) + "\n")
        archs = " ".join(f'"{a}";' for a in self.architectures)
        conf = f"""// written by bringup; private apt state, the machine's apt is not touched
Dir::Etc::sourcelist "{d}/sources.list";
Dir::Etc::sourceparts "-";
Dir::Etc::Parts "{d}/etc/parts";
Dir::Etc::Preferences "{d}/etc/prefs/none";
Dir::Etc::PreferencesParts "{d}/etc/prefs";
Dir::State::Lists "{d}/lists";
Dir::State::status "{d}/status";
Dir::Cache "{d}/cache";
Dir::Cache::archives "{d}/archives";
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
APT::Architecture "{self.architectures[0]}";
APT::Architectures {{ {archs} }};
Acquire::Languages "none";
APT::Sandbox::User "root";
"""
        _write_if_changed(self.conf, conf)
        status = d / "status"
        if not status.exists():
            status.write_text("")

    def _env(self) -> dict:
        env = dict(os.environ)
        env["APT_CONFIG"] = str(self.conf)
        env["LC_ALL"] = "C"
        return env

    def update(self, max_age_s: float = 24 * 3600) -> None:
        """apt-get update into the private lists; skipped while they are fresh.

        The update goes to a staging copy of the lists, which replaces them only
        when the main suite's indexes came in.  When the mirror cannot be reached
        (apt-get then often exits 0, with Err:/W: lines), the old lists and their
        age are kept: with old lists bringup warns and goes on, without any it fails."""
        self._write_config()
        lists = self.dir / "lists"
        stamp = lists / ".bringup-updated"
        if stamp.exists() and time.time() - stamp.stat().st_mtime < max_age_s:
            return
        if self.dir in _UPDATE_FAILED:  # tried in this run already, and the mirror did not answer: once is enough
            if _has_indexes(lists, self.suite):
                return
            raise BringupError(
                f"apt-get update ({self.suite}): {_UPDATE_FAILED[self.dir]}; no package lists to fall back on"
            )
        staging = self.dir / "lists.new"
        shutil.rmtree(staging, ignore_errors=True)
        shutil.copytree(lists, staging, ignore=shutil.ignore_patterns(".bringup-updated", "lock"))
        p = subprocess.run(
            ["apt-get", "-q", "-o", f"Dir::State::Lists={staging}", "update"],
            env=self._env(),
            capture_output=True,
            text=True,
        )
        why = self._update_failure(p, staging)
        if why:
            shutil.rmtree(staging, ignore_errors=True)
            _UPDATE_FAILED[self.dir] = why
            if _has_indexes(lists, self.suite):
                age = time.time() - stamp.stat().st_mtime if stamp.exists() else None
                when = f"{age / 3600:.0f} h old" if age is not None else "of unknown age"
                self.warn(f"apt-get update ({self.suite}): {why}; using the package lists already here ({when})")
                return
            raise BringupError(f"apt-get update ({self.suite}): {why}; no package lists to fall back on")
        old = self.dir / "lists.old"
        shutil.rmtree(old, ignore_errors=True)
        lists.rename(old)
        staging.rename(lists)
        shutil.rmtree(old, ignore_errors=True)
        stamp.touch()
        self._versions.clear()

    def _update_failure(self, p: subprocess.CompletedProcess, staging: Path) -> str | None:
        """Why an update did not bring the main suite's indexes, or None."""
        out = p.stdout + p.stderr
        failed = re.findall(r"(?:Failed to fetch|Err:\d+) (\S+)", out)
        # a companion suite (security, backports) may lack some architectures on
        # this mirror: that is fine as long as the main suite's indexes came in
        main = [u for u in failed if f"/dists/{self.suite}/" in u or u.endswith(f" {self.suite}")]
        unreachable = re.search(
            r"(Temporary failure resolving|Could not connect|Connection failed|"
            r"Could not resolve|No route to host|Network is unreachable)[^\n]*",
            out,
        )
        if p.returncode != 0 and (main or not failed):
            tail = (p.stderr or p.stdout).strip().splitlines()[-2:]
            return f"failed (exit {p.returncode}): {' | '.join(tail)}"
        if main or not _has_indexes(staging, self.suite):
            reason = unreachable.group(0).strip() if unreachable else (main[0] if main else "no index arrived")
            return f"the Debian mirror could not be reached ({reason})"
        return None

    def candidate(self, package: str) -> str | None:
        """The version apt would download, or None."""
        return self.candidates([package])[package]

    def candidates(self, packages: list[str]) -> dict[str, str | None]:
        """The version apt would download of each package (None: none), from one
        `apt-cache policy` call for all those not asked before."""
        self.update()
        ask = [p for p in dict.fromkeys(packages) if p not in self._versions]
        if ask:
            p = subprocess.run(["apt-cache", "policy", *ask], env=self._env(), capture_output=True, text=True)
            said = policy_candidates(p.stdout)
            native = f":{self.architectures[0]}"
            for pkg in ask:
                key = pkg.removesuffix(native)
                if key in said:
                    self._versions[pkg] = said[key]
                elif len(ask) > 1:  # a name apt prints otherwise: asked alone, its block is its own
                    self._versions[pkg] = self.candidate(pkg)
                else:
                    self._versions[pkg] = next(iter(said.values()), None)
        return {pkg: self._versions[pkg] for pkg in packages}

    def download(self, package: str) -> Path:
        """Download one binary package (the candidate version); returns the .deb path.

        apt verifies the archive against the signed Release file's hashes."""
        self.update()
        version = self.candidate(package)
        if version is None:
            raise BringupError(
                f"apt: package {package!r} not found in suite {self.suite} ({' '.join(self.components)})"
            )
        dest = self.dir / "debs"
        here = self._here(package, version)
        if here is not None:
            return here
        self._run(["apt-get", "-q", "download", f"{package}={version}"], cwd=dest, what=f"apt-get download {package}")
        here = self._here(package, version)
        if here is None:
            raise BringupError(f"apt: downloaded {package} but no .deb appeared in {dest}")
        return here

    def download_many(self, packages: list[str]) -> dict[str, Path]:
        """download() of every package, those not here yet fetched by one apt-get call."""
        versions = self.candidates(packages)
        unknown = [p for p, v in versions.items() if v is None]
        if unknown:
            raise BringupError(
                f"apt: package {unknown[0]!r} not found in suite {self.suite} ({' '.join(self.components)})"
            )
        dest = self.dir / "debs"
        fetch = [p for p in dict.fromkeys(packages) if self._here(p, str(versions[p])) is None]
        if len(fetch) > 1:
            self._run(
                ["apt-get", "-q", "download", *(f"{p}={versions[p]}" for p in fetch)],
                cwd=dest,
                what=f"apt-get download of {len(fetch)} packages ({fetch[0]} ...)",
            )
        return {p: self.download(p) for p in packages}

    def _here(self, package: str, version: str) -> Path | None:
        """The .deb of that package and version in the download directory, if there."""
        pkgname, _, arch = package.partition(":")
        for f in (self.dir / "debs").glob(f"{pkgname}_*.deb"):
            if _deb_matches(f.name, pkgname, version, arch or None):
                return f
        return None

    def depends_closure(self, packages: list[str], without: tuple[str, ...] | list[str] = ()) -> list[str]:
        """Packages (with :arch) that the given ones need, resolved by apt.

        without: package names (any architecture) left out, and with them whatever
        only they bring in (an interpreter a package's scripts need, a maintainer
        script's helper): the closure is walked from `packages` and stops there."""
        self.update()
        p = subprocess.run(
            [
                "apt-cache",
                "depends",
                "--recurse",
                "--no-recommends",
                "--no-suggests",
                "--no-conflicts",
                "--no-breaks",
                "--no-replaces",
                "--no-enhances",
                "--no-pre-depends",
                *packages,
            ],
            env=self._env(),
            capture_output=True,
            text=True,
        )
        if p.returncode != 0:
            raise BringupError(f"apt-cache depends failed: {p.stderr.strip()}")
        if without:
            return closure_without(p.stdout, packages, without)
        out = []
        for line in p.stdout.splitlines():
            if line and not line[0].isspace() and not line.startswith("<"):
                out.append(line.strip())
        return sorted(set(out))

    def _run(self, argv, what, cwd=None):
        p = subprocess.run(argv, env=self._env(), cwd=cwd, capture_output=True, text=True)
        if p.returncode != 0:
            tail = (p.stderr or p.stdout).strip().splitlines()[-3:]
            raise BringupError(f"{what} failed (exit {p.returncode}): {' | '.join(tail)}")


def policy_candidates(text: str) -> dict[str, str | None]:
    """`apt-cache policy a b:armhf ...` output: each package block's name (as apt
    prints it: "b:armhf", a native package without its architecture) -> its
    Candidate: version, None for "(none)".  A package apt does not know has no block."""
    out: dict[str, str | None] = {}
    name = None
    for line in text.splitlines():
        if line and not line[0].isspace() and line.endswith(":"):
            name = line[:-1]
        elif name is not None and line.strip().startswith("Candidate:"):
            v = line.split(":", 1)[1].strip()
            out.setdefault(name, None if v == "(none)" else v)
    return out


def closure_without(depends: str, roots: list[str], without: tuple[str, ...] | list[str]) -> list[str]:
    """The packages reachable from `roots` in the output of `apt-cache depends --recurse`
    (a package's line, then its "  Depends: x" lines; a virtual <x> is followed by its
    providers, indented by four), never passing through a package named in `without`."""
    edges: dict[str, set[str]] = {}
    current = ""
    for line in depends.splitlines():
        if not line.strip():
            continue
        if not line[0].isspace():
            current = line.strip()
            edges.setdefault(current, set())
        elif line.startswith("    "):  # a provider of the virtual package named just before
            edges[current].add(line.strip())
        else:
            kind, _, dep = line.strip().partition(": ")
            if kind.lstrip("|") in ("Depends", "PreDepends"):
                edges[current].add(dep.strip())
    skip = {w.split(":")[0] for w in without}
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        pkg = todo.pop()
        if pkg in seen or pkg.strip("<>").split(":")[0] in skip:
            continue
        seen.add(pkg)
        todo += sorted(edges.get(pkg, ()))
    return sorted(p for p in seen if not p.startswith("<"))


MIRROR_VARS = ("BRINGUP_DEBIAN_MIRROR", "BRINGUP_DEBIAN_SECURITY_MIRROR")


def mirror_from_env(var: str) -> str | None:
    """A mirror URL from the environment (None when unset), one word of a sources.list line:
    a space or a newline would add options or lines of its own.  Checked by the CLI at its start."""
    value = os.environ.get(var)
    if not value:
        return None
    if not re.fullmatch(r"(https?|file)://[^\s\x00-\x1f\x7f\[\]\"]+", value):
        raise BringupError(f"{var}={value!r}: not a mirror URL (http://, https:// or file://, no spaces)")
    return value


def _mirror(uri: str) -> str:
    if uri == MIRROR:
        return mirror_from_env(MIRROR_VARS[0]) or uri
    if uri == SECURITY_MIRROR:
        return mirror_from_env(MIRROR_VARS[1]) or uri
    return uri


def _has_indexes(lists: Path, suite: str) -> bool:
    """Whether a lists directory holds the main suite's Packages or Sources index."""
    return lists.is_dir() and any(
        f"_dists_{suite}_" in f.name and ("_Packages" in f.name or "_Sources" in f.name) for f in lists.iterdir()
    )


def _deb_matches(filename: str, pkg: str, version: str, arch: str | None) -> bool:
    # pkg_version_arch.deb, with ':' in the version written as %3a
    stem = filename[:-4]
    parts = stem.split("_")
    if len(parts) != 3 or parts[0] != pkg:
        return False
    if parts[1].replace("%3a", ":") != version:
        return False
    return arch is None or parts[2] in (arch, "all")


def _write_if_changed(path: Path, text: str) -> None:
    if path.exists() and path.read_text() == text:
        return
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)
