"""The device end of a pseudo-terminal: what a simulated device writes to and reads from, while the
host opens the other end (`/dev/pts/N`) with pyserial exactly like a USB serial port."""

from __future__ import annotations

import errno
import os
import termios
import tty


class PtyPort:
    def __init__(self) -> None:
        self.master, host_end = os.openpty()
        tty.setraw(host_end)   # bytes pass untouched: no echo, no line discipline
        attrs = termios.tcgetattr(host_end)
        attrs[3] &= ~termios.ECHO
        termios.tcsetattr(host_end, termios.TCSANOW, attrs)
        os.set_blocking(self.master, False)
        self.path = os.ttyname(host_end)
        # The device end keeps no host end open: the kernel then tells, by EIO on the device end,
        # that no host has the port open (its process closed it or is gone). The pair lasts as long
        # as the device end, so a host may open the port again by its path.
        os.close(host_end)
        self.closed = False
        self.host_open = False      # a host had the port open at the last read

    def read(self) -> bytes:
        """Whatever the host has written since the last call (b"" if nothing or closed)."""
        if self.closed:
            return b""
        chunks = []
        while True:
            try:
                data = os.read(self.master, 65536)
            except BlockingIOError:
                self.host_open = True
                break
            except OSError as exc:
                if exc.errno == errno.EIO:   # no host has the port open
                    self.host_open = False
                    break
                raise
            self.host_open = True
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
        try:
            os.close(self.master)
        except OSError:
            pass
