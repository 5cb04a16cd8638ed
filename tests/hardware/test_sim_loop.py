"""The simulated cell's physics loop: one that stops on an error says why, rather than leave a
server that says it serves while its serial port has gone quiet (issue 23, D1's symptom)."""

import time

from hardware.sim.server import SimServer


def test_a_loop_that_stops_on_an_error_says_why(default_cell):
    server = SimServer(default_cell, 1, cameras=False)

    def broken_step():
        raise RuntimeError("a contact solver blew up")
    server.person.step = broken_step
    with server:
        deadline = time.monotonic() + 5.0
        while server.failure is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert server.failure.startswith("RuntimeError: a contact solver blew up (at ")
        assert "test_sim_loop.py:" in server.failure
