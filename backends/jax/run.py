#!/usr/bin/env python3
"""xlaref conformance backend for XLA CPU through jaxlib (docs/backends.md).

    xlaref conform --backend 'python3 backends/jax/run.py' oracle-cases

Prints the handshake, then relays each request line to a worker process
(worker.py) that translates the xla-json module to HLO text, compiles it
with XLA and runs it. XLA aborts the process on some inputs; when the worker
dies or hangs, this supervisor answers `{"crash": ...}` for that case and
starts a new worker for the next one. Needs `pip install jax`.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))

from supervisor import Worker, serve  # noqa: E402

# A case may take this long (seconds) before the worker is restarted;
# below xlaref's default of 60 so the supervisor answers first.
CASE_TIMEOUT = float(os.environ.get("XLA_ADAPTER_CASE_TIMEOUT", "50"))
# XLA CPU waits for replicas that never reach a collective (a mismatch the
# document forbids) instead of failing, so multi-replica cases get less time.
REPLICA_TIMEOUT = float(os.environ.get("XLA_ADAPTER_REPLICA_TIMEOUT", "20"))


def versions():
    """`jax X, jaxlib Y, XLA CPU`, or exits with status 3 before the
    handshake when jax is missing: xlaref then stops with this message
    instead of reporting every case crashed."""
    try:
        import jax
        import jaxlib
    except Exception as e:  # noqa: BLE001 - any import failure means "not installed"
        sys.stderr.write(f"jax backend: jax not importable ({e}); pip install jax\n")
        sys.exit(3)
    return f"jax {jax.__version__}, jaxlib {jaxlib.__version__}, XLA CPU"


def timeout_for(req):
    """Multi-replica cases that hang are replica mismatches: give up sooner."""
    return REPLICA_TIMEOUT if req.get("replicas", 1) != 1 else CASE_TIMEOUT


def main():
    hello = {"name": "xla-cpu-via-jax", "version": versions()}
    worker = Worker([sys.executable, os.path.join(HERE, "worker.py")], label="XLA worker")
    serve(hello, worker, timeout_for, default_timeout=CASE_TIMEOUT)


if __name__ == "__main__":
    main()
