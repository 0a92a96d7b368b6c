"""Benchmarking: timing, and (GPU) sweeps over problems x configs."""
