"""Benchmarks behind `jenga-robot bench`: one module per suite."""
