"""The device side of the protocol, shared by the simulator and the tests."""
