"""An RFC 2217 serial server for tests, standing in for ser2net or a labgrid
exporter: it accepts one client on 127.0.0.1 and bridges it, with pyserial's
own server side of the protocol (serial.rfc2217.PortManager), to a serial port
given as a pyserial URL (here QEMU's TCP serial)."""

import socket
import threading
import time

import serial
import serial.rfc2217


class Rfc2217Bridge:
    def __init__(self, port_url: str):
        self.port_url = port_url
        self.server = socket.socket()
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(1)
        self.port = self.server.getsockname()[1]
        self.url = f"rfc2217://127.0.0.1:{self.port}"
        self.negotiated = []  # the client's parameter changes, as the server saw them
        self._alive = True
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self):
        try:
            conn, _ = self.server.accept()
        except OSError:
            return
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # the board's port is opened only now, as ser2net does: QEMU holds the guest until then
        ser = serial.serial_for_url(self.port_url, timeout=0.05, do_not_open=True)
        deadline = time.monotonic() + 20
        while True:  # the board (QEMU) may not listen yet
            try:
                ser.open()
                break
            except serial.SerialException:
                if time.monotonic() > deadline or not self._alive:
                    conn.close()
                    return
                time.sleep(0.01)
        lock = threading.Lock()
        bridge = self

        class Net:
            def write(self, data):
                with lock:
                    conn.sendall(data)

        pm = serial.rfc2217.PortManager(ser, Net())
        orig = ser._reconfigure_port

        def seen():
            bridge.negotiated.append((ser.baudrate, ser.bytesize, ser.parity, ser.stopbits))
            orig()

        ser._reconfigure_port = seen

        def board_to_net():
            while self._alive:
                try:
                    data = ser.read(ser.in_waiting or 1)
                except (serial.SerialException, OSError):
                    break
                if data:
                    Net().write(b"".join(pm.escape(data)))
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

        t = threading.Thread(target=board_to_net, daemon=True)
        t.start()
        while self._alive:
            try:
                data = conn.recv(1024)
            except OSError:
                break
            if not data:
                break
            try:
                ser.write(b"".join(pm.filter(data)))
            except (serial.SerialException, OSError):
                break
        self._alive = False
        t.join(timeout=2)  # board_to_net reads the port: stop it before the port is closed
        ser.close()
        conn.close()

    def close(self):
        self._alive = False
        self.server.close()
