#!/usr/bin/env python3
"""xlaref conformance backend for StableHLO's reference interpreter, as
shipped in jaxlib (`jaxlib.mlir.dialects.stablehlo.eval_module`; docs/backends.md).

    xlaref conform --backend 'python3 backends/stablehlo/run.py' oracle-cases

Prints the handshake, then relays each request line to a worker process
(interpreter_worker.py) that exports the module to StableHLO with `xlaref export` and
interprets it. The interpreter aborts the process on ops it does not
implement (`LLVM ERROR: Unsupported op`): the supervisor
(backends/common/supervisor.py) then answers `unsupported` with that line,
on any other death `crash`, and starts a new worker. Without jaxlib it exits
with status 3 before the handshake.
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))

from supervisor import Worker, crash_reply, require_xlaref, serve  # noqa: E402

CASE_TIMEOUT = float(os.environ.get("XLA_ADAPTER_CASE_TIMEOUT", "50"))


def version():
    """`jaxlib 0.10.2, StableHLO x.y.z`, or exits with status 3 when jaxlib's
    StableHLO bindings are missing (the failure must be visible, not a
    crash per case)."""
    try:
        import jaxlib
        from jaxlib.mlir.dialects import stablehlo
    except Exception as e:  # noqa: BLE001 - any import failure means "not installed"
        sys.stderr.write(f"stablehlo backend: cannot import jaxlib's StableHLO bindings ({e}); pip install jax\n")
        sys.exit(3)
    try:
        shlo = stablehlo.get_current_version()
    except Exception:  # noqa: BLE001 - older bindings
        shlo = "?"
    return f"jaxlib {jaxlib.__version__}, StableHLO {shlo}, reference interpreter"


# How the interpreter says it has no implementation for an op or a type,
# just before aborting: `LLVM ERROR: Unsupported op: %0 = chlo.erf ...`,
# `LLVM ERROR: Operation stablehlo.rng is unsupported at the moment. ...`,
# `LLVM ERROR: dynamic result types are not supported at the moment`,
# `LLVM ERROR: all_reduce is only supported when run via interpreter.run_parallel`.
UNSUPPORTED = re.compile(r"LLVM ERROR: .*(Unsupported op|is unsupported|are not supported|is only supported when run via)")


def on_death(req, died):
    """An abort that names an unimplemented op is `unsupported`, not a crash."""
    for line in died.stderr.splitlines():
        if UNSUPPORTED.search(line):
            return {"unsupported": f"the StableHLO interpreter aborts: {line.strip()}"}
    return crash_reply(req, died)


def main():
    hello = {"name": "stablehlo-interpreter", "version": version()}
    require_xlaref("stablehlo backend")
    worker = Worker([sys.executable, os.path.join(HERE, "interpreter_worker.py")], label="StableHLO interpreter worker")
    serve(hello, worker, on_death=on_death, default_timeout=CASE_TIMEOUT)


if __name__ == "__main__":
    main()
