"""The executing half of the IREE backend: reads one request a line on stdin,
answers one reply a line on stdout (docs/backends.md). The module is
exported to StableHLO by xlaref, compiled in-process by IREE's compiler for
llvm-cpu (host CPU), and run with IREE's `local-sync` runtime. IREE may
abort the process on some inputs; run.py supervises it."""
import contextlib
import hashlib
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

from stablehlo_case import Reject, Unsupported, WorkerState, prepare, worker_loop  # noqa: E402

# The compiler's flags; part of the cache key, so a change recompiles.
FLAGS = (
    "--iree-hal-target-device=local",
    "--iree-hal-local-target-device-backends=llvm-cpu",
    "--iree-llvmcpu-target-cpu=" + os.environ.get("XLAREF_IREE_TARGET_CPU", "host"),
    "--iree-input-type=stablehlo",
    # IREE demotes f64 to f32 by default; the document's f64 is f64.
    "--iree-input-demote-f64-to-f32=false",
)
CACHE = os.path.expanduser(os.environ.get("XLAREF_IREE_CACHE", "~/.cache/xlaref-iree"))
BACKEND = "IREE llvm-cpu"

# xla-json element type -> (IREE's HAL element type name, numpy dtype of
# the buffer's bytes). IREE lowers StableHLO's signed and unsigned integers
# to signless ones, so the entry points assert the INT_N types.
HAL_TYPES = {
    "pred": ("BOOL_8", np.uint8), "s8": ("INT_8", np.int8), "s16": ("INT_16", np.int16),
    "s32": ("INT_32", np.int32), "s64": ("INT_64", np.int64), "u8": ("INT_8", np.uint8),
    "u16": ("INT_16", np.uint16), "u32": ("INT_32", np.uint32), "u64": ("INT_64", np.uint64),
    "f16": ("FLOAT_16", np.float16), "bf16": ("BFLOAT_16", ml_dtypes.bfloat16), "f32": ("FLOAT_32", np.float32),
    "f64": ("FLOAT_64", np.float64), "c64": ("COMPLEX_64", np.complex64), "c128": ("COMPLEX_128", np.complex128),
    "f8e4m3fn": ("FLOAT_8_E4M3_FN", ml_dtypes.float8_e4m3fn), "f8e5m2": ("FLOAT_8_E5M2", ml_dtypes.float8_e5m2),
}


@contextlib.contextmanager
def captured_stderr():
    """Collects what C++ code prints on fd 2 (IREE's console diagnostics):
    the compiler API reports failure as a bare `False`, the reason is only
    printed. Yields a list that holds the text afterwards."""
    out = []
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield out
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            out.append(tmp.read().decode(errors="replace"))


def first_error(text):
    """IREE's first `error:` line (without the file position), else its first line."""
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    for l in lines:
        if "error:" in l:
            return l[l.index("error:"):]
    return lines[0] if lines else "no diagnostic"


class Compiler:
    """One in-process compiler session (much faster than running
    iree-compile per case), with an on-disk cache of the vmfb."""

    def __init__(self):
        from iree.compiler.api import Session
        self.session = Session()
        self.session.set_flags(*FLAGS)

    def compile(self, text):
        key = hashlib.sha256((text + "\0" + " ".join(FLAGS)).encode()).hexdigest()
        path = os.path.join(CACHE, key + ".vmfb")
        if os.path.exists(path):
            with open(path, "rb") as f:
                return f.read()
        vmfb = self.compile_text(text)
        os.makedirs(CACHE, exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            f.write(vmfb)
        os.replace(tmp, path)  # atomic: two runs may share the cache
        return vmfb

    def compile_text(self, text):
        from iree.compiler.api import Output, Source
        inv = self.session.invocation()
        try:
            inv.enable_console_diagnostics()
            with captured_stderr() as diag:
                source = Source.wrap_buffer(self.session, text.encode())
                ok = inv.parse_source(source) and inv.execute()
            if not ok:
                # StableHLO's own parser accepted this text (xlaref checks it),
                # so a failure here is IREE not handling an op or type.
                raise Unsupported(f"IREE cannot compile it: {first_error(diag[0])}")
            out = Output.open_membuffer()
            inv.output_vm_bytecode(out)
            vmfb = bytes(out.map_memory())
            out.close()
            return vmfb
        finally:
            inv.close()


class Runtime:
    """IREE's synchronous CPU runtime: one device, a context per module."""

    def __init__(self):
        import iree.runtime as rt
        self.rt = rt
        self.instance = rt.VmInstance()
        self.device = rt.get_driver("local-sync").create_default_device()
        self.hal = rt.create_hal_module(self.instance, self.device)

    def buffer_view(self, etype, value):
        rt = self.rt
        name, dtype = HAL_TYPES[etype]
        arr = np.asarray(value).astype(dtype)
        # The bytes go in as a flat buffer and the view gets the shape: a
        # 0-d numpy array would otherwise arrive with shape [1].
        flat = np.ascontiguousarray(arr.reshape(-1)).view(np.uint8) if arr.size else np.zeros(1, np.uint8)
        buf = self.device.allocator.allocate_buffer_copy(
            memory_type=rt.MemoryType.DEVICE_LOCAL, allowed_usage=rt.BufferUsage.DEFAULT, device=self.device,
            buffer=flat)
        return rt.HalBufferView(buf, list(arr.shape), getattr(rt.HalElementType, name))

    def run(self, vmfb, case):
        rt = self.rt
        module = rt.VmModule.copy_buffer(self.instance, vmfb)
        context = rt.VmContext(self.instance, modules=[self.hal, module])
        fn = module.lookup_function("main")
        args = rt.VmVariantList(len(case.params))
        for shape, value in zip(case.params, case.args):
            if shape[0] != "array":
                raise Unsupported(f"{BACKEND}: tuple parameters are not passed to the compiled entry")
            args.push_ref(self.buffer_view(shape[1], value))
        rets = rt.VmVariantList(len(case.results))
        with captured_stderr() as diag:
            try:
                context.invoke(fn, args, rets)
            except Exception as e:  # noqa: BLE001 - IREE's runtime status
                msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                if "UNIMPLEMENTED" in msg:  # e.g. collectives on local-sync, even for one replica
                    raise Unsupported(f"IREE runtime: {msg}")
                raise Reject(f"IREE runtime: {msg}")
        del diag
        return [self.result(rets, i, shape) for i, shape in enumerate(case.results)]

    def result(self, rets, i, shape):
        if shape[0] != "array":
            raise Unsupported(f"{BACKEND}: tuple results are not returned as buffers")
        _, etype, dims = shape
        bv = rets.get_as_object(i, self.rt.HalBufferView)
        dtype = np.dtype(HAL_TYPES[etype][1])
        n = int(np.prod(dims)) if dims else 1
        if n == 0:
            return np.zeros(dims, dtype=dtype)
        # Read the bytes as unsigned integers of the width, then view them
        # as the element type: exact for every type numpy cannot name to IREE.
        raw = np.array(bv.map().asarray((n * dtype.itemsize,), np.dtype(np.uint8)), copy=True)
        arr = raw.view(dtype).reshape(dims)
        return arr.astype(bool) if etype == "pred" else arr


COMPILER = None
RUNTIME = None


# IREE's scatter writes out of bounds for some index types (seen: a later,
# unrelated scatter case dies with "free(): invalid next size"): a worker
# that ran a scatter is not reused, so a crash is charged to its own case.
FRESH_PROCESS_AFTER = ('"stablehlo.scatter"',)


def run(req):
    global COMPILER, RUNTIME
    case = prepare(req, BACKEND)
    WorkerState.exit_after_reply = any(op in case.text for op in FRESH_PROCESS_AFTER)
    if any(s[0] != "array" for s in case.params):
        raise Unsupported(f"{BACKEND}: tuple parameters are not passed to the compiled entry")
    if any(s[0] != "array" for s in case.results):
        raise Unsupported(f"{BACKEND}: nested tuple results are not returned as buffers")
    if COMPILER is None:
        COMPILER, RUNTIME = Compiler(), Runtime()
    vmfb = COMPILER.compile(case.text)
    return case.reply(RUNTIME.run(vmfb, case))


if __name__ == "__main__":
    worker_loop(run)
