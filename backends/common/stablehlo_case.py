"""A request (docs/backends.md) as StableHLO text plus typed numpy
arguments, for the adapters that run StableHLO (backends/iree,
backends/stablehlo), and the worker loop they share.

The module is translated by `xlaref export --to stablehlo` (docs/stablehlo.md)
so that both adapters see exactly the StableHLO xlaref means the module to
be; the adapters then only compile/interpret it. The entry function's
signature in that text gives the parameter and result shapes.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import traceback
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "backends", "jax"))

from xlajson import Reject, Unsupported, read_typed, shape_text, write_typed  # noqa: E402,F401
from supervisor import RESTART_KEY  # noqa: E402

# Ops whose meaning depends on a world outside the module (queues, peers):
# neither IREE's entry points nor the interpreter's eval_module can feed them.
WORLD_OPS = {
    "stablehlo.infeed": "infeed: no way to fill an infeed queue",
    "stablehlo.outfeed": "outfeed: no way to read an outfeed queue",
    "stablehlo.send": "send: no peer to send to",
    "stablehlo.recv": "recv: no peer to receive from",
}


def find_xlaref():
    """$XLAREF (set by `xlaref conform` for the backends it starts), else a
    build of this checkout (repo root = two levels above the adapters),
    else `xlaref` on PATH."""
    env = os.environ.get("XLAREF")
    if env:
        return env
    for kind in ("release", "debug"):
        path = os.path.join(REPO, "target", kind, "xlaref")
        if os.access(path, os.X_OK):
            return path
    found = shutil.which("xlaref")
    if found:
        return found
    raise Unsupported("no xlaref executable to export the module with: set XLAREF, or build target/release/xlaref")


def module_text(module):
    """The request's module as text for xlaref. The request was read with
    Decimal floats; they are written back as the same decimal text, so
    float literals keep their exact spelling."""
    if isinstance(module, str):
        return module
    text = json.dumps(module, default=lambda d: f"__decimal:{d}__")
    return re.sub(r'"__decimal:([^"_]*)__"', r"\1", text)


def export_stablehlo(module, timeout=60):
    """The module as `xlaref export --to stablehlo` writes it. A module xlaref
    cannot write is `unsupported`; one it rejects (exit 2) is an `error`,
    as the reference rejects it too."""
    with tempfile.NamedTemporaryFile("w", suffix=".json" if isinstance(module, dict) else ".txt",
                                     delete=False) as f:
        f.write(module_text(module))
        path = f.name
    try:
        out = subprocess.run([find_xlaref(), "export", "--to", "stablehlo", path], capture_output=True, text=True,
                             timeout=timeout)
    finally:
        os.unlink(path)
    if out.returncode != 0:
        msg = out.stderr.strip()
        if "cannot write StableHLO" in msg:
            raise Unsupported(f"xlaref export: {msg}")
        raise Reject(f"xlaref export: {msg}")
    return out.stdout


# ---------------------------------------------------------------- signature

MLIR_ETYPES = {
    "i1": "pred", "i8": "s8", "i16": "s16", "i32": "s32", "i64": "s64",
    "ui8": "u8", "ui16": "u16", "ui32": "u32", "ui64": "u64",
    "f16": "f16", "bf16": "bf16", "f32": "f32", "f64": "f64",
    "f8E4M3FN": "f8e4m3fn", "f8E5M2": "f8e5m2", "complex<f32>": "c64", "complex<f64>": "c128",
}


def split_top(text):
    """Splits at commas outside <>, () and []."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def parse_type(t):
    """An MLIR type of the exported signature -> an xlajson shape."""
    t = t.strip()
    if t == "!stablehlo.token":
        return ("token",)
    if t.startswith("tuple<") and t.endswith(">"):
        return ("tuple", [parse_type(p) for p in split_top(t[6:-1])])
    m = re.fullmatch(r"tensor<(.*)>", t)
    if not m:
        raise Unsupported(f"type {t} in the entry signature")
    body = split_top(m.group(1))[0]  # drops an encoding such as #stablehlo.bounds<...>
    if len(split_top(m.group(1))) > 1:
        raise Unsupported(f"bounded dynamic type {t}")
    # `2x3xf32`, `f32`, `2xcomplex<f32>`: dimensions are the leading `Nx`.
    dims = []
    while True:
        d = re.match(r"(\d+|\?)x", body)
        if not d:
            break
        if d.group(1) == "?":
            raise Unsupported(f"dynamic type {t}")
        dims.append(int(d.group(1)))
        body = body[d.end():]
    if body not in MLIR_ETYPES:
        raise Unsupported(f"element type {body}")
    return ("array", MLIR_ETYPES[body], tuple(dims))


def closing(text, start):
    """Index just past the bracket group opening at text[start]."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] in "(<[{":
            depth += 1
        elif text[i] in ")>]}":
            depth -= 1
            if depth == 0:
                return i + 1
    raise Reject("unbalanced brackets in the exported signature")


def signature(text):
    """(parameter shapes, result shapes) of `func.func public @main`."""
    at = text.find("@main(")
    if at < 0:
        raise Reject("the exported StableHLO has no @main")
    open_ = at + len("@main")
    end = closing(text, open_)
    params = []
    for p in split_top(text[open_ + 1:end - 1]):
        typ = p.split(":", 1)[1].strip()
        typ = re.sub(r"\s*\{.*\}\s*$", "", typ)  # argument attributes
        params.append(parse_type(typ))
    rest = text[end:].lstrip()
    results = []
    if rest.startswith("->"):
        rest = rest[2:].lstrip()
        if rest.startswith("("):
            inner = rest[1:closing(rest, 0) - 1]
        else:
            inner = re.match(r"[^{\n]*", rest).group(0)
        results = [parse_type(re.sub(r"\s*\{.*\}\s*$", "", r)) for r in split_top(inner)]
    return params, results


def result_shape(results):
    """The module's result shape: one result is itself; several (or none)
    are the components of a tuple (docs/stablehlo.md, Functions)."""
    if len(results) == 1:
        return results[0]
    return ("tuple", list(results))


def has_token(shape):
    if shape[0] == "token":
        return True
    return shape[0] == "tuple" and any(has_token(s) for s in shape[1])


# ---------------------------------------------------------------- cases

class Case:
    """A request made ready to run: `text` (StableHLO), `params` and
    `results` (shapes of @main), `args` (numpy values or lists for tuples)."""

    def __init__(self, text, params, results, args):
        self.text, self.params, self.results, self.args = text, params, results, args

    def reply(self, values):
        """The reply for @main's result values, in order."""
        shape = result_shape(self.results)
        value = values[0] if len(self.results) == 1 else list(values)
        return write_typed(shape, value)


def prepare(req, backend):
    """Request -> Case, or raises Unsupported / Reject (see module doc)."""
    replicas = req.get("replicas", 1)
    if replicas != 1:
        raise Unsupported(f"{replicas} replicas: {backend} runs one replica")
    if req.get("infeed"):
        raise Unsupported(f"infeed: {backend} has no infeed queue")
    text = export_stablehlo(req.get("module"))
    for op, why in WORLD_OPS.items():
        if f'"{op}"' in text:
            raise Unsupported(f"{why} in {backend}")
    params, results = signature(text)
    if any(has_token(s) for s in params + results):
        raise Unsupported(f"tokens in the entry signature: {backend} takes and returns tensors only")
    arg_list = req.get("replica_args", [None])[0] if "replica_args" in req else req.get("args", [])
    if not isinstance(arg_list, list):
        raise Reject("`args` must be a list")
    if len(arg_list) != len(params):
        raise Reject(f"the entry computation takes {len(params)} arguments, got {len(arg_list)}")
    args = []
    for i, (a, p) in enumerate(zip(arg_list, params)):
        shape, value = read_typed(a)
        if shape != p:
            raise Reject(f"argument {i} has shape {shape_text(shape)}, the parameter {shape_text(p)}")
        args.append(value)
    return Case(text, params, results, args)


class WorkerState:
    """Set by an adapter's `run` when this worker process should not serve
    another case after the current reply (its heap may be corrupt)."""
    exit_after_reply = False


def worker_loop(run):
    """Answers each request line of stdin with `run(req)`'s reply.
    Unsupported -> `unsupported`, Reject -> `error`; any other exception is
    an `error` too (XLA_ADAPTER_DEBUG=1 prints its traceback)."""
    debug = os.environ.get("XLA_ADAPTER_DEBUG")
    # The unit tests' way to make a worker die on one case (its name).
    abort_on = os.environ.get("XLAREF_ADAPTER_TEST_ABORT")
    for line in sys.stdin:
        if not line.strip():
            continue
        reply = {}
        try:
            req = json.loads(line, parse_float=Decimal)
            if abort_on and req.get("name") == abort_on:
                os.abort()
            if "id" in req:
                reply["id"] = req["id"]
            reply.update(run(req))
        except Unsupported as e:
            reply["unsupported"] = str(e)
        except Reject as e:
            reply["error"] = str(e)
        except Exception as e:  # noqa: BLE001 - an adapter failure is this case's error
            reply["error"] = f"adapter: {type(e).__name__}: {e}"
            if debug:
                traceback.print_exc(file=sys.stderr)
        if WorkerState.exit_after_reply:
            reply[RESTART_KEY] = True  # the supervisor strips it and waits for our exit
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
        if WorkerState.exit_after_reply:
            os._exit(0)
