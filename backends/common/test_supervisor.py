"""Unit tests of the shared supervisor (no compiler needed):
python3 -m unittest discover -s backends/common -p 'test_*.py'"""
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# A fake adapter: its worker echoes `{"value": n}`, aborts on "abort",
# hangs on "hang"; the supervisor turns `Unsupported op` deaths into
# `unsupported`, as backends/stablehlo/run.py does.
FAKE_WORKER = textwrap.dedent('''
    import json, os, sys, time
    for line in sys.stdin:
        req = json.loads(line)
        if req["name"] == "abort":
            sys.stderr.write("LLVM ERROR: Unsupported op: frob\\n"); sys.stderr.flush(); os.abort()
        if req["name"] == "segv":
            os.kill(os.getpid(), 11)
        if req["name"] == "hang":
            time.sleep(60)
        if req["name"] == "restart":
            print(json.dumps({"id": req["id"], "value": os.getpid(), "__restart_worker__": True}), flush=True)
            os._exit(0)
        print(json.dumps({"id": req["id"], "shape": "s32[]", "value": os.getpid()}), flush=True)
''')
FAKE_RUN = textwrap.dedent('''
    import sys
    sys.path.insert(0, {common!r})
    from supervisor import Worker, crash_reply, serve
    def on_death(req, died):
        if "Unsupported op" in died.stderr:
            return {{"unsupported": "aborts"}}
        return crash_reply(req, died)
    serve({{"name": "fake"}}, Worker([sys.executable, {worker!r}]), on_death=on_death, default_timeout=2)
''')


class Supervisor(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        worker = os.path.join(self.dir.name, "worker.py")
        run = os.path.join(self.dir.name, "run.py")
        with open(worker, "w") as f:
            f.write(FAKE_WORKER)
        with open(run, "w") as f:
            f.write(FAKE_RUN.format(common=HERE, worker=worker))
        self.run_py = run

    def tearDown(self):
        self.dir.cleanup()

    def converse(self, names):
        reqs = "".join(json.dumps({"id": i, "name": n}) + "\n" for i, n in enumerate(names))
        out = subprocess.run([sys.executable, self.run_py], input=reqs, capture_output=True, text=True, timeout=60)
        return [json.loads(l) for l in out.stdout.splitlines()]

    def test_dead_worker_is_answered_and_replaced(self):
        hello, a, dead, b, segv, c = self.converse(["ok", "abort", "ok", "segv", "ok"])
        self.assertEqual(hello["protocol"], "xla-json-backend/1")
        dead_pid = a["value"]
        self.assertEqual(dead, {"unsupported": "aborts", "id": 1})
        self.assertNotEqual(b["value"], dead_pid)  # a new worker
        self.assertIn("SIGSEGV", segv["crash"])
        self.assertEqual(segv["id"], 3)
        self.assertIn("value", c)

    def test_worker_asking_for_restart_is_replaced(self):
        _, a, b, c = self.converse(["ok", "restart", "ok"])
        self.assertEqual(a["value"], b["value"])  # the same worker answered
        self.assertNotIn("__restart_worker__", b)
        self.assertNotEqual(b["value"], c["value"])  # then a new one
        self.assertEqual(c["id"], 2)

    def test_hung_worker_times_out(self):
        _, hang, after = self.converse(["hang", "ok"])
        self.assertIn("timeout", hang["crash"])
        self.assertIn("value", after)


if __name__ == "__main__":
    unittest.main()
