"""The conformance suite's fixtures: a fresh device for each test and a host handshaken with it.
Options (tests/conftest.py): `--device python,c,qemu` (all three by default), `--device-url URL`,
`--allow-motion`."""

from __future__ import annotations

import pytest

from firmware_bridge import messages as m

from tests.conformance.devices import DeviceUnderTest, board_device, device_named
from tests.conformance.host import Host


def pytest_generate_tests(metafunc):
    """Every test against each device asked for: a device at `--device-url`, or the built-in ones
    `--device` names (all three unless told)."""
    if "device" in metafunc.fixturenames:
        url = metafunc.config.getoption("--device-url")
        names = ["url"] if url else [n.strip() for n in
                                     metafunc.config.getoption("--device").split(",")]
        metafunc.parametrize("device", names, indirect=True)


@pytest.fixture(scope="module")
def qemu_board():
    """One QEMU board for a module's tests, reset before each test: a fresh QEMU would cost each
    test a second (QEMU looks for a reader on a new pty once a second). Not kept for the whole
    run: an idle board still ticks at 1 kHz, a tenth of a core taken from the tests that time
    themselves."""
    from hardware.firmware.qemu import QemuFirmware
    try:
        board = QemuFirmware()
        board.start()
    except RuntimeError as exc:
        pytest.fail(str(exc))
    yield board
    board.close()


@pytest.fixture
def device(request) -> DeviceUnderTest:
    if request.param == "url":
        yield DeviceUnderTest(request.config.getoption("--device-url"), None, simulated=False)
        return
    if request.param == "qemu":
        board = request.getfixturevalue("qemu_board")
        board.reset(hold=True)
        yield board_device(board)
        return
    try:
        context = device_named(request.param)
        dut = context.__enter__()
    except (ValueError, RuntimeError) as exc:
        pytest.fail(str(exc))
    try:
        yield dut
    finally:
        context.__exit__(None, None, None)


@pytest.fixture
def host(device) -> Host:
    """Connected, not yet handshaken."""
    h = Host(device.url)
    try:
        device.release()
        yield h
    finally:
        h.close()


@pytest.fixture
def ready(host) -> Host:
    """Handshaken and heartbeating, in the state a device has after power-on whatever came
    before (a device at a URL lives on from test to test): no fault, disabled, not homed, at
    full pace, no guard. An emergency stop cleared is what un-homes a device."""
    host.hello()
    for command in (m.EStop(), m.ClearFault(), m.Enable(False), m.Rate(1.0),
                    m.Guard(False, (0.0, 0.0, 0.0), 0.0)):
        answer = host.command(command)
        assert isinstance(answer, m.Ack), f"{command} -> {answer}: the device is not ready"
    return host


@pytest.fixture
def stimulus(device):
    if device.stimulus is None:
        pytest.skip("needs a device whose wrist and safety input the suite can drive (built in)")
    return device.stimulus


@pytest.fixture
def moving(request, device, ready) -> Host:
    """Enabled and homed: for tests that move the arm. A real arm (--device-url) moves only
    with --allow-motion."""
    if not device.simulated and not request.config.getoption("--allow-motion"):
        pytest.skip("moves the arm: pass --allow-motion with the arm clear of everything")
    assert isinstance(ready.command(m.Enable(True)), m.Ack)
    mark = ready.mark()
    assert isinstance(ready.command(m.Home()), m.Ack)
    ready.event(m.EventKind.HOMED, 30.0, mark)
    return ready



