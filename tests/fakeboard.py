"""A fake board on a loopback TCP socket: a scripted U-Boot and kernel.

It plays a board on the bench whose serial line is a socket:// URL (as ser2net
serves one), so the real console, U-Boot dialogue and boot session run
unchanged against it.  Like a real serial line, it prints whether anyone
listens or not: what it prints at power-on while no console is connected is
lost (kept in `lost`).  It is powered by power_on() as a Target, or, playing
the hardware behind a SerialTarget, by a file appearing (the board file's
power command touches it).

`events` records, with times, when the console connected and when the power
came on, so tests can check the order a session used."""

import select
import socket
import threading
import time
from pathlib import Path

from bringup.boot.target import BootSpec, Network, Staging

UBOOT_BANNER = b"\r\nU-Boot 2023.01 (fake)\r\n\r\nDRAM:  512 MiB\r\nHit any key to stop autoboot:  2 "
KERNEL = [
    (0.00, b"Starting kernel ...\r\n\r\n"),
    (0.05, b"[    0.000000] Booting Linux on physical CPU 0x0\r\n"),
    (0.00, b"[    0.000000] Linux version 6.12.95 (bringup@bringup) #1\r\n"),
    (0.10, b"[    0.100000] printk: console [ttyAMA0] enabled\r\n"),
    (0.20, b"[    0.300000] Freeing unused kernel image (initmem) memory: 1024K\r\n"),
    (0.00, b"[    0.300500] Run /init as init process\r\n"),
    (0.30, b"[    0.600000] bringup: userspace up\r\n"),
    (0.05, b"\r\nbringup login: "),
]


class FakeBoard:
    """A Target (bringup.boot.target.Target) and the board behind it."""

    def __init__(
        self,
        kernel=KERNEL,
        uboot=True,
        tftp_error=False,
        close_after=None,
        hang_after=None,
        power_file: Path | None = None,
        tftp_dir: Path | None = None,
        shell=False,
        stop_str=b" ",
        deaf_for=0.0,
        bootdelay=5.0,
        flash=None,
    ):
        self.kernel, self.uboot, self.tftp_error = kernel, uboot, tftp_error
        self.close_after, self.hang_after, self.shell = close_after, hang_after, shell
        self.power_file, self.tftp_dir = power_file, tftp_dir
        # autoboot: the countdown flushes input for deaf_for seconds (keys typed then are
        # lost), then waits bootdelay seconds for stop_str; unstopped, it boots `flash`
        # (the kernel in the board's flash; default: the same lines as `kernel`)
        self.stop_str, self.deaf_for, self.bootdelay = stop_str, deaf_for, bootdelay
        self.flash = flash if flash is not None else kernel
        self.interrupts = 0  # bytes of stop attempts the board saw (after the deaf window)
        self.autobooted = False
        self.srv = socket.socket()
        self.srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(1)
        self.console_url = f"socket://127.0.0.1:{self.srv.getsockname()[1]}"
        self.baud = 115200
        self.t0: float | None = None
        self.received: list[str] = []
        self.events: list[tuple[str, float]] = []
        self.lost = b""
        self.conn: socket.socket | None = None
        self._powered = threading.Event()
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    # -- the Target protocol --------------------------------------------------
    def staging(self, kernel_id: str) -> Staging:
        assert self.tftp_dir is not None, "a U-Boot boot of the fake needs tftp_dir"
        return Staging(self.tftp_dir)

    def network(self) -> Network:
        return Network(serverip="192.0.2.1", dhcp=True)

    def nfs_address(self) -> str:
        return "192.0.2.1"

    def prepare(self, boot: BootSpec) -> None:
        self.events.append(("prepare", time.monotonic()))
        self.boot = boot

    def power_on(self) -> None:
        self.t0 = time.monotonic()
        self._powered.set()

    def power_off(self) -> None:
        self.stop()

    def alive(self) -> str | None:
        return None

    def describe(self) -> dict:
        return {"t0": "power-on", "console": self.console_url, "qemu_argv": None}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.power_off()

    # -- the board --------------------------------------------------------------
    def _accept(self, timeout: float) -> None:
        if self.conn is None and select.select([self.srv], [], [], timeout)[0]:
            self.conn, _ = self.srv.accept()
            self.events.append(("console", time.monotonic()))

    def _wait_for_power(self) -> bool:
        while not self._stop.is_set():
            if self.power_file is not None and self.power_file.exists() and not self._powered.is_set():
                self.t0 = time.monotonic()
                self._powered.set()
            if self._powered.is_set():
                self._accept(0)  # a console that connected just before power-on listens
                self.events.append(("power_on", time.monotonic()))
                return True
            self._accept(0.002)
        return False

    def _send(self, data: bytes) -> None:
        """Onto the line: to the console if one listens, else nowhere."""
        if self.conn is None:
            self.lost += data
        else:
            self.conn.sendall(data)

    def _serve(self):
        try:
            if not self._wait_for_power():
                return
            if self.uboot:
                self._send(UBOOT_BANNER)
                if self.conn is None:  # nobody stopped autoboot: the board boots on its own
                    self._accept(5)
                    if self.conn is None:
                        return
                    return self._kernel(self.conn)
                conn = self.conn
                if not self._stop_autoboot(conn):
                    self.autobooted = True
                    return self._kernel(conn, self.flash)
                conn.sendall(b"\r\n=> ")
                return self._uboot_shell(conn)
            else:
                self._accept(5)
                if self.conn is not None:
                    self._kernel(self.conn)
        except OSError:
            pass

    def _uboot_shell(self, conn):
        """U-Boot's prompt: echo each command, answer ok (or the TFTP error), boot at bootm."""
        buf = b""
        while not self._stop.is_set():
            data = conn.recv(4096)
            if not data:
                return
            buf += data
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                cmd = line.decode().strip()
                if cmd:
                    self.received.append(cmd)
                conn.sendall(cmd.encode() + b"\r\n")
                if cmd.startswith("tftpboot") and self.tftp_error:
                    conn.sendall(b"TFTP error: 'File not found' (1)\r\n=> ")
                elif cmd.startswith("bootm"):
                    return self._kernel(conn)
                else:
                    conn.sendall(b"ok\r\n=> ")

    def _stop_autoboot(self, conn) -> bool:
        """U-Boot's countdown: True when stop_str arrived in time."""
        start = time.monotonic()
        got = b""
        while time.monotonic() - start < self.deaf_for + self.bootdelay:
            if not select.select([conn], [], [], 0.01)[0]:
                continue
            data = conn.recv(64)
            if not data:
                return False
            if time.monotonic() - start < self.deaf_for:
                continue  # flushed: the key is lost
            self.interrupts += len(data)
            got += data
            if self.stop_str in got:
                return True
        return False

    def _kernel(self, conn, lines=None):
        for i, (delay, data) in enumerate(self.kernel if lines is None else lines):
            if self.hang_after is not None and i == self.hang_after:
                self._stop.wait(30)
                return
            if self.close_after is not None and i == self.close_after:
                conn.close()
                return
            time.sleep(delay)
            conn.sendall(data)
        if self.shell:
            self._shell(conn)
        self._stop.wait(30)

    def _shell(self, conn):
        """A login and a shell that answers the marker-wrapped commands of boot/shell.py."""
        buf = b""
        prompt = b"bringup-shell# "
        while not self._stop.is_set():
            data = conn.recv(4096)
            if not data:
                return
            buf += data
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                cmd = line.decode().strip()
                self.received.append(cmd)
                if cmd == "root":
                    conn.sendall(b"root\r\n" + prompt)
                    continue
                # echo 'AB''CDB'; cmd; echo 'AB''CDE' $?
                parts = [p.strip() for p in cmd.split(";")]
                begin = parts[0].split(" ", 1)[1].replace("'", "")
                end = parts[-1].split(" ")[1].replace("'", "")
                out = f"output of {parts[1]}\r\n" if parts[1] != "echo 1 > /proc/sys/kernel/printk" else ""
                conn.sendall(cmd.encode() + b"\r\n" + f"{begin}\r\n{out}{end} 0\r\n".encode() + prompt)

    def stop(self):
        self._stop.set()
        for s in (self.conn, self.srv):
            try:
                if s:
                    s.close()
            except OSError:
                pass
