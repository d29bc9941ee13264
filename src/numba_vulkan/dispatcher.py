"""``@nv.jit``: kernels, their specialisations and launch configurations.

A Dispatcher holds a Python function and compiles it once per
specialisation: (argument types, narrowing mode). Launching goes through a
LaunchConfig (``kernel[groups, local_size]`` or ``kernel.forall(n)``):

    fast path   the C++ launchers this dispatcher already made for the device,
                most recent first: each checks the arguments against its
                specialisation and records the dispatch, or answers False.
                No typeof, no dictionaries: a few attribute loads and calls.
    slow path   everything else: typeof, compile or fetch the specialisation,
                make its launcher, copy NumPy arrays to the device and back,
                clear errors for arguments the kernel cannot take.

Asynchrony follows numba.cuda: a launch whose arrays are all device arrays
returns at once; one with NumPy arrays waits, because it copies results back.
"""

from __future__ import annotations

import collections
import dataclasses
import warnings
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, overload

import numpy as np
from numba.core.compiler_lock import global_compiler_lock
from numba.core.target_extension import dispatcher_registry
from numba.core.typing.templates import Signature

from . import (
    arguments,
    cache,
    checks,
    compiler,
    config,
    forksafe,
    hidden_args,
    kernel_pickle,
    launchers,
    narrowing,
    selftest_kernel,
    slow_launch,
)
from .codegen import CompiledKernel
from .errors import (
    VulkanPerformanceWarning,
    VulkanPrecisionWarning,
)
from .inspection import Inspection
from .launch import (
    LaunchConfig,
    _dim3,
    _resolve_device,
    _stream_class,
    _stream_or_device,
    fast_key,
)
from .runtime import compiler_hook, device_info, reports
from .runtime.device_info import DeviceSpec, Dim3Like
from .runtime.streams import Stream
from .typing import devfn, pipeline, target

_JIT_OPTIONS = {
    "fastmath": False,
    "boundscheck": False,
    "error_model": "numpy",
    "narrow": None,
    "cache": False,
    "device": False,
    "inline": "never",
    "debug": False,
    "group_loop": None,
}

DEFAULT_LOCAL_SIZE = {1: (64, 1, 1), 2: (8, 8, 1), 3: (4, 4, 4)}

CacheStats = collections.namedtuple("CacheStats", "cache_hits cache_misses")

#: What ``jit`` takes instead of a function: numba.cuda's signatures, one or a list.
Signatures = str | Signature | Sequence[str | Signature]


@overload
def jit(func: None = None, **options: Any) -> Callable[[Callable[..., Any]], Dispatcher]: ...
@overload
def jit(func: Signatures, **options: Any) -> Callable[[Callable[..., Any]], Dispatcher]: ...
@overload
def jit(func: Callable[..., Any], **options: Any) -> Dispatcher: ...


def jit(func: Callable[..., Any] | Signatures | None = None,
        **options: Any) -> Dispatcher | Callable[[Callable[..., Any]], Dispatcher]:
    """Compile a Python function as a Vulkan kernel (and device function).

    Usable as ``@jit``, ``@jit(option=value, ...)``, or as numba.cuda's
    ``@jit("void(float32[:], float32)")`` (a signature, or a list of them): those
    specialisations are compiled when the function is decorated, so that their errors
    show there; other argument types still specialise at launch.

    Parameters
    ----------
    func : function, str or list of str, optional
        The function, or signatures; omitted when options are given.
    fastmath : bool or set of str
        Allow the driver's fast float built-ins and reassociation/contraction; or a set
        of Numba's flags (``{'contract', 'afn', 'reassoc', 'nnan', 'ninf', 'nsz',
        'arcp', 'fast'}``): any of them relaxes the arithmetic, 'afn' or 'fast' also
        uses the built-ins (docs/math.md).
    boundscheck : bool
        Check every element index; one out of bounds raises IndexError on the host
        at the next synchronisation (``NUMBA_BOUNDSCHECK`` overrides it;
        docs/exceptions-and-print.md).
    error_model : {"numpy", "python"}
        What division by zero does: "numpy" (the default, as numba.cuda) gives 0 for
        integers and inf/NaN for floats; "python" raises ZeroDivisionError.
    narrow : None, bool, "ints" or "floats"
        How 64-bit types are narrowed; see ``numba_vulkan.narrowing.Mode``.
    cache : bool
        Keep compiled kernels on disk and load them in later processes without
        compiling (numba_vulkan/cache.py; NUMBA_VULKAN_CACHE=0 turns it off,
        NUMBA_VULKAN_CACHE_DIR moves it).
    device : bool
        Accepted for numba.cuda's ``jit``: every ``@jit`` function is both a
        kernel and a device function (docs/device-functions.md).
    inline : {"never", "always"}
        Both mean the same: calls are always inlined into the kernel
        (docs/device-functions.md says why); the generated code is identical.
    debug : bool
        ``True`` is refused with VulkanUnsupportedError (no debug information;
        boundscheck and error_model="python" give the checks).
    group_loop : None or bool
        ``True``: the kernel's workgroups along x run as a loop over fewer dispatched
        ones, on every device; ``False``: never; ``None`` (the default):
        ``NUMBA_VULKAN_GROUP_LOOP`` decides. Never changes a result; a kernel with
        barriers, shared memory or cooperative matrices runs without it (with a
        VulkanPerformanceWarning where ``True`` asked for it; docs/corpus.md, "Small
        workgroups on NVIDIA's Vulkan driver", says which kernels it speeds up).

    Returns
    -------
    Dispatcher, or a decorator that makes one.

    Raises
    ------
    TypeError
        For an option this decorator does not know.
    """
    unknown = sorted(set(options) - set(_JIT_OPTIONS))
    if unknown:
        raise TypeError(
            f"jit() got unknown option(s) {', '.join(map(repr, unknown))}; "
            f"known options: {', '.join(_JIT_OPTIONS)}"
        )
    merged = dict(_JIT_OPTIONS, **options)
    merged["fastmath"] = checks.fastmath_option(merged["fastmath"], "jit option fastmath")
    for name in ("boundscheck", "cache", "device", "debug"):
        if not isinstance(merged[name], (bool, np.bool_)):
            raise TypeError(f"jit option {name} must be True or False, not {merged[name]!r}")
    if merged["inline"] not in ("never", "always"):
        raise ValueError(f"jit option inline must be 'never' or 'always', not {merged['inline']!r}")
    if merged["error_model"] not in ("numpy", "python"):
        raise ValueError(f"error_model must be 'numpy' or 'python', not {merged['error_model']!r}")
    if merged["group_loop"] is not None and not isinstance(merged["group_loop"], (bool, np.bool_)):
        raise TypeError(
            f"jit option group_loop must be None, True or False, not {merged['group_loop']!r}")
    if merged["narrow"] not in (None, True, False, "ints", "floats"):
        raise ValueError(
            f"narrow must be None, True, False, 'ints' or 'floats', not {merged['narrow']!r}"
        )
    if func is None:
        return lambda f: Dispatcher(f, merged)
    if isinstance(func, (str, list, tuple)) or type(func).__name__ == "Signature":
        # numba.cuda's @jit("void(float32[:])") or a list of signatures: compiled (and
        # checked) when decorating; other argument types still specialise at launch.
        signatures = list(func) if isinstance(func, (list, tuple)) else [func]
        from numba.core import sigutils

        for sig in signatures:
            try:
                sigutils.normalize_signature(sig)
            except Exception as e:  # noqa: BLE001 - Numba's parser raises several kinds
                raise TypeError(
                    f"jit() expects a function or a signature such as 'void(float32[::1])', "
                    f"not {sig!r} ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"
                ) from None

        def decorate(f):
            dispatcher = Dispatcher(f, merged)
            for sig in signatures:
                dispatcher.compile(sig)
            return dispatcher

        return decorate
    if not callable(func):
        raise TypeError(f"jit() expects a function or a signature, not {type(func).__name__}")
    return Dispatcher(func, merged)


class Specialisation:
    """A compiled kernel and its launcher on one device: one launcher, or for a kernel that
    raises or prints one per thread, each writing that thread's status buffer
    (runtime/reports.py), so that a thread is told only of its own launches."""

    __slots__ = ("_launchers", "compiled", "device", "per_thread")

    def __init__(self, compiled, device):
        self.compiled = compiled
        self.device = device
        self.per_thread = hidden_args.per_thread(compiled)
        self._launchers = {}  # None or thread token -> _core.Launcher

    @property
    def launcher(self):
        key = reports.thread_token() if self.per_thread else None
        found = self._launchers.get(key)
        if found is None:
            found = self._launchers.setdefault(key, launchers.make_launcher(self.device,
                                                                            self.compiled))
        return found

    def fast_path_key(self):
        """The key of Dispatcher._launchers this specialisation's launcher serves under."""
        return (self.device, reports.thread_token()) if self.per_thread else self.device


class Dispatcher(Inspection):
    """A kernel: a Python function compiled on demand for each argument-type specialisation.

    Launch it with ``kernel[groups, local_size](*args)`` or
    ``kernel.forall(extent)(*args)``.
    """

    # Numba's templates find the target's contexts through dispatcher_registry[Vulkan].
    targetdescr = target.TargetDescriptor()

    def __init__(self, pyfunc: Callable[..., Any], options: dict[str, Any]) -> None:
        self.py_func = pyfunc
        self.__name__ = getattr(pyfunc, "__name__", "kernel")
        self.__doc__ = getattr(pyfunc, "__doc__", None)
        self.__wrapped__ = pyfunc
        self.options = dict(options)
        self._compiled = {}  # (argtypes, mode) -> CompiledKernel
        self._specialisations = {}  # (argtypes, device, mode) -> Specialisation
        # device (or (device, thread token) for a kernel that raises or prints) -> list of
        # _core.Launcher, most recent first: the fast path's.
        self._launchers = {}
        self._per_thread = False  # some specialisation has launchers per thread
        # every launch waits for the kernel and reports its exceptions at once (numba.cuda's
        # debug=True kernels; cuda.jit sets it), as NUMBA_VULKAN_SYNC=1 does for all kernels
        self.sync_launches = False
        self._configs = {}  # kernel[...] configuration -> LaunchConfig (reused: cheap launches)
        self._lock = forksafe.lock(reentrant=True)
        self.slow_path_count = 0  # launches that took the slow path (a debugging aid for tests)
        self._warned = set()  # what this kernel has warned of (_warn_once)
        # Disk cache counters by argument types, as numba's dispatcher.stats.
        self.stats = CacheStats({}, {})
        self._pickled = None  # the function's pickle, once compiled (kernel_pickle.py)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled as its function, options, class and launch state (kernel_pickle.py):
        Dask's ``distributed`` sends kernels so; the receiving process compiles on its first
        launch."""
        return kernel_pickle.reduce(self)

    # ------------------------------------------------------------ launch forms

    def __call__(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError(
            f"kernel {self.__name__!r} needs a launch configuration: call it as "
            f"{self.__name__}.forall(n)(...) for one invocation per element, or "
            f"{self.__name__}[groups, local_size](...)"
        )

    def configure(self, griddim: Dim3Like, blockdim: Dim3Like, stream: Stream | DeviceSpec = 0,
                  sharedmem: int = 0) -> LaunchConfig:
        """numba.cuda's ``kernel.configure(griddim, blockdim, stream, sharedmem)``: the same
        launch configuration as ``kernel[griddim, blockdim, stream, sharedmem]``."""
        return self[griddim, blockdim, stream, sharedmem]

    def __getitem__(self, config_: tuple[Any, ...]) -> LaunchConfig:
        if not isinstance(config_, tuple) or len(config_) not in (2, 3, 4):
            raise TypeError(
                "a launch configuration is kernel[groups, local_size], "
                "kernel[groups, local_size, stream_or_device] or "
                "kernel[groups, local_size, stream, shared_bytes], "
                f"not kernel[{config_!r}]"
            )
        try:
            cached = self._configs.get(config_)
        except TypeError:  # unhashable (lists inside): checked and built, not cached
            cached = None
        if cached is not None:
            return cached
        groups = _dim3(config_[0], "groups")
        local_size = _dim3(config_[1], "local_size")
        stream = device = None
        shared_bytes = 0
        if len(config_) == 4:
            # numba.cuda's form: stream 0 is the default stream; then the bytes of the
            # dynamic shared array (nv.shared.array(0, dtype)).
            shared_bytes = config_[3]
            if isinstance(shared_bytes, bool) or not isinstance(shared_bytes, (int, np.integer)) \
                    or shared_bytes < 0:
                raise TypeError(f"shared_bytes must be an int >= 0, not {shared_bytes!r}")
            shared_bytes = int(shared_bytes)
        if len(config_) >= 3 and config_[2] is not None and not (
            len(config_) == 4 and isinstance(config_[2], int) and config_[2] == 0
        ):
            stream, device = _stream_or_device(config_[2])
        launch = LaunchConfig(self, groups, local_size, device, stream, shared_bytes)
        if len(self._configs) > 64:
            self._configs.clear()
        try:
            self._configs[config_] = launch
        except TypeError:  # an unhashable configuration (a list): just not cached
            pass
        return launch

    def forall(self, extent: Dim3Like, device: DeviceSpec = None,
               local_size: Dim3Like | None = None,
               stream: Stream | None = None) -> LaunchConfig:
        """A launch configuration with one invocation per point of ``extent``.

        Parameters
        ----------
        extent : int or tuple of int
            1 to 3 extents; rounded up to whole workgroups, so the kernel must
            check its global id against the extent.
        device : int, str, Device or None
            The device; the default one if None (or that of ``stream``).
        local_size : int or tuple of int, optional
            Workgroup size; 64, (8, 8) or (4, 4, 4) by default.
        stream : Stream, optional
            Launch on a stream.

        Returns
        -------
        LaunchConfig
        """
        key = ("forall", extent, device, local_size, stream)
        try:
            cached = self._configs.get(key)
        except TypeError:  # unhashable (a list extent)
            key = cached = None
        if cached is not None:
            return cached
        extents = checks.as_int_tuple(extent, "forall() extent")
        if local_size is None:
            local = DEFAULT_LOCAL_SIZE[len(extents)]
        else:
            local = _dim3(local_size, "local_size")
        full = extents + (1,) * (3 - len(extents))
        groups = tuple(-(-e // n) for e, n in zip(full, local))  # exact: no float rounding
        for axis, n in enumerate(groups):
            if n > checks.MAX_U32:
                raise OverflowError(
                    f"forall() extent {extent!r} needs {n} workgroups of {local[axis]} along "
                    f"axis {axis}, more than 2^32 - 1; use a larger local_size"
                )
        if stream is not None:
            if not isinstance(stream, _stream_class()):
                raise TypeError(f"forall() stream must be a Stream, not {type(stream).__name__}")
            stream, stream_device = _stream_or_device(stream)
            device = device if device is not None else stream_device
        try:
            resolved = _resolve_device(device)
        except ValueError as e:
            if isinstance(device, (int, np.integer)) and not isinstance(device, bool):
                raise ValueError(
                    f"{e}. forall()'s second argument is the device; the workgroup size is "
                    f"forall({extent!r}, local_size={device}) (numba.cuda's forall(n, tpb) "
                    "takes it second)"
                ) from None
            raise
        launch = LaunchConfig(self, groups, local, resolved, stream)
        if key is not None:
            if len(self._configs) > 64:
                self._configs.clear()
            self._configs[key] = launch
        return launch

    # ------------------------------------------------------------ compilation

    def compile(self, argtypes: tuple[Any, ...] | str, device: DeviceSpec = None,
                mode: narrowing.Mode | None = None) -> CompiledKernel:
        """Compile a specialisation without running it.

        Parameters
        ----------
        argtypes : tuple of numba types, or str
            The argument types, or a signature string such as
            ``"void(float32[::1], float32[::1], float32)"``.
        device : Device, optional
            Compile for this device's narrowing mode. Without a device (and
            without ``mode``) 64-bit floats are kept and integers narrowed
            according to the ``narrow`` option.
        mode : narrowing.Mode, optional
            Overrides the mode.

        Returns
        -------
        numba_vulkan.codegen.CompiledKernel
        """
        try:
            argtypes = arguments.parse_argtypes(argtypes)
        except (SyntaxError, NameError, AttributeError, ValueError) as e:
            raise TypeError(f"argtypes {argtypes!r} is not a signature: {e}") from None
        except TypeError as e:
            raise TypeError(f"argtypes {argtypes!r}: {e}") from None
        device = None if device is None else _resolve_device(device)
        if mode is None:
            mode = self._mode(device)
        elif not isinstance(mode, narrowing.Mode):
            raise TypeError(f"mode must be a numba_vulkan.narrowing.Mode, not {mode!r}")
        return self._compile(argtypes, mode, launchers.codegen_controls(device),
                             launchers.max_push(device))

    def _mode(self, device):
        narrow = self.options["narrow"]
        if device is None:
            return narrowing.Mode.for_device(_HostInfo, narrow)
        return narrowing.Mode.for_device(device.info, narrow)

    def _compile(self, argtypes, mode, codegen_controls=compiler.CodegenControls(),
                 max_push_bytes=launchers.MIN_PUSH_BYTES,
                 shared_bytes=0):
        loop = self.options.get("group_loop")
        if loop is not None and codegen_controls.group_loop != loop:
            codegen_controls = codegen_controls._replace(group_loop=bool(loop))
        key = (argtypes, mode, codegen_controls, max_push_bytes, shared_bytes)
        compiled = self._compiled.get(key)
        if compiled is None:
            # Numba's front end is not thread-safe: take its global lock first, then
            # ours (nested compilations take them in the same order).
            with global_compiler_lock, self._lock:
                compiled = self._compiled.get(key)
                if compiled is None:
                    options = self._compile_options()
                    disk_key = self._disk_key(argtypes, options, mode, codegen_controls,
                                              max_push_bytes, shared_bytes)  # fmt: skip
                    if disk_key is not None:
                        compiled = cache.load_kernel(self.py_func, disk_key)
                        counter = self.stats.cache_hits if compiled else self.stats.cache_misses
                        counter[argtypes] = counter.get(argtypes, 0) + 1
                    if compiled is None:
                        compiled = compiler.compile_kernel(
                            self.py_func,
                            argtypes,
                            options,
                            mode,
                            max_push_bytes=max_push_bytes,
                            codegen_controls=codegen_controls,
                            dynamic_shared_bytes=shared_bytes,
                        )
                        if disk_key is not None:
                            cache.store_kernel(self.py_func, disk_key, compiled)
                    self._compiled[key] = compiled
                    self._warn_if_float64_narrowed(compiled)
        return compiled

    def _disk_key(self, argtypes, options, mode, codegen_controls, max_push_bytes, shared_bytes):
        """The disk cache key of a specialisation, or None when it is not cached."""
        if not self.options["cache"] or not cache.enabled():
            return None
        try:
            return cache.kernel_key(self.py_func, argtypes, options, mode,
                                    (codegen_controls, max_push_bytes, shared_bytes,
                                     config.UNROLL))  # fmt: skip
        except cache.Uncachable as e:
            self._warn_once("uncachable", VulkanPerformanceWarning,
                            f"kernel {self.__name__!r} is not cached: it refers to {e}", 5)
            return None

    def _warn_once(self, what, category, message, stacklevel):
        """`message` as a `category` warning the first time this kernel warns of `what`
        (`stacklevel`: the caller's, as it would pass it to warnings.warn)."""
        if what not in self._warned:
            self._warned.add(what)
            warnings.warn(message, category, stacklevel=stacklevel + 1)

    def _warn_if_float64_narrowed(self, compiled):
        """VulkanPrecisionWarning, once per kernel, when the default mode computes float64
        values in float32 (a device without float64); an explicit ``narrow`` asks for it."""
        if not compiled.mode.floats or self.options["narrow"] is not None or config.NARROW:
            return
        if "precision" in self._warned or not _uses_float64(compiled):
            return
        self._warn_once(
            "precision", VulkanPrecisionWarning,
            f"kernel {self.__name__!r} computes its float64 values in float32: the device "
            "lacks float64 (pass narrow='floats' to say that this is intended)", 4)

    def _compile_options(self):
        boundscheck = bool(self.options["boundscheck"])
        if config.BOUNDSCHECK is not None:  # NUMBA_BOUNDSCHECK overrides the option, as in Numba
            boundscheck = bool(config.BOUNDSCHECK)
        fm = self.options["fastmath"]
        return pipeline.Options(
            fastmath=bool(fm),
            # the driver's approximate built-ins: fastmath=True, or 'afn' (or 'fast') among
            # the flags; a set without it (e.g. {'contract'}) only relaxes the arithmetic
            fast_builtins=bool(fm & {"afn", "fast"}) if isinstance(fm, frozenset) else bool(fm),
            boundscheck=boundscheck,
            error_model=self.options["error_model"],
            debug=bool(self.options["debug"]),
        )

    def _specialise(self, argtypes, device, wide_indices=False, shared_bytes=0):
        mode = self._mode(device)
        if wide_indices:
            # An array past 32-bit indexing: this specialisation has 64-bit extents and strides.
            mode = dataclasses.replace(mode, index64=True)
        key = (argtypes, device, mode, shared_bytes)
        spec = self._specialisations.get(key)
        if spec is None:
            # A forked child gets its VulkanForkError now, not after compiling, and never
            # waits for Numba's or our lock (a parent's thread may have held one at the fork).
            device._core.check_usable()
            compiled = self._compile(argtypes, mode, launchers.codegen_controls(device),
                                     launchers.max_push(device), shared_bytes)
            device.check_support(compiled)
            self._warn_if_float64_slow(compiled, device)
            self._warn_if_no_group_loop(compiled)
            with self._lock:  # threads may specialise at once; one launcher per key
                spec = self._specialisations.get(key)
                if spec is None:
                    spec = Specialisation(compiled, device)
                    self._specialisations[key] = spec
        # Kernels whose barriers each launch must judge (frontend/divergence.py): slow path
        # only. A kernel that raises or prints has a launcher per thread, served under
        # (device, thread token); one sized at the launch (a dynamic shared array), under
        # launch.fast_key's key for its size.
        if not spec.compiled.barrier_guards:
            fast = fast_key(spec.fast_path_key(), shared_bytes)
            launcher = spec.launcher
            if launcher in self._launchers.get(fast, ()):  # the usual case: no lock taken
                return spec
            with self._lock:
                old = self._launchers.get(fast, [])
                if launcher not in old:
                    if spec.per_thread:
                        self._per_thread = True
                    # A new list, never one changed in place: the fast path iterates the
                    # old one without a lock.
                    self._launchers[fast] = [launcher, *old]
        return spec

    def _check_barriers(self, compiled, launch, device):
        """Refuse a launch at whose workgroup size a barrier under an id comparison is
        provably divergent (frontend/divergence.py)."""
        from .errors import VulkanUnsupportedError
        from .frontend import divergence

        why = divergence.launch_error(compiled.barrier_guards, launch.groups,
                                      launch.local_size, device.info.subgroup_size)
        if why is not None:
            raise VulkanUnsupportedError(f"kernel {self.__name__!r}: {why}")

    def _warn_if_no_group_loop(self, compiled):
        """VulkanPerformanceWarning, once per kernel, where group_loop=True was asked for a
        kernel that keeps whole workgroups (barriers, shared memory, cooperative matrices)."""
        if not self.options.get("group_loop") or compiled.group_loop:
            return
        self._warn_once(
            "group_loop", VulkanPerformanceWarning,
            f"kernel {self.__name__!r}: group_loop=True has no effect on it: a kernel with "
            "barriers, shared memory or cooperative matrices runs each workgroup as its own "
            "(docs/corpus.md, \"Small workgroups on NVIDIA's Vulkan driver\")", 4)

    def _warn_if_float64_slow(self, compiled, device):
        """VulkanPerformanceWarning, once per kernel, for float64 arithmetic on a GPU
        that runs it far slower than float32 (runtime/device_info.py's float64_is_slow)."""
        if compiled.mode.floats or "float64_slow" in self._warned:
            return
        if not device_info.float64_is_slow(device.info) or not _uses_float64(compiled):
            return
        self._warn_once(
            "float64_slow", VulkanPerformanceWarning,
            f"kernel {self.__name__!r} computes in float64, which {device.info.name} runs much "
            "slower than float32; if float32 is enough, use float32 arrays and write float "
            "literals as np.float32(...) (a bare 1.0 is a float64), or pass narrow='floats'", 4)

    @property
    def specialisations(self) -> dict[tuple[Any, Any], CompiledKernel]:
        """The compiled kernels, by (argument types, narrowing mode); kernels compiled for a
        dynamic shared array's size are left out (the first size's kernel stands for them)."""
        out = {}
        for (argtypes, mode, _, _, shared_bytes), k in self._compiled.items():
            if not shared_bytes or (argtypes, mode) not in out:
                out[(argtypes, mode)] = k
        return out

    def __repr__(self) -> str:
        return f"<numba_vulkan kernel {self.__name__}>"

    def _launch_slow(self, launch, args):
        """Type the arguments, specialise, copy NumPy arrays and launch (slow_launch.py)."""
        slow_launch.run(self, launch, args)


dispatcher_registry[target.Vulkan] = Dispatcher
devfn.register_jit_class(Dispatcher)
compiler_hook.set_jit(jit)
compiler_hook.set_selftest_kernel(selftest_kernel.build, selftest_kernel.build_sqrt_probe)


# ---------------------------------------------------------------- helpers


class _HostInfo:
    """DeviceInfo stand-in for compiling without a device: float64 kept."""

    float64 = True
    int64 = True


def _uses_float64(compiled):
    """Whether a kernel computes with float64 values (recorded in cache entries)."""
    uses = getattr(compiled, "uses_float64", None)
    if uses is None:
        uses = compiled.typed is not None and pipeline.uses_float64(compiled.typed)
        compiled.uses_float64 = uses
    return uses
