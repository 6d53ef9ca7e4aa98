"""Unit tests of the world-op translation (no XLA needed):
python3 -m unittest discover -s backends/jax -p 'test_*.py'"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import hlo  # noqa: E402
from xlajson import Bounded, Reject, Unsupported, parse_shape, shape_text  # noqa: E402


def module(params, instructions, extra=None):
    comps = {"main": {"params": [{"name": n, "shape": s} for n, s in params], "instructions": instructions}}
    comps.update(extra or {})
    return {"format": "xla-json/1", "entry": "main", "computations": comps}


ADD = {"add": {"params": [{"name": "a", "shape": "f32[]"}, {"name": "b", "shape": "f32[]"}],
               "instructions": [{"name": "s", "op": "Add", "operands": ["a", "b"]}]}}


def translate(mod, replicas=1):
    m = hlo.Module(mod, replicas)
    text, _, _, result = m.translate()
    return text, result, m


class WorldTranslation(unittest.TestCase):
    def test_bounded_dimension_round_trips(self):
        s = parse_shape("f32[2,<=10]")
        self.assertIsInstance(s[2][1], Bounded)
        self.assertEqual(s[2], (2, 10))
        self.assertEqual(shape_text(s), "f32[2,<=10]")

    def test_rng_bit_generator_algorithm_and_tuple_result(self):
        text, result, _ = translate(module([("s", "u64[2]")], [
            {"name": "r", "op": "RngBitGenerator", "operands": ["s"], "algorithm": "PHILOX", "shape": "f16[3]"}]))
        self.assertIn("(u64[2], f16[3]) rng-bit-generator(", text)
        self.assertIn("algorithm=rng_philox", text)
        self.assertEqual(shape_text(result), "(u64[2], f16[3])")

    def test_set_dimension_size_result_returns_its_size(self):
        text, result, m = translate(module([("v", "f32[10]")], [
            {"name": "n", "op": "Constant", "operands": [], "shape": "s32[]", "literal": 5},
            {"name": "d", "op": "SetDimensionSize", "operands": ["v", "n"], "dimension": 0}]))
        self.assertEqual(shape_text(result), "f32[<=10]")
        self.assertIn("get-dimension-size(", text)
        self.assertEqual(m.dynamic_sizes, [(0, 0)])

    def test_elementwise_with_a_dynamic_operand_is_dynamic(self):
        _, result, _ = translate(module([("v", "f32[10]")], [
            {"name": "n", "op": "Constant", "operands": [], "shape": "s32[]", "literal": 3},
            {"name": "d", "op": "SetDimensionSize", "operands": ["v", "n"], "dimension": 0},
            {"name": "s", "op": "Add", "operands": ["v", "d"]}]))
        self.assertEqual(shape_text(result), "f32[<=10]")

    def test_all_to_all_moves_blocks_to_the_concat_dimension(self):
        text, result, _ = translate(module([("x", "s32[4,2]")], [
            {"name": "a", "op": "AllToAll", "operands": ["x"], "split_dimension": 0, "concat_dimension": 1,
             "split_count": 2}]), replicas=2)
        self.assertEqual(shape_text(result), "s32[2,4]")
        self.assertIn("replica_groups={{0,1}}", text)
        self.assertIn("transpose(", text)

    def test_all_gather_shape_and_shard_count_rule(self):
        _, result, _ = translate(module([("x", "f32[2,3]")], [
            {"name": "g", "op": "AllGather", "operands": ["x"], "all_gather_dim": 1, "shard_count": 4}]), 4)
        self.assertEqual(shape_text(result), "f32[2,12]")
        with self.assertRaises(Reject):
            translate(module([("x", "f32[2]")], [
                {"name": "g", "op": "AllGather", "operands": ["x"], "all_gather_dim": 0}]), 2)

    def test_all_reduce_of_a_tuple_is_variadic(self):
        text, result, _ = translate(module([("x", "f32[2]"), ("y", "f32[]")], [
            {"name": "t", "op": "Tuple", "operands": ["x", "y"]},
            {"name": "r", "op": "AllReduce", "operands": ["t"], "computation": "add"}], ADD), 2)
        self.assertEqual(shape_text(result), "(f32[2], f32[])")
        self.assertRegex(text, r"all-reduce\(gte\.\d+, gte\.\d+\)")

    def test_send_and_custom_call_are_unsupported(self):
        with self.assertRaises(Unsupported):
            translate(module([("x", "f32[2]")], [{"name": "s", "op": "Send", "operands": ["x"], "channel_id": 1}]))
        with self.assertRaises(Unsupported):
            translate(module([("x", "f32[2]")], [
                {"name": "c", "op": "CustomCall", "operands": ["x"], "target_name": "xlaref.identity",
                 "shape": "f32[2]"}]))


class DynamicResultSizes(unittest.TestCase):
    def test_sizes_outside_the_bound_are_refused_before_the_transfer(self):
        try:
            import worker
        except ImportError:
            self.skipTest("needs jax")
        shape = parse_shape("(f32[2,<=3], f32[<=4])")
        worker.check_sizes(shape, [(0, 1), (1, 0)], [0, 4])
        worker.check_sizes(shape, [(0, 1), (1, 0)], [3, 0])
        for sizes in ([4, 0], [0, -1], [-2, 2]):
            with self.assertRaises(Reject):
                worker.check_sizes(shape, [(0, 1), (1, 0)], sizes)


if __name__ == "__main__":
    unittest.main()
