"""The workloads' input files, generated on the host: the same bytes for the same
(kind, size, seed) on any host (text of common words, random bytes, zeros, a PPM
picture, a YUV4MPEG2 clip), so every kernel and every run reads the same input."""

from __future__ import annotations

import hashlib

import numpy as np

from bringup.model.workload import Mode, WorkloadInputSpec

WORDS = [
    "the",
    "of",
    "and",
    "to",
    "in",
    "is",
    "was",
    "for",
    "that",
    "on",
    "with",
    "as",
    "by",
    "at",
    "from",
    "kernel",
    "memory",
    "page",
    "process",
    "file",
    "system",
    "thread",
    "lock",
    "cache",
    "buffer",
    "device",
    "driver",
    "interrupt",
    "schedule",
    "network",
    "packet",
    "socket",
    "read",
    "write",
    "open",
    "close",
    "map",
    "unmap",
    "fault",
    "signal",
    "timer",
    "clock",
    "board",
    "boot",
    "image",
    "build",
    "compile",
    "link",
    "module",
    "config",
]


def _pixel(x: int, y: int, t: int, seed: int) -> int:
    """A deterministic picture: gradients, a moving diagonal and integer-hash grain."""
    grain = ((x * 7919 + y * 104729 + t * 1299709 + seed * 15485863) % 251) // 8
    return (x + y + 3 * t + grain) & 255


def _plane(w: int, h: int, t: int, seed: int) -> np.ndarray:
    """_pixel over a w x h picture at time t, as uint8 rows (the same numbers, vectorized)."""
    y, x = np.mgrid[0:h, 0:w].astype(np.int64)
    grain = ((x * 7919 + y * 104729 + t * 1299709 + seed * 15485863) % 251) // 8
    return ((x + y + 3 * t + grain) & 255).astype(np.uint8)


def image_ppm(n: int, seed: int) -> bytes:
    """A binary PPM (P6) of about n bytes: a square, side a multiple of 8."""
    side = max(8, int((n / 3) ** 0.5) // 8 * 8)
    y, x = np.mgrid[0:side, 0:side].astype(np.int64)
    rgb = np.stack([(x * 255 // side) & 255, (y * 255 // side) & 255, _plane(side, side, 0, seed)], axis=-1)
    return f"P6\n{side} {side}\n255\n".encode() + rgb.astype(np.uint8).tobytes()


VIDEO_W, VIDEO_H = 176, 144  # QCIF: a short clip of any length stays small


def video_y4m(n: int, seed: int) -> bytes:
    """A YUV4MPEG2 clip (4:2:0, QCIF, 25 fps) of about n bytes: moving gradients and grain."""
    w, h = VIDEO_W, VIDEO_H
    frame = w * h * 3 // 2
    frames = max(2, n // frame)
    out = bytearray(f"YUV4MPEG2 W{w} H{h} F25:1 Ip A1:1 C420jpeg\n".encode())
    u = bytes((x * 2 + y) & 255 for y in range(h // 2) for x in range(w // 2))
    v = bytes((x + y * 2 + 128) & 255 for y in range(h // 2) for x in range(w // 2))
    for t in range(frames):
        out += b"FRAME\n" + _plane(w, h, t, seed).tobytes() + u + v
    return bytes(out)


def generate(inp: WorkloadInputSpec, mode: Mode) -> bytes:
    """An input file's bytes: the same for the same (kind, size, seed), on any host."""
    n = inp.quick_bytes if mode == "quick" else inp.full_bytes
    if inp.kind == "zeros":
        return bytes(n)
    if inp.kind == "image":
        return image_ppm(n, inp.seed)
    if inp.kind == "video":
        return video_y4m(n, inp.seed)
    out = bytearray()
    counter = 0
    while len(out) < n:
        block = hashlib.sha256(f"{inp.seed}:{counter}".encode()).digest()
        counter += 1
        if inp.kind == "random":
            out += block
            continue
        for i in range(0, 32, 2):  # text: words picked by the hash, a line break now and then
            out += WORDS[block[i] % len(WORDS)].encode()
            out += b"\n" if block[i + 1] < 24 else b" "
    return bytes(out[:n])
