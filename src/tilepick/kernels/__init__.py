"""Triton kernel sources, one family per module. No policy lives here: solvers decide what runs."""
