#!/usr/bin/env python3
"""Parses StableHLO MLIR files with StableHLO's own parser (jaxlib.mlir, all
dialects JAX registers: func, stablehlo, chlo) and verifies them, in one
process; with --iree, also compiles each file with IREE for llvm-cpu.

    python3 tools/stablehlo_parse.py [--iree] FILE_OR_DIR...

Prints `FAIL path: first lines of the error` per failure and ends with
`N passed, M failed`. Exit status: 0 all passed, 1 some failed, 3 the
needed Python packages are missing (the message says which).
"""

import os
import subprocess
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
    # IREE's message starts with boilerplate; its errors say `error:`.
    errors = [l for l in lines if "error:" in l and "Error invoking" not in l]
    return " | ".join((errors or lines)[:n])


def worker(iree):
    """Reads paths from stdin, answers `OK` or `FAIL: message` per path."""
    from jax._src.interpreters import mlir as jax_mlir
    from jaxlib.mlir import ir

    compile_str = None
    if iree:
        from iree.compiler import compile_str
    for line in sys.stdin:
        path = line.rstrip("\n")
        with open(path) as f:
            text = f.read()
        try:
            if compile_str is not None:
                compile_str(
                    text,
                    target_backends=["llvm-cpu"],
                    input_type="stablehlo",
                    extra_args=["--iree-llvmcpu-target-cpu=generic"],
                )
            else:
                # A fresh context per file: one bad file cannot poison the rest.
                ir.Module.parse(text, jax_mlir.make_ir_context())
            print("OK", flush=True)
        except Exception as e:  # noqa: BLE001 - every failure is reported
            print(f"FAIL: {first_lines(e)}", flush=True)
    return 0


def main(argv):
    iree = "--iree" in argv
    if "--worker" in argv:
        return worker(iree)
    paths = list(files([a for a in argv if a != "--iree"]))
    probe = "import iree.compiler" if iree else "import jaxlib.mlir, jax"
    try:
        exec(probe)  # noqa: S102 - a fixed import statement
    except Exception as e:  # noqa: BLE001 - any import failure means "not available"
        print(f"`{probe}` fails ({e}); install jax (and iree-base-compiler) to check StableHLO")
        return 3
    # One worker process parses file after file; MLIR's verifier can crash
    # the process on a bad input (SIGFPE), so a crash fails that file and a
    # new worker goes on with the rest.
    passed = failed = 0
    i = 0
    while i < len(paths):
        args = [sys.executable, os.path.abspath(__file__), "--worker"] + (["--iree"] if iree else [])
        proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        while i < len(paths):
            path = paths[i]
            try:
                proc.stdin.write(path + "\n")
                proc.stdin.flush()
                answer = proc.stdout.readline()
            except BrokenPipeError:
                answer = ""
            i += 1
            if answer.startswith("OK"):
                passed += 1
                continue
            failed += 1
            if answer:
                print(f"FAIL {path}: {answer[len('FAIL: '):].strip()}")
            else:
                code = proc.wait()
                print(f"FAIL {path}: the parser crashed (exit status {code})")
                break
        else:
            proc.stdin.close()
            proc.wait()
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
