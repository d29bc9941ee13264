"""The GPU programming models the benchmarks compare (numba_vulkan, numba.cuda), behind one
interface, and the description of the machine and versions every result file records."""

import json
import os
import platform
import shutil
import statistics
import subprocess
import time
from pathlib import Path

import numpy as np

# Benchmarks compile from scratch: no disk caches (first_call measures exactly that).
os.environ.setdefault("NUMBA_VULKAN_CACHE", "0")  # first_call must compile from scratch
os.environ.setdefault("NUMBA_CACHE_DIR", "/nonexistent-numba-cache")

RESULTS = Path(__file__).resolve().parent / "results"


# ------------------------------------------------------------------ backends


class Backend:
    """What one figure needs from a GPU programming model."""

    name = "?"

    def jit(self, func):
        raise NotImplementedError

    def to_device(self, array):
        raise NotImplementedError

    def launch(self, kernel, n, args):
        raise NotImplementedError

    def synchronize(self):
        raise NotImplementedError

    def kernel_namespace(self):
        raise NotImplementedError


class VulkanBackend(Backend):
    name = "numba_vulkan"

    def __init__(self):
        import numba_vulkan as nv

        self.nv = nv
        self.device = nv.get_device()

    def jit(self, func):
        return self.nv.jit(func)

    def to_device(self, array):
        return self.nv.to_device(array)

    def launch(self, kernel, n, args, local=256):
        kernel[(n + local - 1) // local, local](*args)

    def launch2d(self, kernel, rows, cols, args, local=16):
        kernel[((rows + local - 1) // local, (cols + local - 1) // local), (local, local)](*args)

    def synchronize(self):
        self.nv.synchronize()

    def index_source(self):
        return "nv.global_id(0)"

    def device_decorator(self):
        return "nv.jit(device=True)"

    def index2d_source(self):
        return "nv.global_id(0), nv.global_id(1)"

    def kernel_namespace(self):
        return {"nv": self.nv, "np": np}

    def describe(self):
        info = self.device.info
        return {"gpu": info.name, "kind": info.kind, "driver": driver_version()}

    def pipeline_stats(self, kernel, args, local):
        """What the driver reports of the kernel's pipeline (registers, ...), or why not."""
        try:
            return kernel.inspect_pipeline(*args, local_size=local)
        except self.nv.VulkanSupportError as e:
            return {"error": str(e)}


class CudaBackend(Backend):
    name = "numba.cuda"

    def __init__(self):
        if not hasattr(np, "row_stack"):
            np.row_stack = np.vstack  # numba-cuda 0.30.4 still refers to it
        from numba import cuda

        if not cuda.is_available():
            raise RuntimeError("numba.cuda finds no GPU")
        self.cuda = cuda
        self.device = cuda.get_current_device()

    def jit(self, func):
        return self.cuda.jit(func)

    def to_device(self, array):
        return self.cuda.to_device(array)

    def launch(self, kernel, n, args, local=256):
        kernel[(n + local - 1) // local, local](*args)

    def launch2d(self, kernel, rows, cols, args, local=16):
        kernel[((rows + local - 1) // local, (cols + local - 1) // local), (local, local)](*args)

    def synchronize(self):
        self.cuda.synchronize()

    def index_source(self):
        return "cuda.grid(1)"

    def device_decorator(self):
        return "cuda.jit(device=True)"

    def index2d_source(self):
        return "cuda.grid(2)"

    def kernel_namespace(self):
        return {"cuda": self.cuda, "np": np}

    def describe(self):
        name = self.device.name
        return {
            "gpu": name.decode() if isinstance(name, bytes) else name,
            "compute_capability": list(self.device.compute_capability),
            "driver": driver_version(),
        }

    def pipeline_stats(self, kernel, args, local):
        """Registers per thread and memory of the kernel's specialisation (the last compiled)."""
        def last(value):  # a dict by signature where the kernel is not specialised
            return list(value.values())[-1] if isinstance(value, dict) else value

        return {"registers": last(kernel.get_regs_per_thread()),
                "local_bytes": last(kernel.get_local_mem_per_thread()),
                "shared_bytes": last(kernel.get_shared_mem_per_block())}


# ------------------------------------------------------------------- kernels

def make_kernel(backend, name, source, jit=None, salt="0.0"):
    """A brand-new Python function (new code object) from `source` (a template with {name},
    {index}, {index2d}, {device}, and {salt}, a float literal) compiled by `backend` (or by
    `jit`)."""
    device = getattr(backend, "device_decorator", lambda: "")()
    src = source.format(
        name=name, index=backend.index_source(), index2d=backend.index2d_source(), device=device,
        salt=salt,
    )
    namespace = dict(backend.kernel_namespace())
    exec(compile(src, f"<bench {name}>", "exec"), namespace)  # noqa: S102
    return (jit or backend.jit)(namespace[name])



# ------------------------------------------------------------------ metadata


def driver_version():
    if shutil.which("nvidia-smi"):
        try:
            out = subprocess.run(
                ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
            return out.stdout.strip().splitlines()[0] if out.stdout.strip() else None
        except (OSError, subprocess.SubprocessError):
            return None
    return None


def cpu_name():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def versions():
    """The versions of Python and the packages compared, and under "environment" the
    variables set that change what numba_vulkan compiles or runs (NUMBA_VULKAN_*, NVK_*,
    NUMBA_BOUNDSCHECK): a figure of NUMBA_VULKAN_GROUP_LOOP=1 says so in its record."""
    from importlib import metadata

    out = {"python": platform.python_version(), "numpy": np.__version__}
    for dist in ("numba", "numba-cuda", "numba_vulkan"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    if out["numba_vulkan"] is None:
        try:
            import numba_vulkan

            out["numba_vulkan"] = numba_vulkan.__version__ + " (source tree)"
        except Exception:  # noqa: S110, BLE001
            pass
    out["environment"] = {
        k: v for k, v in sorted(os.environ.items())
        if k.startswith(("NUMBA_VULKAN_", "NVK_")) or k == "NUMBA_BOUNDSCHECK"
    }
    return out


# ---------------------------------------------------------------------- main


def each_backend(classes):
    """An instance of each backend class that can run here; for the others, a line saying
    why not."""
    for cls in classes:
        try:
            yield cls()
        except Exception as e:  # no GPU, no numba.cuda
            print(f"{cls.name}: {type(e).__name__}: {e}")


def median_time(fn, repeats):
    """The median of `repeats` wall-clock times of ``fn()``, in seconds."""
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def warm_up(run, sync, seconds=0.3):
    """``run()`` then ``sync()`` once (the first call compiles), then again for `seconds`: a
    GPU that idled through a compilation starts at low clocks, which would favour whatever
    runs second (H200, 2026-11-30: a kernel 1.5 to 4 times slower in its first 0.2 s, a
    histogram at 200 GB/s cold and 640 warm; H100, 2026-12-06: a float16 product timed right
    after its compile at 72 TFLOP/s, 198 warm)."""
    run()
    sync()
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        run()
        sync()


def synced_median_time(run, sync, repeats, warm_s=0.3):
    """median_time of ``run()`` then ``sync()`` (the device's work included), after
    ``warm_up``."""
    warm_up(run, sync, warm_s)
    return median_time(lambda: (run(), sync()), repeats)


def launch_time(backend, run, repeats, inner, warm_s=0.3):
    """Median seconds per ``run()`` over `repeats` batches of `inner` runs, each batch
    ending in the backend's synchronisation, after ``warm_up``."""
    warm_up(run, backend.synchronize, warm_s)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(inner):
            run()
        backend.synchronize()
        times.append((time.perf_counter() - t0) / inner)
    return statistics.median(times)


def report(result, path=None, show=True):
    """Print `result` as JSON (unless not `show`) and, given `path`, write it there too."""
    text = json.dumps(result, indent=1)
    if show:
        print(text)
    if path:
        with open(path, "w") as f:
            f.write(text + "\n")
