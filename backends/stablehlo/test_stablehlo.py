"""Unit tests of the StableHLO-interpreter adapter, end to end through
run.py (skipped without jaxlib or an xlaref executable):
python3 -m unittest discover -s backends/stablehlo -p 'test_*.py'"""
import importlib.util
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
sys.path.insert(0, HERE)

from testing import add_case, converse, unary_case, xlaref_or_none  # noqa: E402
from xlajson import read_typed  # noqa: E402

RUN = os.path.join(HERE, "run.py")
HAVE_JAXLIB = importlib.util.find_spec("jaxlib") is not None


@unittest.skipUnless(HAVE_JAXLIB, "jaxlib not installed")
@unittest.skipUnless(xlaref_or_none(), "no xlaref executable (set XLAREF)")
class InterpreterAdapter(unittest.TestCase):
    def test_add_end_to_end(self):
        hello, (reply,), status = converse(RUN, [add_case()])
        self.assertEqual(hello["name"], "stablehlo-interpreter")
        self.assertEqual(status, 0)
        shape, value = read_typed(reply)
        self.assertEqual(shape, ("array", "f32", (3,)))
        self.assertEqual(value.tolist(), [11, 22, 33])

    def test_complex_results_come_back_whole(self):
        req = add_case(etype="c64")
        for a in req["args"]:
            a["value"] = [[v, -v] for v in a["value"]]
        _, (reply,), _ = converse(RUN, [req])
        self.assertEqual(read_typed(reply)[1].tolist(), [11 - 11j, 22 - 22j, 33 - 33j])

    def test_interpreter_abort_on_unsupported_op_is_unsupported_and_restarts(self):
        # The interpreter has no chlo.erf: it aborts with `LLVM ERROR: Unsupported op`.
        _, (erf, after), status = converse(RUN, [unary_case("Erf", case_id=1), add_case(case_id=2)])
        self.assertIn("Unsupported op", erf["unsupported"])
        self.assertEqual(erf["id"], 1)
        self.assertEqual(read_typed(after)[1].tolist(), [11, 22, 33])
        self.assertEqual(status, 0)

    def test_other_deaths_are_crashes(self):
        dying = unary_case("Neg", case_id=1)
        dying["name"] = "test/dies"
        _, (dead, after), _ = converse(RUN, [dying, add_case(case_id=2)], {"XLAREF_ADAPTER_TEST_ABORT": "test/dies"})
        self.assertIn("SIGABRT", dead["crash"])
        self.assertIn("value", after)

    def test_multi_replica_is_unsupported(self):
        req = add_case()
        req["replicas"] = 2
        _, (reply,), _ = converse(RUN, [req])
        self.assertIn("replicas", reply["unsupported"])


class ResultReading(unittest.TestCase):
    """The printed-attribute reader, on texts as MLIR prints them."""

    @unittest.skipUnless(HAVE_JAXLIB, "jaxlib not installed")
    def test_forms(self):
        import interpreter_worker as worker
        cases = [
            ("array", "f32", (3,)), "dense<[1.401300e-45, 0x7FC00000, -0.000000e+00]> : tensor<3xf32>",
            ("array", "bf16", (2,)), "dense<0x7FC0> : tensor<2xbf16>",
            ("array", "u32", (1,)), "dense<4000000000> : tensor<1xui32>",
            ("array", "pred", (2,)), "dense<[true, false]> : tensor<2xi1>",
            ("array", "f32", (2,)), 'dense<"0x0000803F00000040"> : tensor<2xf32>',
        ]
        got = [worker.from_attr(cases[i], cases[i + 1]) for i in range(0, len(cases), 2)]
        self.assertEqual(got[0][0], __import__("numpy").float32(1e-45))
        self.assertTrue(str(got[0][2]).startswith("-0"))
        self.assertEqual(got[1].view("uint16").tolist(), [0x7FC0, 0x7FC0])
        self.assertEqual(got[2].tolist(), [4000000000])
        self.assertEqual(got[3].tolist(), [True, False])
        self.assertEqual(got[4].tolist(), [1.0, 2.0])


if __name__ == "__main__":
    unittest.main()
