"""A serial line for tests, standing in for a USB adapter or ser2net's raw TCP
mode: the cable between a board and the bench, with two ends on loopback.

  board end    the board (QEMU with `-serial tcp:127.0.0.1:<board_port>`, as a
               client) connects when it is powered on and is gone when it is off
  console end  `url` (socket://127.0.0.1:<port>): the console connects here,
               whether the board is on or not, and stays connected across power

Bytes go from one end to the other as they come; what the board prints while
no console is connected is lost (counted in `dropped`), as on a real line."""

import select
import socket
import threading


def _listen() -> socket.socket:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    return s


class SerialLine:
    def __init__(self):
        self._board_srv, self._console_srv = _listen(), _listen()
        self.board_port = self._board_srv.getsockname()[1]
        self.url = f"socket://127.0.0.1:{self._console_srv.getsockname()[1]}"
        self.board: socket.socket | None = None
        self.console: socket.socket | None = None
        self.dropped = 0
        self._alive = True
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while self._alive:
            socks = [s for s in (self._board_srv, self._console_srv, self.board, self.console) if s is not None]
            try:
                readable, _, _ = select.select(socks, [], [], 0.1)
            except (OSError, ValueError):
                return
            for s in readable:
                if s is self._board_srv:
                    self._drop("board")
                    self.board, _ = s.accept()
                    self.board.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                elif s is self._console_srv:
                    self._drop("console")
                    self.console, _ = s.accept()
                    self.console.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                else:
                    self._forward(s)

    def _forward(self, s: socket.socket) -> None:
        try:
            data = s.recv(65536)
        except OSError:
            data = b""
        end = "board" if s is self.board else "console"
        if not data:
            self._drop(end)
            return
        other = self.console if end == "board" else self.board
        if other is None:
            if end == "board":
                self.dropped += len(data)
            return
        try:
            other.sendall(data)
        except OSError:
            self._drop("console" if end == "board" else "board")

    def _drop(self, end: str) -> None:
        s = getattr(self, end)
        if s is not None:
            s.close()
            setattr(self, end, None)

    def close(self):
        self._alive = False
        self._thread.join(timeout=1)
        for s in (self.board, self.console, self._board_srv, self._console_srv):
            if s is not None:
                s.close()
