"""CompiledKernel: what compiling a kernel produces (API.md section 1).

A CompiledKernel is everything the runtime needs to run one specialisation of
a kernel on any device: the SPIR-V words, the layout of its parameter block
and what it requires of the device. It does not depend on a device; the
runtime creates pipelines from it per device.
"""

import numpy as np


class CompiledKernel:
    """One compiled specialisation of a kernel.

    Attributes
    ----------
    name : str
        The kernel's Python name.
    words : numpy.ndarray
        The SPIR-V module, uint32 words.
    entry : str
        Name of the GLCompute entry point.
    param_size : int
        Bytes of the parameter block (array addresses, extents, strides, scalars).
    params_in_buffer : bool
        True when the block is larger than the push-constant limit: the only
        push constant is then the 64-bit address of a parameter buffer.
    push_size : int
        Bytes of push constants the module declares.
    capabilities : tuple of str
        What the device must support ("float64", "int64", "int8", "storage8", ...).
    shared_bytes : int
        Bytes of workgroup-shared memory the kernel's fixed-size shared arrays use.
    dynamic_shared_itemsize : int
        Bytes per element of its dynamic shared array (``shared.array(0, dtype)``), whose
        length the launch sets from its shared-memory bytes; 0 when it has none.
    local_size : tuple of int or None
        A workgroup size fixed by the kernel, or None (chosen at launch).
    argtypes : tuple
        Numba types of the arguments this specialisation was compiled for.
    args : list of numba_vulkan._core.ArgDecl
        The arguments and hidden parameters as compiled (kir/abi.h): each one's
        kinds, slot and offsets in the parameter block. The launcher writes the
        block from them and the argument checks read them.
    arguments : tuple of numba_vulkan._core.ArgDecl
        The declarations of ``args`` that are no hidden parameters: what the launcher
        takes per launch, packed arguments flattened (one per scalar or array).
    by_position : tuple of tuples
        Per kernel argument, its declarations in ``arguments`` (several for a tuple
        or complex argument: frontend/packed.py).
    writes : tuple of bool
        Per kernel argument, whether the kernel may store into that array, or into
        one of the arrays of a tuple argument (from ``args``).
    mode : numba_vulkan.narrowing.Mode
        How 64-bit types were narrowed.
    kir : str
        The KIR text the front end built (CFG form).
    guarded_loops : int
        The loops counted for the device's loop cap (kir/loop_guard.h): 0 on drivers
        without one, and for kernels without loops.
    kir_narrowed : str
        The KIR after integer narrowing (docs/narrowing.md) and, on lavapipe, hiding
        float zeros (docs/codegen.md): the form the structurizer and the emitter see.
    hidden : list
        ``(name, source)`` of each hidden array (frontend/hidden.py): global arrays
        whose address, extents and strides are hidden parameters in ``args``;
        ``source`` is ``("constant", frozen ndarray)``, ``("device", DeviceArray)`` or,
        last, ``("status", None)``: the device's status buffer of a kernel that raises
        or prints (runtime/reports.py). hidden_args.py gives the launcher their values.
    sites : tuple
        Where the kernel raises and prints (numba_vulkan/sites.py).
    unbound : list
        Descriptor bindings the kernel does not use. Always empty: arrays are
        passed as buffer device addresses, so kernels have no bindings.
    """

    def __init__(
        self, *, name, core, argtypes, mode, typed=None, hidden=(), sites=(),
        barrier_guards=(),
    ):
        self.name = name
        self.words = np.ascontiguousarray(core.words, dtype=np.uint32)
        self.entry = core.entry
        self.param_size = int(core.param_size)
        self.params_in_buffer = bool(core.params_in_buffer)
        self.push_size = int(core.push_size)
        self.capabilities = tuple(core.capabilities)
        self.shared_bytes = int(core.shared_bytes)
        self.dynamic_shared_itemsize = int(getattr(core, "dynamic_shared_itemsize", 0))
        self.local_size = None
        self.argtypes = tuple(argtypes)
        self.args = list(core.args)
        # What the C++ launcher takes: one declaration per scalar or array, packed
        # arguments (tuples, complex: frontend/packed.py) flattened.
        self.arguments = tuple(a for a in self.args if a.kind != "hidden")
        self.by_position = _by_position(self.arguments, self.argtypes)  # per kernel argument
        self.writes = tuple(any(a.written for a in group) for group in self.by_position)
        self.mode = mode
        self.guarded_loops = int(getattr(core, "guarded_loops", 0))
        # elements loops keep in registers (spirv/loop_promotion.h)
        self.promoted_elements = int(getattr(core, "promoted_elements", 0))
        self.hidden = list(hidden)
        # Barriers under id comparisons: each launch checks them (frontend/divergence.py).
        self.barrier_guards = tuple(barrier_guards)
        self.hidden_on_device = {}  # device -> the hidden arrays there (hidden_args.py)
        self.sites = tuple(sites)
        if self.sites:
            from . import sites as _sites

            _sites.register(self.sites)  # the host decodes what the kernel records
        self.kir = core.kir
        self.kir_narrowed = core.kir_narrowed
        self.unbound = []
        self.typed = typed  # the Numba typing result (for inspect_types); None from the cache
        self.from_cache = False  # loaded from the disk cache (cache=True)
        self._spirv = None

    @property
    def group_loop(self):
        """Whether the kernel runs its workgroups along x as a loop (frontend/grid.py): it
        declares the loop's hidden parameter, which the launcher writes."""
        from .frontend.grid import STRIDE

        return any(a.kind == "hidden" and a.name == STRIDE + ".x" for a in self.args)

    @property
    def uses_matrix_units(self):
        """Whether the kernel's tiles are the device's cooperative matrices (it declares
        SPIR-V's CooperativeMatrixKHR capability): their loads and stores depend on the
        layout the arguments were typed with (frontend/matrix.py), which the launcher then
        checks of every device array (launchers.make_launcher)."""
        w = self.words
        capability = (w[:-1] == 0x00020011) & (w[1:] == 6022)  # OpCapability CooperativeMatrixKHR
        return bool(capability.any())

    # Fields a disk cache entry holds (runtime/../cache.py): everything but the typing.
    _RECORD = ("name", "entry", "param_size", "params_in_buffer", "push_size", "capabilities", "args",
               "shared_bytes", "dynamic_shared_itemsize", "local_size", "argtypes", "mode",
               "guarded_loops", "kir", "kir_narrowed", "hidden", "sites", "barrier_guards")  # fmt: skip

    def to_record(self):
        """A picklable dict of the kernel, SPIR-V words as bytes (for the disk cache)."""
        from .typing import pipeline

        if any(source[0] == "device" for _, source in self.hidden):
            # cache.py refuses such kernels first (their key names a device array)
            raise ValueError("a kernel that uses a global device array cannot be cached")
        record = {name: getattr(self, name) for name in self._RECORD}
        record["words"] = self.words.tobytes()
        uses = self.__dict__.get("uses_float64")
        if uses is None:
            uses = self.typed is not None and pipeline.uses_float64(self.typed)
        record["uses_float64"] = bool(uses)
        return record

    @classmethod
    def from_record(cls, record):
        """The kernel a disk cache entry describes, without Numba's typing (typed is None)."""
        import types as pytypes

        core = pytypes.SimpleNamespace(
            words=np.frombuffer(record["words"], dtype=np.uint32),
            **{k: record[k] for k in ("entry", "param_size", "params_in_buffer", "push_size",
                                      "capabilities", "shared_bytes", "dynamic_shared_itemsize",
                                      "args", "guarded_loops", "kir", "kir_narrowed")},
        )  # fmt: skip
        kernel = cls(name=record["name"], core=core, argtypes=record["argtypes"],
                     mode=record["mode"],
                     hidden=record.get("hidden", ()), sites=record.get("sites", ()),
                     barrier_guards=record.get("barrier_guards", ()))  # fmt: skip
        kernel.local_size = record["local_size"]
        kernel.uses_float64 = record["uses_float64"]
        kernel.from_cache = True
        return kernel

    def disassemble(self):
        """The SPIR-V module as assembly text.

        Returns
        -------
        str
        """
        if self._spirv is None:
            from . import _core

            self._spirv = _core.disassemble(self.words)
        return self._spirv

    @property
    def spirv(self):
        """The SPIR-V assembly text (same as ``disassemble()``)."""
        return self.disassemble()

    def __repr__(self):
        args = ", ".join(str(t) for t in self.argtypes)
        return (
            f"<CompiledKernel {self.name}({args}): {len(self.words)} words, "
            f"{self.param_size} parameter bytes>"
        )


def _by_position(arguments, argtypes):
    """Split the flat declarations `arguments` per kernel argument (argtypes)."""
    from .packed_args import flat_count

    groups, start = [], 0
    for ty in argtypes:
        n = flat_count(ty)
        groups.append(tuple(arguments[start:start + n]))
        start += n
    if start != len(arguments):
        raise AssertionError(
            f"{len(arguments)} argument declarations for argument types {argtypes}"
        )  # a front-end bug: the declarations and the types must agree
    return tuple(groups)
