#!/usr/bin/env python3
"""Parses StableHLO MLIR files with StableHLO's own parser (jaxlib.mlir, all
dialects JAX registers: func, stablehlo, chlo) and verifies them, in one
process; with --iree, also compiles each file with IREE for llvm-cpu.

    python3 tools/stablehlo_parse.py [--iree] FILE_OR_DIR...

Prints `FAIL path: first line of the error` per failure and ends with
`N passed, M failed`. Exit status: 0 all passed, 1 some failed, 3 the
needed Python packages are missing (the message says which).
"""

import os
import sys


def files(args):
    for a in args:
        if os.path.isdir(a):
            for root, _, names in os.walk(a):
                for n in sorted(names):
                    if n.endswith(".mlir"):
                        yield os.path.join(root, n)
        else:
            yield a


def first_lines(e, n=3):
    lines = [l.strip() for l in str(e).splitlines() if l.strip()]
    return " | ".join(lines[:n])


def main(argv):
    iree = "--iree" in argv
    paths = list(files([a for a in argv if a != "--iree"]))
    try:
        from jax._src.interpreters import mlir as jax_mlir
        from jaxlib.mlir import ir
    except Exception as e:  # noqa: BLE001 - any import failure means "not available"
        print(f"jaxlib.mlir is not available ({e}); install jax to parse StableHLO")
        return 3
    compile_str = None
    if iree:
        try:
            from iree.compiler import compile_str
        except Exception as e:  # noqa: BLE001
            print(f"iree.compiler is not available ({e}); install iree-base-compiler to compile")
            return 3
    passed = failed = 0
    for path in paths:
        with open(path) as f:
            text = f.read()
        try:
            if compile_str is not None:
                compile_str(text, target_backends=["llvm-cpu"], input_type="stablehlo")
            else:
                # A fresh context per file: one bad file cannot poison the rest.
                ctx = jax_mlir.make_ir_context()
                ir.Module.parse(text, ctx)
            passed += 1
        except Exception as e:  # noqa: BLE001 - every failure is reported
            failed += 1
            print(f"FAIL {path}: {first_lines(e)}")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
