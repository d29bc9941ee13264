"""``python -m numba_vulkan``: report the Vulkan devices found, like ``numba -s``."""

import sys


def _yes(flag):
    return "yes" if flag else "no"


def _loop_limit(info):
    """What the probe cache knows of the driver's loop cap (runtime/disk.py)."""
    if info.loop_iteration_limit is not None:
        return f"{info.loop_iteration_limit} per loop nest and invocation (longer loops end early)"
    from .runtime import disk

    if disk.cached_loop_limit(info) is disk.MISSING:
        return "not probed yet (measured when the device is first used)"
    return "none"


def _print_selftest(info):
    """The driver self-test's verdict on each primitive, and the software forms in use."""
    if not info.selftest:
        from . import config

        why = "off (NUMBA_VULKAN_SELFTEST=0)" if not config.SELFTEST else \
            "not run yet (it runs when the device is first used)"  # fmt: skip
        print(f"  {'driver self-test':<24}{why}")
        return
    print("  driver self-test")
    for primitive, verdict in info.selftest:
        print(f"    {primitive:<22}{verdict}")
    print(f"  {'software forms':<24}{', '.join(info.soft_forms) or 'none'}")
    if info.matrix_selftest:
        print("  matrix units' self-test")
        for shape, verdict in info.matrix_selftest:
            print(f"    {shape:<46}{verdict}")


def health_line():
    """One line a bug report can quote: versions, the default device and driver, and whether
    a kernel compiles, runs and matches NumPy there (with the time of that first call)."""
    import platform
    import time

    import numba
    import numpy as np

    import numba_vulkan as nv

    parts = [f"numba_vulkan {nv.__version__}", f"numba {numba.__version__}",
             f"numpy {np.__version__}", f"Python {platform.python_version()}"]  # fmt: skip
    try:
        info = nv.get_device().info
        parts.append(f"{info.name}, Vulkan {'.'.join(map(str, info.api_version))}, "
                     f"{info.driver_name} {info.driver_info}".strip())  # fmt: skip

        @nv.jit
        def _health(x, out):
            i = nv.global_id(0)
            if i < out.size:
                out[i] = x[i] * x[i] + 1

        x = np.arange(1000, dtype=np.float32)
        out = np.zeros_like(x)
        start = time.perf_counter()
        _health.forall(x.size)(x, out)
        ms = (time.perf_counter() - start) * 1e3
        ok = np.array_equal(out, x * x + 1)
        verdict = f"a kernel ran {'and matched' if ok else 'but DID NOT match'} NumPy"
        parts.append(f"{verdict} (first call {ms:.0f} ms)")
        status = "ok" if ok else "FAILED"
    except Exception as e:  # the line must name any failure, whatever it is
        parts.append(f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
        status = "FAILED"
    return f"health: {status} | " + " | ".join(parts)


def main():
    import numba_vulkan
    from numba_vulkan import config, runtime
    from numba_vulkan.errors import VulkanLoaderError

    print(f"numba_vulkan {numba_vulkan.__version__}")
    try:
        infos = runtime.list_devices()
    except VulkanLoaderError as e:
        print(f"No Vulkan loader: {e}")
        return 1
    if not infos:
        print("The Vulkan loader found no Vulkan 1.2 device with a compute queue." + runtime.hint)
        return 1
    try:
        default = runtime.get_device().info.index  # opened: its driver self-test has run
        infos = runtime.list_devices()
    except (ValueError, TypeError, RuntimeError) as e:  # a bad NUMBA_VULKAN_DEVICE, say
        print(f"No default device: {e}")
        default = None
    print(f"{len(infos)} Vulkan device(s):")
    for info in infos:
        mark = " (default)" if info.index == default else ""
        version = ".".join(map(str, info.api_version))
        print(f"\n[{info.index}] {info.name}{mark}")
        facts = [
            ("kind", info.kind),
            ("Vulkan", version),
            ("driver", f"{info.driver_name} {info.driver_info}".strip()),
            ("float64 / int64", f"{_yes(info.float64)} / {_yes(info.int64)}"),
            (
                "float16 / int16 / int8",
                f"{_yes(info.float16)} / {_yes(info.int16)} / {_yes(info.int8)}",
            ),
            ("8/16-bit storage", f"{_yes(info.storage8)} / {_yes(info.storage16)}"),
            ("float32 atomic add", _yes(info.float32_atomic_add)),
            ("bfloat16 type / tiles", f"{_yes(info.bfloat16_type)} / {_yes(info.bfloat16_matrix)}"),
            ("int64 atomics", _yes(info.int64_atomics)),
            ("subgroup size", info.subgroup_size),
            (
                "subgroup operations",
                ", ".join(
                    name
                    for name in (
                        "basic",
                        "vote",
                        "arithmetic",
                        "ballot",
                        "shuffle",
                        "shuffle_relative",
                    )
                    if getattr(info, "subgroup_" + name)
                )
                or "none",
            ),
            ("shared memory", f"{info.max_shared_memory // 1024} KiB"),
            ("max workgroup", f"{info.max_local_size}, {info.max_local_invocations} invocations"),
            ("max groups", info.max_groups),
            ("device memory", f"{info.device_local_bytes / 2**30:.1f} GiB"),
            ("timestamps", f"{info.timestamp_bits} bits, {info.timestamp_period} ns/tick"),
            ("loop iteration limit", _loop_limit(info)),
        ]
        for key, value in facts:
            print(f"  {key:<24}{value}")
        _print_selftest(info)
    print(f"\nNUMBA_VULKAN_DEVICE={config.DEVICE!r} NUMBA_VULKAN_DEBUG={config.DEBUG}")
    line = health_line()
    print(f"\n{line}")
    return 0 if line.startswith("health: ok") else 1


if __name__ == "__main__":
    sys.exit(main())
