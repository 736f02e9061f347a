"""Candidate versions come from one `apt-cache policy` call for many packages (each call
reads the whole package lists, about half a second), asked again only after an update."""

import subprocess

import pytest

from bringup.errors import BringupError
from bringup.util import aptprivate
from bringup.util.aptprivate import PrivateApt, policy_candidates

# `apt-cache policy libc6:armhf libc6 nosuchpkg:armhf john:armhf lmbench:armhf` through
# bringup's private bookworm configuration (amd64 + armhf), 2026-11-25
POLICY = """\
libc6:armhf:
  Installed: (none)
  Candidate: 2.36-9+deb12u14
  Version table:
     2.36-9+deb12u14 500
        500 http://deb.debian.org/debian bookworm/main armhf Packages
libc6:
  Installed: (none)
  Candidate: 2.36-9+deb12u14
  Version table:
     2.36-9+deb12u14 500
        500 http://deb.debian.org/debian bookworm/main amd64 Packages
john:armhf:
  Installed: (none)
  Candidate: 1.9.0-2
  Version table:
     1.9.0-2 500
        500 http://deb.debian.org/debian bookworm/main armhf Packages
lmbench:armhf:
  Installed: (none)
  Candidate: (none)
  Version table:
"""


def test_policy_blocks_give_each_packages_candidate():
    assert policy_candidates(POLICY) == {
        "libc6:armhf": "2.36-9+deb12u14",
        "libc6": "2.36-9+deb12u14",
        "john:armhf": "1.9.0-2",
        "lmbench:armhf": None,
    }
    assert policy_candidates("") == {}


def test_one_policy_call_answers_many_packages_and_is_remembered(tmp_path, monkeypatch):
    calls = []

    def run(argv, **kw):
        calls.append(argv[2:])
        if argv[2:] == ["libtirpc-common:armhf"]:  # asked alone: apt prints the arch-all name
            out = "libtirpc-common:\n  Installed: (none)\n  Candidate: 1.3.3+ds-1\n"
        elif argv[2:] == ["nosuchpkg:armhf"]:  # apt prints no block for a package it does not know
            out = ""
        else:
            out = POLICY
        return subprocess.CompletedProcess(argv, 0, out, "")

    monkeypatch.setattr(aptprivate.subprocess, "run", run)
    monkeypatch.setattr(PrivateApt, "update", lambda self, max_age_s=0: None)
    apt = PrivateApt(tmp_path, "bookworm", architectures=("amd64", "armhf"))
    got = apt.candidates(["libc6:armhf", "libc6:amd64", "john:armhf", "nosuchpkg:armhf", "libtirpc-common:armhf"])
    assert got == {
        "libc6:armhf": "2.36-9+deb12u14",
        "libc6:amd64": "2.36-9+deb12u14",  # apt prints a native package without its architecture
        "john:armhf": "1.9.0-2",
        "nosuchpkg:armhf": None,
        "libtirpc-common:armhf": "1.3.3+ds-1",
    }
    assert calls[0] == ["libc6:armhf", "libc6:amd64", "john:armhf", "nosuchpkg:armhf", "libtirpc-common:armhf"]
    assert len(calls) == 3  # the batch, then the two it did not name, each alone
    assert apt.candidate("john:armhf") == "1.9.0-2" and len(calls) == 3, "asked before: no apt-cache call"


def test_packages_not_here_are_fetched_by_one_apt_get_call(tmp_path, monkeypatch):
    calls = []
    versions = {"libc6:armhf": "2.36-9+deb12u14", "john:armhf": "1.9.0-2", "libtirpc-common": "1.3.3+ds-1"}

    def run(argv, cwd=None, **kw):
        calls.append(argv)
        if argv[:2] == ["apt-cache", "policy"]:
            out = "".join(f"{p}:\n  Candidate: {versions[p]}\n" for p in argv[2:] if p in versions)
            return subprocess.CompletedProcess(argv, 0, out, "")
        assert argv[:3] == ["apt-get", "-q", "download"]
        for spec in argv[3:]:  # what apt-get download writes: name_version_arch.deb
            pkg, version = spec.split("=")
            name, _, arch = pkg.partition(":")
            (cwd / f"{name}_{version.replace(':', '%3a')}_{arch or 'all'}.deb").write_bytes(b"!<arch>\n")
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(aptprivate.subprocess, "run", run)
    monkeypatch.setattr(PrivateApt, "update", lambda self, max_age_s=0: None)
    apt = PrivateApt(tmp_path, "bookworm", architectures=("amd64", "armhf"))
    apt._write_config()
    (apt.dir / "debs" / "john_1.9.0-2_armhf.deb").write_bytes(b"!<arch>\n")  # already here
    got = apt.download_many(list(versions))
    assert {p: f.name for p, f in got.items()} == {
        "libc6:armhf": "libc6_2.36-9+deb12u14_armhf.deb",
        "john:armhf": "john_1.9.0-2_armhf.deb",
        "libtirpc-common": "libtirpc-common_1.3.3+ds-1_all.deb",
    }
    downloads = [c for c in calls if c[0] == "apt-get"]
    assert downloads == [["apt-get", "-q", "download", "libc6:armhf=2.36-9+deb12u14", "libtirpc-common=1.3.3+ds-1"]]
    assert [c for c in calls if c[0] == "apt-cache"] == [["apt-cache", "policy", *versions]]
    apt.download_many(list(versions))
    assert len([c for c in calls if c[0] == "apt-get"]) == 1, "all here: no apt-get call"
    with pytest.raises(BringupError, match="'nosuchpkg:armhf' not found in suite bookworm"):
        apt.download_many(["john:armhf", "nosuchpkg:armhf"])
