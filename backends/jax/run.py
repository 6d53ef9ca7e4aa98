#!/usr/bin/env python3
"""xlaref conformance backend for XLA CPU through jaxlib (docs/backends.md).

    xlaref conform --backend 'python3 backends/jax/run.py' oracle-cases

Prints the handshake, then relays each request line to a worker process
(worker.py) that translates the xla-json module to HLO text, compiles it
with XLA and runs it. XLA aborts the process on some inputs; when the worker
dies or hangs, this supervisor answers `{"crash": ...}` for that case and
starts a new worker for the next one. Needs `pip install jax`.
"""
import json
import os
import select
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# A case may take this long (seconds) before the worker is restarted;
# below xlaref's default of 60 so the supervisor answers first.
CASE_TIMEOUT = float(os.environ.get("XLA_ADAPTER_CASE_TIMEOUT", "50"))
# XLA CPU waits for replicas that never reach a collective (a mismatch the
# document forbids) instead of failing, so multi-replica cases get less time.
REPLICA_TIMEOUT = float(os.environ.get("XLA_ADAPTER_REPLICA_TIMEOUT", "20"))


def versions():
    try:
        import jax
        import jaxlib
        return f"jax {jax.__version__}, jaxlib {jaxlib.__version__}, XLA CPU"
    except Exception as e:  # reported in the handshake; every case will then crash
        return f"jax not importable: {e}"


class Worker:
    def __init__(self):
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "worker.py")], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=sys.stderr, bufsize=0)
        self.buf = b""

    def stop(self):
        if self.proc is not None:
            try:
                self.proc.kill()
                self.proc.wait(timeout=5)
            except Exception:
                pass
            self.proc = None

    def ask(self, line, timeout=CASE_TIMEOUT):
        """Sends a request; returns the reply line, or raises RuntimeError on crash/timeout."""
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        try:
            self.proc.stdin.write(line.encode() + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise RuntimeError(self.death())
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            ready, _, _ = select.select([fd], [], [], timeout)
            if not ready:
                self.stop()
                raise RuntimeError(f"timeout: no result within {timeout:g} s")
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise RuntimeError(self.death())
            self.buf += chunk
        reply, self.buf = self.buf.split(b"\n", 1)
        return reply.decode()

    def death(self):
        code = None
        try:
            code = self.proc.wait(timeout=5)
        except Exception:
            pass
        self.proc = None
        if code is not None and code < 0:
            import signal
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = str(-code)
            return f"XLA worker died with signal {name}"
        return f"XLA worker exited with status {code}"


def main():
    hello = {"protocol": "xla-json-backend/1", "name": "xla-cpu-via-jax", "version": versions()}
    sys.stdout.write(json.dumps(hello) + "\n")
    sys.stdout.flush()
    worker = Worker()
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        timeout = CASE_TIMEOUT
        try:
            req = json.loads(line)
            req_id = req.get("id")
            if req.get("replicas", 1) != 1:
                timeout = REPLICA_TIMEOUT
        except Exception:
            req_id = None
        try:
            reply = worker.ask(line, timeout)
        except RuntimeError as e:
            r = {"crash": str(e)}
            if req_id is not None:
                r["id"] = req_id
            reply = json.dumps(r)
        sys.stdout.write(reply + "\n")
        sys.stdout.flush()
    worker.stop()


if __name__ == "__main__":
    main()
