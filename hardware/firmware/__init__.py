"""The arm's firmware in C (docs/firmware.md), and its binding for the hosts that run it in a
process of their own: the simulated cell and the tests."""
