"""The device end of a pseudo-terminal: what a simulated device writes to and reads from, while the
host opens the other end (`/dev/pts/N`) with pyserial exactly like a USB serial port."""

from __future__ import annotations

import errno
import os
import termios
import tty


class PtyPort:
    def __init__(self) -> None:
        self.master, self._slave = os.openpty()
        tty.setraw(self._slave)   # bytes pass untouched: no echo, no line discipline
        attrs = termios.tcgetattr(self._slave)
        attrs[3] &= ~termios.ECHO
        termios.tcsetattr(self._slave, termios.TCSANOW, attrs)
        os.set_blocking(self.master, False)
        self.path = os.ttyname(self._slave)
        self.closed = False

    def read(self) -> bytes:
        """Whatever the host has written since the last call (b"" if nothing or closed)."""
        if self.closed:
            return b""
        chunks = []
        while True:
            try:
                data = os.read(self.master, 65536)
            except BlockingIOError:
                break
            except OSError as exc:
                if exc.errno == errno.EIO:   # no host has the port open
                    break
                raise
            if not data:
                break
            chunks.append(data)
        return b"".join(chunks)

    def write(self, data: bytes) -> int:
        """Write what fits; a host that is not reading loses the rest, like a real UART."""
        if not data or self.closed:
            return 0
        try:
            return os.write(self.master, data)
        except (BlockingIOError, OSError):
            return 0

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        for fd in (self.master, self._slave):
            try:
                os.close(fd)
            except OSError:
                pass
