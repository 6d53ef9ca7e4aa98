"""Helpers for the adapters' unit tests: run an adapter's run.py as
xlaref does (handshake, then one request a line) and read its replies."""
import json
import os
import subprocess
import sys

from stablehlo_case import Unsupported, find_xlaref


def xlaref_or_none():
    """An xlaref executable for the export step, or None (tests then skip)."""
    try:
        return find_xlaref()
    except Unsupported:
        return None


def add_case(case_id=1, etype="f32"):
    """A one-instruction Add of two 3-element arrays."""
    shape = f"{etype}[3]"
    module = {"format": "xla-json/1", "computations": {"main": {
        "params": [{"name": "x", "shape": shape}, {"name": "y", "shape": shape}],
        "instructions": [{"name": "r", "op": "Add", "operands": ["x", "y"]}]}}}
    return {"id": case_id, "format": "xla-json/1", "name": "test/add", "module": module,
            "args": [{"shape": shape, "value": [1, 2, 3]}, {"shape": shape, "value": [10, 20, 30]}]}


def unary_case(op, case_id=1, etype="f32"):
    shape = f"{etype}[2]"
    module = {"format": "xla-json/1", "computations": {"main": {
        "params": [{"name": "x", "shape": shape}],
        "instructions": [{"name": "r", "op": op, "operands": ["x"]}]}}}
    return {"id": case_id, "format": "xla-json/1", "name": f"test/{op}", "module": module,
            "args": [{"shape": shape, "value": [0.5, 1]}]}


def converse(run_py, requests, env_extra=None, timeout=300):
    """Runs `python3 run_py`, sends the requests, returns (handshake, replies, exit status)."""
    env = dict(os.environ)
    env.update(env_extra or {})
    xlaref = xlaref_or_none()
    if xlaref:
        env["XLAREF"] = xlaref
    text = "".join(json.dumps(r) + "\n" for r in requests)
    out = subprocess.run([sys.executable, run_py], input=text, capture_output=True, text=True, timeout=timeout,
                         env=env)
    lines = [json.loads(l) for l in out.stdout.splitlines() if l.strip()]
    return (lines[0] if lines else None), lines[1:], out.returncode
