"""Firmware bridge: the serial protocol, the host link, ArmClient and the device-side engine."""
