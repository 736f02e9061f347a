"""The git tree id of a directory, in pure Python (no git needed).

What `git init && git add -A -f && git write-tree` prints inside the
directory: the content identity of a source tree, independent of how it was
archived or compressed.  Two tarballs of the same kernel (kernel.org's and one
rebuilt from a git mirror) have different file hashes but the same tree id.

Git's rules, as git implements them:
  - a file is a blob: sha1(b"blob <size>\\0" + contents); a symlink is a blob
    of its target; the mode is 100755 when the owner may execute the file,
    else 100644; 120000 for a symlink; 40000 for a directory
  - a tree is sha1(b"tree <size>\\0" + entries), each entry
    b"<mode> <name>\\0" + the 20-byte id, sorted by name with a directory's
    name compared as if it ended in "/"
  - empty directories do not exist for git (no entry); neither does .git
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

BLOB, EXEC, LINK, TREE = b"100644", b"100755", b"120000", b"40000"


def _object(kind: bytes, data: bytes) -> bytes:
    h = hashlib.sha1(kind + b" " + str(len(data)).encode() + b"\0")
    h.update(data)
    return h.digest()


def blob_id(data: bytes) -> str:
    """The git blob id of some bytes (`git hash-object`)."""
    return _object(b"blob", data).hex()


def _file_digest(path: str, size: int) -> bytes:
    h = hashlib.sha1(b"blob " + str(size).encode() + b"\0")
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.digest()


def _tree(entries: list[tuple[bytes, bytes, bytes]]) -> bytes | None:
    """entries: (name, mode, 20-byte id).  None for an empty tree (git omits it)."""
    if not entries:
        return None
    entries.sort(key=lambda e: e[0] + b"/" if e[1] == TREE else e[0])
    return _object(b"tree", b"".join(mode + b" " + name + b"\0" + oid for name, mode, oid in entries))


def _dir_id(path: str) -> bytes | None:
    entries = []
    with os.scandir(path) as it:
        for e in it:
            name = os.fsencode(e.name)
            if e.name == ".git":
                continue
            st = e.stat(follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                entries.append((name, LINK, _object(b"blob", os.fsencode(os.readlink(e.path)))))
            elif stat.S_ISDIR(st.st_mode):
                sub = _dir_id(e.path)
                if sub is not None:
                    entries.append((name, TREE, sub))
            elif stat.S_ISREG(st.st_mode):
                mode = EXEC if st.st_mode & stat.S_IXUSR else BLOB
                entries.append((name, mode, _file_digest(e.path, st.st_size)))
            # sockets, fifos, devices: git does not store them either
    return _tree(entries)


def tree_id(path: Path) -> str:
    """The git tree id of the directory's contents (the empty tree's id when empty)."""
    oid = _dir_id(str(path))
    return (oid or _object(b"tree", b"")).hex()
