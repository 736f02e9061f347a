"""A labgrid lab on loopback for tests: a real labgrid-coordinator and
labgrid-exporter (from .venv-labgrid, `make deps`), and QEMU with real U-Boot
playing the boards.

Each board of the lab is a place with three resources, exported as written:
  NetworkSerialPort  the console end of a serial line (serial_line.py): it
                     exists whether the board is on or not, as ser2net's does;
                     QEMU connects its serial port to the board end at power-on
  NetworkPowerPort   model 'simplerest', served by PowerShim: GET /power/<i>/1
                     starts the board's QEMU, /0 stops it
  TFTPProvider       the directory QEMU's user network serves by TFTP
"""

from __future__ import annotations

import http.server
import os
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

from .serial_line import SerialLine

ROOT = Path(__file__).resolve().parents[2]
LGBIN = ROOT / ".venv-labgrid" / "bin"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def qemu_argv(board_port: int, tftp: Path) -> list[str]:
    return [
        "qemu-system-arm",
        "-M",
        "virt",
        "-cpu",
        "cortex-a15",
        "-m",
        "512",
        "-display",
        "none",
        "-monitor",
        "none",
        "-nodefaults",
        "-serial",
        f"tcp:127.0.0.1:{board_port},nodelay=on",
        "-netdev",
        f"user,id=n0,ipv6=off,tftp={tftp}",
        "-device",
        "virtio-net-device,netdev=n0",
        "-bios",
        "/usr/lib/u-boot/qemu_arm/u-boot.bin",
    ]


class PowerShim:
    """An HTTP power switch (labgrid's 'simplerest' model) whose outlets start and stop QEMU."""

    def __init__(self):
        self.outlets: dict[int, list[str]] = {}
        self.procs: dict[int, subprocess.Popen] = {}
        self.log: list[tuple[int, int]] = []
        shim = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                parts = [p for p in self.path.split("/") if p]
                if len(parts) < 2 or parts[0] != "power" or int(parts[1]) not in shim.outlets:
                    self.send_error(404)
                    return
                i = int(parts[1])
                if len(parts) == 3:
                    shim.switch(i, parts[2] == "1")
                body = b"1" if shim.is_on(i) else b"0"
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/power/{{index}}/{{value}}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def is_on(self, i: int) -> bool:
        p = self.procs.get(i)
        return p is not None and p.poll() is None

    def switch(self, i: int, on: bool) -> None:
        self.log.append((i, int(on)))
        p = self.procs.pop(i, None)
        if p is not None and p.poll() is None:
            p.kill()
            p.wait()
        if on:
            self.procs[i] = subprocess.Popen(
                self.outlets[i], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )

    def close(self) -> None:
        for i in list(self.procs):
            self.switch(i, False)
        self.server.shutdown()


class Lab:
    """Coordinator, exporter and power shim on 127.0.0.1; places added with add_board()."""

    def __init__(self, work: Path, exporter: str = "lab-exp"):
        self.work, self.exporter_name = work, exporter
        work.mkdir(parents=True, exist_ok=True)
        self.address = f"127.0.0.1:{free_port()}"
        self.env = {**os.environ, "LG_COORDINATOR": self.address}
        self.shim = PowerShim()
        self.lines: list[SerialLine] = []
        self.bridges: list = []
        self.boards: dict[str, dict] = {}
        self.coordinator = self._spawn("coordinator", [str(LGBIN / "labgrid-coordinator"), "-l", self.address])
        self._wait_for_coordinator()
        self.exporter: subprocess.Popen | None = None

    def _spawn(self, name: str, argv: list[str]) -> subprocess.Popen:
        log = open(self.work / f"{name}.log", "ab")  # noqa: SIM115 - kept open for the process's life
        return subprocess.Popen(argv, cwd=self.work, env=self.env, stdout=log, stderr=subprocess.STDOUT)

    def _wait_for_coordinator(self) -> None:
        host, port = self.address.rsplit(":", 1)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex((host, int(port))) == 0:
                    return
            time.sleep(0.1)
        raise RuntimeError(f"labgrid-coordinator did not listen on {self.address}")

    def client(self, *args: str, user: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
        env = dict(self.env)
        if user:
            env["LG_USERNAME"] = user
        p = subprocess.run(
            [str(LGBIN / "labgrid-client"), "-x", self.address, *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        if check and p.returncode != 0:
            raise RuntimeError(f"labgrid-client {' '.join(args)}: {p.stdout}{p.stderr}")
        return p

    def add_board(self, name: str, rfc2217: bool = False) -> dict:
        """A board (QEMU + U-Boot) behind outlet len(boards), a serial line and a TFTP dir.
        rfc2217: the serial port is served through an RFC 2217 server (as ser2net's
        telnet mode), else as raw TCP."""
        line = SerialLine()
        self.lines.append(line)
        tftp = self.work / f"tftp-{name}"
        tftp.mkdir()
        index = len(self.boards)
        self.shim.outlets[index] = qemu_argv(line.board_port, tftp)
        url = line.url
        if rfc2217:
            from .rfc2217_bridge import Rfc2217Bridge

            bridge = Rfc2217Bridge(line.url)
            self.bridges.append(bridge)
            url = bridge.url
        self.boards[name] = {"line": line, "tftp": tftp, "index": index, "url": url}
        return self.boards[name]

    def export(self) -> None:
        """Write the exporter YAML for every board and start the exporter."""
        y = []
        for name, b in self.boards.items():
            scheme, port = b["url"].split("://")[0], int(b["url"].rsplit(":", 1)[1])
            y += [
                f"{name}:",
                "  NetworkSerialPort:",
                "    host: 127.0.0.1",
                f"    port: {port}",
                f"    protocol: {'rfc2217' if scheme == 'rfc2217' else 'raw'}",
                "  NetworkPowerPort:",
                "    model: simplerest",
                f"    host: '{self.shim.url}'",
                f"    index: {b['index']}",
                "  TFTPProvider:",
                f"    internal: {b['tftp']}/",
                "    external: ''",
            ]
        (self.work / "exporter.yaml").write_text("\n".join(y) + "\n")
        self.exporter = self._spawn(
            "exporter", [str(LGBIN / "labgrid-exporter"), "--name", self.exporter_name, "exporter.yaml"]
        )
        deadline = time.monotonic() + 30
        want = {f"{self.exporter_name}/{n}/NetworkSerialPort" for n in self.boards}
        while time.monotonic() < deadline:
            p = self.client("resources", check=False)
            if all(w in p.stdout for w in want):
                return
            time.sleep(0.3)
        raise RuntimeError(f"the exporter's resources did not appear: {(self.work / 'exporter.log').read_text()}")

    def add_place(self, place: str, board: str) -> None:
        self.client("-p", place, "create")
        self.client("-p", place, "add-match", f"{self.exporter_name}/{board}/*")

    def acquired_by(self, place: str) -> str | None:
        out = self.client("-p", place, "show").stdout
        for line in out.splitlines():
            if line.startswith("  acquired: "):
                who = line.split(": ", 1)[1].strip()
                return None if who == "None" else who
        return None

    def kill_exporter(self) -> None:
        if self.exporter is not None and self.exporter.poll() is None:
            self.exporter.send_signal(signal.SIGKILL)
            self.exporter.wait()

    def close(self) -> None:
        self.kill_exporter()
        self.shim.close()
        for bridge in self.bridges:
            bridge.close()
        for line in self.lines:
            line.close()
        self.coordinator.terminate()
        try:
            self.coordinator.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.coordinator.kill()
            self.coordinator.wait()
