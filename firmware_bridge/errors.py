"""Typed errors of the arm link. Each says what happened and what to do next."""

from __future__ import annotations


class ArmError(RuntimeError):
    """Base of every arm-link error."""


class ConnectError(ArmError):
    """The port could not be opened or the device did not answer the handshake."""


class VersionMismatchError(ArmError):
    """Host and device speak different protocol versions; the device will not move."""


class LinkError(ArmError):
    """The link failed; the arm was told to stop (if the link still carried anything) and the
    device stops on its own when heartbeats stop. Reconnect, clear the fault and re-home."""


class CorruptFrameError(LinkError):
    """A frame failed its CRC or framing."""


class FrameDropError(LinkError):
    """Frames went missing: a gap in the device's sequence numbers, or a command never answered."""


class LinkStalledError(LinkError):
    """Nothing arrived from the device for longer than the stall limit."""


class PortClosedError(LinkError):
    """The serial port closed or vanished (unplugged?)."""


class DeviceResetError(LinkError):
    """The device rebooted (new boot id, or its clock went back): it is not homed any more."""


class CommandRefused(ArmError):
    """The device refused a command (NAK) with a reason code."""

    def __init__(self, command: str, reason: int, hint: str):
        from firmware_bridge.messages import Reason
        try:
            name = Reason(reason).name
        except ValueError:
            name = f"reason {reason}"
        super().__init__(f"device refused {command}: {name}. {hint}")
        self.command = command
        self.reason = reason


class DeviceFault(ArmError):
    """The device latched a fault and stopped. Clear it (clear_fault) and re-home before moving."""

    def __init__(self, fault: int, during: str = ""):
        from firmware_bridge.messages import Fault
        names = [f.name for f in Fault if f & fault] or [f"0x{fault:x}"]
        own = " (INTERNAL: the firmware met an error of its own, a firmware bug to report with " \
              "what the arm was doing)" if fault & Fault.INTERNAL else ""
        when = f" during {during}" if during else ""
        super().__init__(f"device fault {'+'.join(names)}{when}: the arm stopped{own}; clear the "
                         f"fault and re-home before moving again")
        self.fault = fault


class ArmTimeout(ArmError):
    """Waited longer than asked for (device time)."""
