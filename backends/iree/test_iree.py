"""Unit tests of the IREE adapter, end to end through run.py (skipped
without IREE or an xlaref executable):
python3 -m unittest discover -s backends/iree -p 'test_*.py'"""
import importlib.util
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))

from testing import add_case, converse, unary_case, xlaref_or_none  # noqa: E402
from xlajson import read_typed  # noqa: E402

RUN = os.path.join(HERE, "run.py")
HAVE_IREE = importlib.util.find_spec("iree") is not None and importlib.util.find_spec("iree.runtime") is not None


@unittest.skipUnless(HAVE_IREE, "iree-base-compiler / iree-base-runtime not installed")
@unittest.skipUnless(xlaref_or_none(), "no xlaref executable (set XLAREF)")
class IreeAdapter(unittest.TestCase):
    def test_add_end_to_end(self):
        hello, (reply,), status = converse(RUN, [add_case()])
        self.assertEqual(hello["name"], "iree-llvm-cpu")
        self.assertEqual(status, 0)
        shape, value = read_typed(reply)
        self.assertEqual(shape, ("array", "f32", (3,)))
        self.assertEqual(value.tolist(), [11, 22, 33])

    def test_multi_replica_is_unsupported(self):
        req = add_case()
        req["replicas"] = 2
        req["replica_args"] = [req.pop("args")] * 2
        _, (reply,), _ = converse(RUN, [req])
        self.assertIn("replicas", reply["unsupported"])

    def test_op_iree_cannot_compile_is_unsupported(self):
        # IREE's llvm-cpu backend has no f64 atan2 (an undefined libm symbol).
        req = add_case(etype="f64")
        req["module"]["computations"]["main"]["instructions"][0]["op"] = "Atan2"
        _, (reply,), _ = converse(RUN, [req])
        self.assertIn("IREE cannot compile it", reply["unsupported"])

    def test_aborting_worker_is_restarted(self):
        dying = unary_case("Neg", case_id=1)
        dying["name"] = "test/dies"
        _, (dead, after), status = converse(RUN, [dying, add_case(case_id=2)],
                                            {"XLAREF_ADAPTER_TEST_ABORT": "test/dies"})
        self.assertIn("SIGABRT", dead["crash"])
        self.assertEqual(dead["id"], 1)
        self.assertEqual(read_typed(after)[1].tolist(), [11, 22, 33])
        self.assertEqual(status, 0)

    def test_missing_xlaref_stops_before_the_handshake(self):
        env = {"XLAREF": "", "PATH": "/nonexistent"}
        hello, replies, status = converse(RUN, [], env)
        if hello is None:  # no build in this checkout either
            self.assertEqual(status, 3)


if __name__ == "__main__":
    unittest.main()
