#!/usr/bin/env python3
"""Regenerates every case file of oracle-cases/elementwise and oracle-cases/compare
(and elementwise/KNOWN_FAILING.json.txt). Each expected value is derived by hand
(ref.py: two's-complement and IEEE rules, mpmath for transcendental values) and
checked on XLA CPU through tools/xla_run_hlo.py; a disagreement stops the run
unless the case states why the hand value stands (printed as DISCREPANCY).
Needs jax, ml_dtypes, mpmath. Run: python3 oracle-cases/elementwise/generator/gen.py"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case, sec_arith, sec_bcast, sec_pinned, sec_compare, sec_errors
for m in (sec_arith, sec_bcast, sec_pinned, sec_compare, sec_errors):
    m.gen()
case.write_all()
