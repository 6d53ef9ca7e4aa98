#!/usr/bin/env python3
"""Writes the libFuzzer dictionaries of fuzz/dicts/ from the readers' own
source: every op, opcode, attribute, keyword and element type the readers
know, so mutations reach deep into the grammar instead of guessing words.
Rerun after adding an op:  python3 fuzz/dicts/make.py"""
import glob, os, re

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
REF = os.path.join(ROOT, "reference", "src")


def quoted(paths, pattern):
    words = set()
    for path in paths:
        for p in glob.glob(os.path.join(REF, path), recursive=True):
            words.update(re.findall(pattern, open(p).read()))
    return words


TYPES = ["pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64",
         "f8e4m3fn", "f8e5m2", "c64", "c128", "token"]
MLIR_TYPES = ["i1", "i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64", "f16", "bf16", "f32", "f64",
              "f8E4M3FN", "f8E5M2", "complex<f32>", "complex<f64>", "tensor<", "tuple<", "!stablehlo.token"]
SPECIALS = ["nan", "-nan", "inf", "-inf", "-0", "0x7fc00001", "1e-45", "3.4028235e38", "-2147483648",
            "18446744073709551615", "4294967296"]


def write(name, words):
    words = sorted(w for w in words if w and len(w) < 64)
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), name), "w") as f:
        f.write(f"# libFuzzer dictionary, written by fuzz/dicts/make.py from reference/src; {len(words)} words\n")
        for w in words:
            f.write('"' + w.replace("\\", "\\\\").replace('"', '\\"') + '"\n')


json_words = quoted(["json/*.rs"], r'"([A-Za-z][A-Za-z0-9_]*)"')
json = {f'"{w}"' for w in json_words} | {f'"{t}[' for t in TYPES} | {f'"{s}"' for s in SPECIALS}
json |= {'"xla-json/1"', '{"tuple": [', '{"token": null}', '{"bytes": "', '"shape": "', '"value": ', "[[", "]]", "<="}
write("json.dict", json)

hlo_words = quoted(["hlo/*.rs"], r'"([a-z][a-z0-9_-]*)"')
hlo = hlo_words | {f"{t}[" for t in TYPES} | set(SPECIALS)
hlo |= {"HloModule", "ENTRY", "ROOT", "{1,0}", "dimensions={", "to_apply=", "calls=", "custom_call_target=",
        "replica_groups=", "window={size=", "dim_labels=", "backend_config=", "FileNames", "StackFrames"}
write("hlo.dict", hlo)

mlir_words = quoted(["mlir/*.rs"], r'"([a-z][a-z0-9_.]*)"')
mlir = mlir_words | set(MLIR_TYPES) | set(SPECIALS)
mlir |= {"module", "func.func", "@main", "%arg0", "dense<", "dense_resource<", "#stablehlo.", "->", "^bb0", "({",
         "}) :", "array<i64:", "attributes {"}
write("mlir.dict", mlir)
