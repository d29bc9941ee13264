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

import dataclasses
import math
import threading

import numpy as np
from numba.core import types
from numba.core.target_extension import dispatcher_registry

from . import arguments, compiler, config, narrowing, target
from .errors import InternalCompilerError, VulkanSupportError

_JIT_OPTIONS = {
    "fastmath": False,
    "boundscheck": False,
    "error_model": "numpy",
    "narrow": None,
    "cache": False,
    "device": False,
    "inline": "never",
    "debug": False,
}

DEFAULT_LOCAL_SIZE = {1: (64, 1, 1), 2: (8, 8, 1), 3: (4, 4, 4)}


def jit(func=None, **options):
    """Compile a Python function as a Vulkan kernel (and device function).

    Usable as ``@jit`` or ``@jit(option=value, ...)``.

    Parameters
    ----------
    func : function, optional
        The function; omitted when options are given.
    fastmath : bool
        Allow the driver's fast float built-ins and reassociation/contraction.
    boundscheck : bool
        Check indices. Not supported yet: ``True`` makes compilation raise
        VulkanUnsupportedError (index checks need exceptions inside kernels).
    error_model : {"numpy", "python"}
        What integer division by zero does: give 0 (NumPy). "python" (raise
        ZeroDivisionError) is refused with VulkanUnsupportedError for now.
    narrow : None, bool, "ints" or "floats"
        How 64-bit types are narrowed; see ``numba_vulkan.narrowing.Mode``.
    cache : bool
        Keep compiled kernels on disk (not implemented yet: accepted, no effect).
    device, inline, debug
        Accepted for compatibility with numba.cuda's ``jit``.

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
    if merged["error_model"] not in ("numpy", "python"):
        raise ValueError(f"error_model must be 'numpy' or 'python', not {merged['error_model']!r}")
    if merged["narrow"] not in (None, True, False, "ints", "floats"):
        raise ValueError(
            f"narrow must be None, True, False, 'ints' or 'floats', not {merged['narrow']!r}"
        )
    if func is None:
        return lambda f: Dispatcher(f, merged)
    if not callable(func):
        raise TypeError(f"jit() expects a function, not {type(func).__name__}")
    return Dispatcher(func, merged)


class Specialisation:
    """A compiled kernel and its launcher on one device."""

    __slots__ = ("compiled", "device", "launcher")

    def __init__(self, compiled, device, launcher):
        self.compiled = compiled
        self.device = device
        self.launcher = launcher


class Dispatcher:
    """A kernel: a Python function compiled on demand for each argument-type specialisation.

    Launch it with ``kernel[groups, local_size](*args)`` or
    ``kernel.forall(extent)(*args)``.
    """

    # Numba's templates find the target's contexts through dispatcher_registry[Vulkan].
    targetdescr = target.TargetDescriptor()

    def __init__(self, pyfunc, options):
        self.py_func = pyfunc
        self.__name__ = getattr(pyfunc, "__name__", "kernel")
        self.__doc__ = getattr(pyfunc, "__doc__", None)
        self.__wrapped__ = pyfunc
        self.options = dict(options)
        self._compiled = {}  # (argtypes, mode) -> CompiledKernel
        self._specialisations = {}  # (argtypes, device, mode) -> Specialisation
        self._launchers = {}  # device -> list of _core.Launcher, most recent first
        self._configs = {}  # kernel[...] configuration -> LaunchConfig (reused: cheap launches)
        self._lock = threading.RLock()
        self.slow_path_count = 0  # launches that took the slow path (a debugging aid for tests)

    # ------------------------------------------------------------ launch forms

    def __call__(self, *args, **kwargs):
        raise TypeError(
            f"kernel {self.__name__!r} needs a launch configuration: call it as "
            f"{self.__name__}.forall(n)(...) for one invocation per element, or "
            f"{self.__name__}[groups, local_size](...)"
        )

    def __getitem__(self, config_):
        if not isinstance(config_, tuple) or len(config_) not in (2, 3):
            raise TypeError(
                "a launch configuration is kernel[groups, local_size] or "
                f"kernel[groups, local_size, stream_or_device], not kernel[{config_!r}]"
            )
        cached = self._configs.get(config_)
        if cached is not None:
            return cached
        groups = _dim3(config_[0], "groups")
        local_size = _dim3(config_[1], "local_size")
        stream = device = None
        if len(config_) == 3 and config_[2] is not None:
            stream, device = _stream_or_device(config_[2])
        launch = LaunchConfig(self, groups, local_size, device, stream)
        if len(self._configs) > 64:
            self._configs.clear()
        try:
            self._configs[config_] = launch
        except TypeError:  # an unhashable configuration (a list): just not cached
            pass
        return launch

    def forall(self, extent, device=None, local_size=None, stream=None):
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
        extents = (extent,) if isinstance(extent, (int, np.integer)) else tuple(extent)
        if not 1 <= len(extents) <= 3:
            raise ValueError(f"forall() extent must have 1 to 3 dimensions, not {extent!r}")
        if any(int(e) < 0 for e in extents):
            raise ValueError(f"forall() extent must not be negative: {extent!r}")
        if local_size is None:
            local = DEFAULT_LOCAL_SIZE[len(extents)]
        else:
            local = _dim3(local_size, "local_size")
        full = tuple(int(e) for e in extents) + (1,) * (3 - len(extents))
        groups = tuple(max(1, math.ceil(e / l)) if e else 0 for e, l in zip(full, local))
        if stream is not None:
            stream, stream_device = _stream_or_device(stream)
            device = device if device is not None else stream_device
        launch = LaunchConfig(self, groups, local, _resolve_device(device), stream)
        if key is not None:
            if len(self._configs) > 64:
                self._configs.clear()
            self._configs[key] = launch
        return launch

    # ------------------------------------------------------------ compilation

    def compile(self, argtypes, device=None, mode=None):
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
        argtypes = arguments.parse_argtypes(argtypes)
        device = None if device is None else _resolve_device(device)
        if mode is None:
            mode = self._mode(device)
        return self._compile(argtypes, mode, _nan_preserve(device))

    def _mode(self, device):
        narrow = self.options["narrow"]
        if device is None:
            return narrowing.Mode.for_device(_HostInfo, narrow)
        return narrowing.Mode.for_device(device.info, narrow)

    def _compile(self, argtypes, mode, nan_preserve=()):
        key = (argtypes, mode, nan_preserve)
        compiled = self._compiled.get(key)
        if compiled is None:
            with self._lock:
                compiled = self._compiled.get(key)
                if compiled is None:
                    compiled = compiler.compile_kernel(
                        self.py_func,
                        argtypes,
                        self._compile_options(),
                        mode,
                        nan_preserve=nan_preserve,
                    )
                    self._compiled[key] = compiled
        return compiled

    def _compile_options(self):
        return compiler.Options(
            fastmath=bool(self.options["fastmath"]),
            boundscheck=bool(self.options["boundscheck"]),
            error_model=self.options["error_model"],
            debug=bool(self.options["debug"]),
        )

    def _specialise(self, argtypes, device, wide_indices=False):
        mode = self._mode(device)
        if wide_indices:
            # An array past 32-bit indexing: this specialisation has 64-bit extents and strides.
            mode = dataclasses.replace(mode, index64=True)
        key = (argtypes, device, mode)
        spec = self._specialisations.get(key)
        if spec is None:
            compiled = self._compile(argtypes, mode, _nan_preserve(device))
            device.check_support(compiled)
            spec = Specialisation(compiled, device, _make_launcher(device, compiled))
            self._specialisations[key] = spec
            launchers = self._launchers.setdefault(device, [])
            launchers.insert(0, spec.launcher)
        return spec

    @property
    def specialisations(self):
        """The compiled kernels, by (argument types, narrowing mode)."""
        return {(argtypes, mode): k for (argtypes, mode, _), k in self._compiled.items()}

    # ------------------------------------------------------------ inspection

    def _lookup(self, args_or_types):
        if not args_or_types:
            return list(self._compiled.values())
        if all(isinstance(a, types.Type) for a in args_or_types):
            argtypes = tuple(args_or_types)
        else:
            argtypes = tuple(arguments.typeof_argument(a, i) for i, a in enumerate(args_or_types))
        return [self.compile(argtypes)]

    def inspect_kir(self, *args_or_types):
        """The KIR the front end built, as text.

        Parameters
        ----------
        *args_or_types
            Arguments (typed as a launch would) or Numba types of one
            specialisation, which is compiled if needed. Without them, the KIR
            of every specialisation compiled so far, by argument types.

        Returns
        -------
        str or dict
        """
        kernels = self._lookup(args_or_types)
        if args_or_types:
            return kernels[0].kir
        return {k.argtypes: k.kir for k in kernels}

    def inspect_spirv(self, *args_or_types):
        """The SPIR-V assembly of a specialisation (see ``inspect_kir`` for the arguments).

        Returns
        -------
        str or dict
        """
        kernels = self._lookup(args_or_types)
        if args_or_types:
            return kernels[0].disassemble()
        return {k.argtypes: k.disassemble() for k in kernels}

    def inspect_types(self, file=None):
        """Print the typed Numba IR of every specialisation, as ``numba``'s ``inspect_types``.

        Parameters
        ----------
        file : file-like, optional
            Where to write; standard output by default.
        """
        import sys

        file = sys.stdout if file is None else file
        for kernel in self._compiled.values():
            print(f"{self.__name__} {kernel.argtypes}", file=file)
            print("-" * 80, file=file)
            print(compiler.annotate(kernel.typed), file=file)
            print("=" * 80, file=file)

    def __repr__(self):
        return f"<numba_vulkan kernel {self.__name__}>"

    # ------------------------------------------------------------ slow path

    def _launch_slow(self, launch, args):
        """Type the arguments, specialise, copy NumPy arrays and launch (see the module doc)."""
        from . import runtime

        self.slow_path_count += 1
        device = launch.device if launch.device is not None else runtime.get_device()
        launch.check_limits(device)
        argtypes = []
        for position, arg in enumerate(args):
            if isinstance(arg, runtime.DeviceArray) and arg.device is not device:
                raise ValueError(
                    f"argument {position} of kernel {self.__name__!r} is a device array of "
                    f"{_device_name(arg.device)}, but the kernel is launched on "
                    f"{_device_name(device)}; copy it with copy_to_host() and to_device()"
                )
            argtypes.append(arguments.typeof_argument(arg, position))
        wide = any(arguments.needs_64bit_indices(a) for a in args if hasattr(a, "strides"))
        spec = self._specialise(tuple(argtypes), device, wide)

        # NumPy arrays travel to the device; the ones the kernel writes come back.
        device_args = list(args)
        copy_back = []
        for position, arg in enumerate(args):
            if isinstance(arg, np.ndarray):
                arguments.check_narrowed_array(arg, spec.compiled.mode, position, self.__name__)
                on_device = runtime.to_device(np.ascontiguousarray(arg), device=device)
                device_args[position] = on_device
                if spec.compiled.writes[position]:
                    copy_back.append((arg, on_device))
            elif isinstance(arg, (np.generic, int, float)):
                device_args[position] = arguments.scalar_for_launch(
                    arg, argtypes[position], spec.compiled.mode, position, self.__name__
                )
        device_args = tuple(device_args)

        if not spec.launcher.launch(launch.groups, launch.local_size, device_args):
            raise InternalCompilerError(
                f"the launcher of kernel {self.__name__!r} {spec.compiled.argtypes} rejected "
                f"the arguments it was made for: {[type(a).__name__ for a in device_args]}"
            )
        for host, on_device in copy_back:
            if host.flags.c_contiguous:
                on_device.copy_to_host(out=host)
            else:
                host[...] = on_device.copy_to_host()
        if config.SYNC and not copy_back:
            device.synchronize()


dispatcher_registry[target.Vulkan] = Dispatcher


class LaunchConfig:
    """A kernel with its grid: call it with the kernel's arguments to launch.

    Attributes
    ----------
    groups : tuple of int
        Workgroups along x, y, z.
    local_size : tuple of int
        Invocations per workgroup along x, y, z.
    device : Device or None
        The device, or None for the default device at the time of the call.
    stream : Stream or None
    """

    __slots__ = ("_checked", "device", "dispatcher", "groups", "local_size", "stream")

    def __init__(self, dispatcher, groups, local_size, device=None, stream=None):
        self.dispatcher = dispatcher
        self.groups = groups
        self.local_size = local_size
        self.device = device
        self.stream = stream
        self._checked = None

    def __call__(self, *args):
        # Fast path: the launchers already made for this device, newest first.
        device = self.device
        if device is None:
            device = _default_device()
        if device is not None:
            if self._checked is not device:
                self.check_limits(device)
            for launcher in self.dispatcher._launchers.get(device, ()):
                if launcher.launch(self.groups, self.local_size, args):
                    if config.SYNC:
                        device.synchronize()
                    return None
        return self.dispatcher._launch_slow(self, args)

    def check_limits(self, device):
        """Raise VulkanSupportError if the grid or workgroup exceeds ``device``'s limits."""
        info = device.info
        for axis, (n, limit) in enumerate(zip(self.local_size, info.max_local_size)):
            if n > limit:
                raise VulkanSupportError(
                    f"local size {self.local_size} exceeds the device's max_local_size "
                    f"{tuple(info.max_local_size)} along axis {axis} ({info.name})"
                )
        invocations = self.local_size[0] * self.local_size[1] * self.local_size[2]
        if invocations > info.max_local_invocations:
            raise VulkanSupportError(
                f"local size {self.local_size} has {invocations} invocations, more than the "
                f"device's max_local_invocations {info.max_local_invocations} ({info.name})"
            )
        for axis, (n, limit) in enumerate(zip(self.groups, info.max_groups)):
            if n > limit:
                raise VulkanSupportError(
                    f"{n} workgroups along axis {axis} exceed the device's max_groups "
                    f"{tuple(info.max_groups)} ({info.name}); splitting large grids is not "
                    "implemented yet"
                )
        self._checked = device

    def __repr__(self):
        return f"<LaunchConfig {self.dispatcher.__name__}[{self.groups}, {self.local_size}]>"


# ---------------------------------------------------------------- helpers


class _HostInfo:
    """DeviceInfo stand-in for compiling without a device: float64 kept."""

    float64 = True
    int64 = True


def _dim3(value, what):
    if isinstance(value, (int, np.integer)):
        dims = (int(value),)
    elif isinstance(value, tuple) and 1 <= len(value) <= 3:
        dims = tuple(value)
    else:
        raise TypeError(f"{what} must be an int or a tuple of 1 to 3 ints, not {value!r}")
    for d in dims:
        if not isinstance(d, (int, np.integer)) or isinstance(d, bool):
            raise TypeError(f"{what} must be an int or a tuple of 1 to 3 ints, not {value!r}")
        if d < 0 or (what == "local_size" and d < 1):
            raise ValueError(f"{what} must be positive, not {value!r}")
    dims = tuple(int(d) for d in dims)
    return dims + (1,) * (3 - len(dims))


def _stream_or_device(value):
    """(stream, device) for the third element of a launch configuration."""
    from . import runtime

    stream_cls = getattr(runtime, "Stream", None)
    if stream_cls is not None and isinstance(value, stream_cls):
        return value, value.device
    return None, _resolve_device(value)


def _nan_preserve(device):
    """The float widths whose signed zeros, infinities and NaNs the device can keep."""
    return () if device is None else tuple(device.info.nan_preserve)


def _resolve_device(which):
    if which is None:
        return None
    from . import runtime

    if isinstance(which, runtime.Device):
        return which
    return runtime.get_device(which)


def _default_device():
    """The default device (runtime.get_device(); looked up once, the launch path calls it)."""
    global _default_device
    from . import runtime

    _default_device = runtime.get_device
    return runtime.get_device()


def _device_name(device):
    info = getattr(device, "info", None)
    return f"device {getattr(info, 'index', '?')} ({getattr(info, 'name', device)})"


def _make_launcher(device, compiled):
    """The C++ launcher of ``compiled`` on ``device`` (interface C of the runtime)."""
    from . import _core

    # runtime.Device is, or wraps as ._core, the C++ device that loads kernels.
    core_device = getattr(device, "_core", device)
    kernel_core = core_device.load_kernel(compiled.words, compiled.push_size)
    return _core.Launcher(
        core_device,
        kernel_core,
        list(compiled.argspecs),
        compiled.param_size,
        compiled.params_in_buffer,
    )
