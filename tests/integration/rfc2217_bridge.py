"""An RFC 2217 serial server for tests, standing in for ser2net or a labgrid
exporter: it accepts one client on 127.0.0.1 and bridges it, with pyserial's
own server side of the protocol (serial.rfc2217.PortManager), to a serial port
given as a pyserial URL (here QEMU's TCP serial)."""

import contextlib
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
        ser = self._open_board_port()
        if ser is None:
            conn.close()
            return
        lock = threading.Lock()

        class Net:
            def write(self, data):
                with lock:
                    conn.sendall(data)

        net = Net()
        pm = serial.rfc2217.PortManager(ser, net)
        self._record_negotiation(ser)
        t = threading.Thread(target=self._board_to_net, args=(ser, pm, conn, net), daemon=True)
        t.start()
        self._net_to_board(conn, pm, ser)
        self._alive = False
        t.join(timeout=2)  # board_to_net reads the port: stop it before the port is closed
        ser.close()
        conn.close()

    def _open_board_port(self):
        """The board's serial port, open; None when the board (QEMU) does not listen
        within 20 s or the bridge is closed meanwhile."""
        ser = serial.serial_for_url(self.port_url, timeout=0.05, do_not_open=True)
        deadline = time.monotonic() + 20
        while True:  # the board (QEMU) may not listen yet
            try:
                ser.open()
                return ser
            except serial.SerialException:
                if time.monotonic() > deadline or not self._alive:
                    return None
                time.sleep(0.01)

    def _record_negotiation(self, ser):
        """Append to self.negotiated the port's parameters each time the client changes them."""
        orig = ser._reconfigure_port

        def seen():
            self.negotiated.append((ser.baudrate, ser.bytesize, ser.parity, ser.stopbits))
            orig()

        ser._reconfigure_port = seen

    def _board_to_net(self, ser, pm, conn, net):
        """The board's output to the client, escaped, until the bridge stops or the port fails."""
        while self._alive:
            try:
                data = ser.read(ser.in_waiting or 1)
            except (serial.SerialException, OSError):
                break
            if data:
                net.write(b"".join(pm.escape(data)))
        with contextlib.suppress(OSError):
            conn.shutdown(socket.SHUT_RDWR)

    def _net_to_board(self, conn, pm, ser):
        """The client's bytes to the board, RFC 2217 commands taken out (and acted on),
        until the client goes or the port fails."""
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

    def close(self):
        self._alive = False
        self.server.close()
