"""The devices the conformance suite can check: built in (`--device python`: the reference engine;
`c`: the C firmware's engine, host build; `qemu`: the C firmware's microcontroller build in
QEMU), or any device at a pyserial URL or port (`--device-url`). A built-in device comes with
`Stimulus`: the suite's hands on the simulated arm the firmware drives (the wrist's force, the
safety input). A device at a URL has none, and the tests that need one are skipped for it."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

import numpy as np

from firmware_bridge import messages as m
from firmware_bridge.device.engine import DeviceEngine
from firmware_bridge.device.hardware import DeviceConfig
from firmware_bridge.device.ideal_arm import IdealArm
from firmware_bridge.device.runner import DeviceRunner

# A 6-joint arm whose home is away from every limit, and whose first joint has room to move.
JOINTS = tuple(m.JointInfo(-3.0, 3.0, 1.0, 0.1 * i) for i in range(6))
BUILT_IN = ("python", "c", "qemu")


@dataclass
class Stimulus:
    """What the world does to a simulated arm: `set_force(wrench, beyond)`, the wrist's reading
    (sensor frame, N and N m) while joint `beyond[0]` is past `beyond[1]` rad (the wrist meets
    something there), or always if `beyond` is None; `set_presence(on)`, the safety input."""

    set_force: Callable[[Sequence[float], tuple[int, float] | None], None]
    set_presence: Callable[[bool], None]


@dataclass
class DeviceUnderTest:
    url: str
    stimulus: Stimulus | None = None
    simulated: bool = True        # its arm moves in a simulation, not in a room
    # a device held still until the host has its port open (so it reads all the device sent)
    release: Callable[[], None] = lambda: None


@contextmanager
def engine_device(engine) -> Iterator[DeviceUnderTest]:
    """An engine (the reference, or the C firmware's) in real time behind a pty, driving an
    ideal arm."""
    arm = IdealArm(np.array([j.q_home for j in JOINTS]))

    def set_force(wrench, beyond=None):
        wrench = np.array(wrench, float)
        if beyond is None:
            arm.force_at = lambda q: wrench
        else:
            joint, limit = beyond
            arm.force_at = lambda q: wrench if q[joint] > limit else np.zeros(6)

    def set_presence(on):
        arm.presence = on
    runner = DeviceRunner(DeviceConfig(JOINTS, 0.04, 100.0), arm, engine)
    with runner:
        yield DeviceUnderTest(runner.path, Stimulus(set_force, set_presence))


@contextmanager
def device_named(name: str) -> Iterator[DeviceUnderTest]:
    if name == "python":
        with engine_device(DeviceEngine) as device:
            yield device
        return
    if name == "c":
        from hardware.firmware.build import build_host
        from hardware.firmware.c_engine import CEngine
        library = build_host() / "libjrcore.so"
        with engine_device(lambda config, arm: CEngine(config, arm, library=library)) as device:
            yield device
        return
    if name == "qemu":
        from hardware.firmware.qemu import QemuFirmware
        with QemuFirmware() as board:
            board.reset(hold=True)
            yield board_device(board)
        return
    raise ValueError(f"--device {name}: no such device (python, c, qemu)")


def board_device(board) -> DeviceUnderTest:
    """The C firmware in QEMU (hardware/firmware/qemu.py `QemuFirmware`) as the suite sees it:
    held in its reset until the host's port is open."""
    return DeviceUnderTest(board.link_path, Stimulus(board.set_force, board.set_presence),
                           release=board.release)
