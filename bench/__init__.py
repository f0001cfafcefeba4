"""Benchmarks of what users wait for (not tests): ``python -m bench``."""
