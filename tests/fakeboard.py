"""A fake board on a loopback TCP socket: a scripted U-Boot and kernel.

It plays the part of QEMU's serial port (socket://) so the real console,
U-Boot dialogue and boot engine run unchanged against it."""

import socket
import threading
import time

from bringup.boot.targets import Target

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


class FakeBoard(Target):
    def __init__(self, kernel=KERNEL, uboot=True, tftp_error=False, close_after=None, hang_after=None):
        self.kernel, self.uboot, self.tftp_error = kernel, uboot, tftp_error
        self.close_after, self.hang_after = close_after, hang_after
        self.srv = socket.socket()
        self.srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(1)
        self.console_url = f"socket://127.0.0.1:{self.srv.getsockname()[1]}"
        self.received = []
        self._stop = threading.Event()

    def start(self):
        self.t0 = time.monotonic()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        conn, _ = self.srv.accept()
        self.conn = conn
        try:
            if self.uboot:
                conn.sendall(UBOOT_BANNER)
                conn.recv(1)
                conn.sendall(b"\r\n=> ")
                buf = b""
                while not self._stop.is_set():
                    data = conn.recv(4096)
                    if not data:
                        return
                    buf += data
                    while b"\n" in buf:
                        line, buf = buf.split(b"\n", 1)
                        cmd = line.decode().strip()
                        self.received.append(cmd)
                        conn.sendall(cmd.encode() + b"\r\n")
                        if cmd.startswith("tftpboot") and self.tftp_error:
                            conn.sendall(b"TFTP error: 'File not found' (1)\r\n=> ")
                        elif cmd.startswith("bootm"):
                            return self._kernel(conn)
                        else:
                            conn.sendall(b"ok\r\n=> ")
            else:
                self._kernel(conn)
        except OSError:
            pass

    def _kernel(self, conn):
        for i, (delay, data) in enumerate(self.kernel):
            if self.hang_after is not None and i == self.hang_after:
                self._stop.wait(30)
                return
            if self.close_after is not None and i == self.close_after:
                conn.close()
                return
            time.sleep(delay)
            conn.sendall(data)
        self._stop.wait(30)

    def stop(self):
        self._stop.set()
        for s in (getattr(self, "conn", None), self.srv):
            try:
                if s:
                    s.close()
            except OSError:
                pass
