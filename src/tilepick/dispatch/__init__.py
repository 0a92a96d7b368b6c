"""Dispatch: find modes, the SQLite perf-db, tuning files and the per-shape cache."""

from tilepick.dispatch.devices import RealDevice, SimulatedDevice
from tilepick.dispatch.dispatcher import MODES, Dispatcher
from tilepick.dispatch.perfdb import Environment, PerfDb

__all__ = ["Dispatcher", "MODES", "PerfDb", "Environment", "RealDevice", "SimulatedDevice"]
