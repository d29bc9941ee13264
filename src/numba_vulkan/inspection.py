"""What a kernel was compiled to: KIR, SPIR-V, Numba's typed IR, and the driver's figures.

The Dispatcher's inspection methods (docs/kernels.md, "Seeing what was generated"),
kept apart from compilation and launch. They read the dispatcher's ``_compiled``
specialisations and call its ``compile``.
"""

from __future__ import annotations

import sys
from typing import Any, NoReturn, TextIO

from numba.core import types
from numba.core.typing.templates import Signature

from . import arguments
from .errors import VulkanLoaderError, VulkanSupportError
from .launch import _resolve_device
from .runtime import device_list
from .runtime.device_info import DeviceSpec, Dim3Like
from .typing import pipeline


def _launch_device():
    """The device a launch now would compile for (its limits bound ids, its verdicts choose
    forms), so that inspection shows the code that runs; None where there is none (the code
    then assumes nothing of a device)."""
    try:
        return device_list.get_device()
    except (VulkanSupportError, VulkanLoaderError):
        return None


class Inspection:
    """The ``inspect_*`` methods of :class:`numba_vulkan.dispatcher.Dispatcher`."""

    @staticmethod
    def _argtypes(args_or_types):
        """Numba types given as such, or of arguments as a launch would type them."""
        if all(isinstance(a, types.Type) for a in args_or_types):
            return tuple(args_or_types)
        return tuple(arguments.typeof_argument(a, i) for i, a in enumerate(args_or_types))

    @staticmethod
    def _signature_given(args_or_types):
        """numba.cuda's form ``inspect_asm(sig)``: one signature (a tuple of Numba types, a
        Numba Signature or a signature string) as the argument types; else unchanged."""
        if len(args_or_types) != 1:
            return args_or_types
        (sig,) = args_or_types
        if isinstance(sig, (str, Signature)):
            return arguments.parse_argtypes(sig) if isinstance(sig, str) else tuple(sig.args)
        if isinstance(sig, (tuple, list)) and sig and all(isinstance(t, types.Type) for t in sig):
            return tuple(sig)
        return args_or_types

    def _lookup(self, args_or_types):
        if not args_or_types:
            return list(self._compiled.values())
        argtypes = self._argtypes(self._signature_given(args_or_types))
        return [self.compile(argtypes, device=_launch_device())]

    def inspect_kir(self, *args_or_types: Any, narrowed: bool = False) -> str | dict[Any, str]:
        """The KIR the front end built, as text.

        Parameters
        ----------
        *args_or_types
            Arguments (typed as a launch would) or Numba types of one
            specialisation, which is compiled if needed, as a launch on the current
            device would compile it. Without them, the KIR of every specialisation
            compiled so far, by argument types.
        narrowed : bool
            The KIR after loop unrolling and integer narrowing instead (64-bit integer ops
            computed in 32 bits where a range analysis proves it exact; see
            docs/narrowing.md).

        Returns
        -------
        str or dict
        """
        kernels = self._lookup(args_or_types)
        pick = (lambda k: k.kir_narrowed) if narrowed else (lambda k: k.kir)
        if args_or_types:
            return pick(kernels[0])
        return {k.argtypes: pick(k) for k in kernels}

    def inspect_spirv(self, *args_or_types: Any) -> str | dict[Any, str]:
        """The SPIR-V assembly of a specialisation (see ``inspect_kir`` for the arguments).

        Returns
        -------
        str or dict
        """
        kernels = self._lookup(args_or_types)
        if args_or_types:
            return kernels[0].disassemble()
        return {k.argtypes: k.disassemble() for k in kernels}

    def inspect_asm(self, *args_or_types: Any, signature: Any = None) -> str | dict[Any, str]:
        """numba.cuda's name for the generated code: here the SPIR-V assembly
        (``inspect_spirv``); the driver's own machine code is ``inspect_pipeline``'s.
        ``signature`` (numba.cuda's keyword) names the specialisation as its argument types.

        Returns
        -------
        str or dict
        """
        if signature is not None:
            args_or_types = (signature,)
        return self.inspect_spirv(*args_or_types)

    def inspect_llvm(self, *args_or_types: Any) -> NoReturn:
        """numba.cuda's LLVM IR: numba_vulkan compiles without LLVM (Numba's typed IR becomes
        KIR, then SPIR-V), so there is none; raises NotImplementedError naming what exists."""
        raise NotImplementedError(
            "numba_vulkan kernels have no LLVM IR (the compiler goes from Numba's typed IR to "
            "KIR and SPIR-V): see inspect_kir(), inspect_spirv() / inspect_asm(), "
            "inspect_pipeline() and inspect_types()"
        )

    def inspect_pipeline(self, *args_or_types: Any, local_size: Dim3Like,
                         device: DeviceSpec = None,
                         representations: bool = False) -> dict[str, Any]:
        """What the device's driver reports about the pipeline it makes of one
        specialisation for one workgroup size: registers per invocation, code
        size and whatever else the driver counts (VK_KHR_pipeline_executable_properties;
        names and meanings are the driver's). A diagnostic for tuning kernels.

        Parameters
        ----------
        *args_or_types
            Arguments (typed as a launch would) or Numba types of the specialisation;
            it is compiled for ``device`` as a launch there would compile it.
        local_size : int or tuple of int
            The workgroup size (the pipeline depends on it).
        device : Device, int or str, optional
            The device (default: the current one).
        representations : bool
            Also the driver's internal representations of the compiled code, where
            it gives any (bytes; text for most).

        Returns
        -------
        dict
            Statistic name -> value (int or float), in the driver's order; with
            ``representations``, ``{"statistics": that, "representations": {name: bytes}}``.

        Raises
        ------
        VulkanSupportError
            The driver reports no statistics (Mesa 22's lavapipe, for one).
        """
        if not args_or_types:
            raise TypeError("inspect_pipeline needs the arguments or types of a specialisation")
        device = _resolve_device(device) or device_list.get_device()
        kernel = self.compile(self._argtypes(args_or_types), device=device)
        loaded = device._core.load_kernel(kernel.words, kernel.push_size)
        stats, texts = loaded.statistics(local_size, representations)
        out = {name: value for _, name, _, value in stats}
        if representations:
            out = {"statistics": out,
                   "representations": {name: text for _, name, _, text in texts}}
        return out

    def inspect_types(self, file: TextIO | None = None) -> None:
        """Print the typed Numba IR of every specialisation, as ``numba``'s ``inspect_types``.

        Parameters
        ----------
        file : file-like, optional
            Where to write; standard output by default.
        """
        file = sys.stdout if file is None else file
        for kernel in self._compiled.values():
            print(f"{self.__name__} {kernel.argtypes}", file=file)
            print("-" * 80, file=file)
            if kernel.typed is None:
                print("(loaded from the disk cache: no Numba typing to show)", file=file)
            else:
                print(pipeline.annotate(kernel.typed), file=file)
            print("=" * 80, file=file)
