"""Long GPU jobs end by SIGTERM (``timeout``, job schedulers): make it a KeyboardInterrupt, so
the code that saves finished work on Ctrl-C (sweep parts, benchmark summaries) runs for it too."""

import signal


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def interrupt_on_sigterm() -> None:
    signal.signal(signal.SIGTERM, _raise_interrupt)
