"""The supervising half of a conformance backend (docs/backends.md), shared
by backends/jax, backends/iree and backends/stablehlo.

The compilers and interpreters behind these adapters abort the process on
some inputs (LLVM ERROR, SIGSEGV, SIGFPE) or hang. So the real work happens
in a worker process that reads one request a line and answers one reply a
line; the supervisor prints the handshake, relays each request, and when
the worker dies or hangs it answers that case itself (`crash`, or what the
adapter's `on_death` hook makes of the worker's last words) and starts a
fresh worker for the next case.

The worker's standard error goes to a temporary file, not straight to ours:
the supervisor needs the text the worker printed while dying (it names the
reason, e.g. `LLVM ERROR: Unsupported op`). Whatever the worker writes there
is copied to our standard error after each case, so logs stay visible.
"""
import json
import os
import select
import signal
import subprocess
import sys
import tempfile

PROTOCOL = "xla-json-backend/1"
# A worker adds this key to a reply when it will exit after it (its process
# must not serve another case); the supervisor removes it and replaces the
# worker before the next case.
RESTART_KEY = "__restart_worker__"


def describe_exit(code):
    """`signal SIGABRT` / `status 3`: how a dead worker ended, for the reply."""
    if code is not None and code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"status {code}"


class WorkerDied(RuntimeError):
    """The worker died or hung on a request; `stderr` holds what it printed
    on its standard error while handling it."""

    def __init__(self, message, stderr=""):
        super().__init__(message)
        self.stderr = stderr


class Worker:
    """One worker process at a time, restarted on demand."""

    def __init__(self, argv, label="worker", env=None):
        self.argv = argv
        self.label = label
        self.env = env
        self.proc = None
        self.buf = b""
        self.err = None
        self.err_pos = 0

    def start(self):
        # A fresh file per worker: a dead worker's text never leaks into the
        # next one's cases.
        self.err = tempfile.TemporaryFile()
        self.err_pos = 0
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err,
                                     bufsize=0, env=self.env)
        self.buf = b""

    def stop(self):
        if self.proc is not None:
            try:
                self.proc.kill()
                self.proc.wait(timeout=5)
            except Exception:  # already gone
                pass
            self.proc = None

    def new_stderr(self):
        """What the worker wrote on its standard error since the last call."""
        if self.err is None:
            return ""
        self.err.seek(self.err_pos)
        data = self.err.read()
        self.err_pos += len(data)
        return data.decode(errors="replace")

    def ask(self, line, timeout):
        """Sends one request; returns the reply line. Raises WorkerDied when
        the worker dies, closes its output or takes longer than `timeout`."""
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        try:
            self.proc.stdin.write(line.encode() + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self.died()
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            ready, _, _ = select.select([fd], [], [], timeout)
            if not ready:
                self.stop()
                raise WorkerDied(f"timeout: no result within {timeout:g} s", self.new_stderr())
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise self.died()
            self.buf += chunk
        reply, self.buf = self.buf.split(b"\n", 1)
        return reply.decode()

    def died(self):
        code = None
        try:
            code = self.proc.wait(timeout=5)
        except Exception:  # still running after closing its output: kill it
            self.stop()
        self.proc = None
        return WorkerDied(f"{self.label} died with {describe_exit(code)}", self.new_stderr())


def last_lines(text, n=3):
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    return " | ".join(lines[-n:])


def crash_reply(req, died):
    """The default answer for a case that killed the worker."""
    tail = last_lines(died.stderr)
    return {"crash": f"{died}" + (f": {tail}" if tail else "")}


def print_line(obj):
    sys.stdout.write((obj if isinstance(obj, str) else json.dumps(obj)) + "\n")
    sys.stdout.flush()


def require_xlaref(who):
    """Exits with status 3 (before the handshake) when no xlaref executable
    can be found to export modules with: every case would fail otherwise."""
    from stablehlo_case import Unsupported, find_xlaref
    try:
        path = find_xlaref()
    except Unsupported as e:
        sys.stderr.write(f"{who}: {e}\n")
        sys.exit(3)
    return path


def serve(hello, worker, timeout_for=None, on_death=crash_reply, default_timeout=50.0):
    """Prints the handshake, then answers every request line of stdin
    through `worker`. `timeout_for(req)` gives a case's time limit (None:
    `default_timeout`); `on_death(req, WorkerDied)` turns a dead worker into
    the case's reply (a dict). `req` is the parsed request, or {} when the
    line is not JSON (the worker then answers it)."""
    print_line(dict({"protocol": PROTOCOL}, **hello))
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
            if not isinstance(req, dict):
                req = {}
        except ValueError:
            req = {}
        timeout = (timeout_for(req) if timeout_for else None) or default_timeout
        try:
            reply = worker.ask(line, timeout)
        except WorkerDied as died:
            reply = on_death(req, died)
            if "id" in req:
                reply["id"] = req["id"]
            sys.stderr.write(died.stderr)
        else:
            sys.stderr.write(worker.new_stderr())
            if RESTART_KEY in reply:
                reply = json.loads(reply)
                reply.pop(RESTART_KEY, None)
                worker.stop()
        sys.stderr.flush()
        print_line(reply)
    worker.stop()
