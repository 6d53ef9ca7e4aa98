#!/usr/bin/env python3
"""xlaref conformance backend for IREE's llvm-cpu target (docs/backends.md).

    xlaref conform --backend 'python3 backends/iree/run.py' oracle-cases

Prints the handshake, then relays each request line to a worker process
(iree_worker.py) that exports the module to StableHLO with `xlaref export`,
compiles it with IREE for the host CPU and runs it with IREE's runtime.
IREE's compiler aborts the process on some inputs; when the worker dies or
hangs, the supervisor (backends/common/supervisor.py) answers `crash` for
that case and starts a new worker. Needs `pip install iree-base-compiler
iree-base-runtime`; without them it exits with status 3 before the
handshake, so the run stops instead of crashing on every case.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))

from supervisor import Worker, require_xlaref, serve  # noqa: E402

CASE_TIMEOUT = float(os.environ.get("XLA_ADAPTER_CASE_TIMEOUT", "50"))


def version():
    """`iree 3.13.0rc... (compiler rev ...)`, or exits with status 3 when
    IREE's Python packages are missing (the failure must be visible, not
    a crash per case)."""
    try:
        import iree.compiler.version as cv
        import iree.runtime.version as rv
    except Exception as e:  # noqa: BLE001 - any import failure means "not installed"
        sys.stderr.write(f"iree backend: cannot import IREE ({e}); "
                         "pip install iree-base-compiler iree-base-runtime\n")
        sys.exit(3)
    rev = cv.REVISIONS.get("IREE", "")[:12]
    return f"iree {cv.VERSION} (compiler rev {rev}; runtime {rv.VERSION}), llvm-cpu, local-sync"


def main():
    hello = {"name": "iree-llvm-cpu", "version": version()}
    require_xlaref("iree backend")
    worker = Worker([sys.executable, os.path.join(HERE, "iree_worker.py")], label="IREE worker")
    serve(hello, worker, default_timeout=CASE_TIMEOUT)


if __name__ == "__main__":
    main()
