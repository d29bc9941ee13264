"""The cooperative-matrix configurations a device accepts, and the emulated ones.

A configuration is one multiply-accumulate ``result = a @ b + c`` the device's matrix
units do for a subgroup: M x K times K x N plus M x N, with the element type of each
operand (VkCooperativeMatrixPropertiesKHR). Where the device has no
``VK_KHR_cooperative_matrix`` (lavapipe, older GPUs), kernels get an exact emulation over
the subgroup, and accept the configurations of ``EMULATED``: those NVIDIA's Hopper
driver lists, so that a kernel tested on lavapipe runs unchanged there.
"""

from __future__ import annotations

import typing


class MatrixShape(typing.NamedTuple):
    """One configuration: ``m x k`` times ``k x n`` plus ``m x n``, element types by name."""

    m: int
    n: int
    k: int
    a: str
    b: str
    c: str
    result: str
    emulated: bool = False

    def __str__(self):
        how = ", emulated" if self.emulated else ""
        return f"{self.m}x{self.n}x{self.k} {self.a} x {self.b} + {self.c} -> {self.result}{how}"


def _emulated():
    out = []
    for m, n, k in ((16, 16, 16), (16, 8, 16), (16, 8, 8)):
        out.append(MatrixShape(m, n, k, "float16", "float16", "float32", "float32", True))
        out.append(MatrixShape(m, n, k, "float16", "float16", "float16", "float16", True))
        out.append(MatrixShape(m, n, k, "bfloat16", "bfloat16", "float32", "float32", True))
    for m, n, k in ((16, 16, 32), (16, 8, 32)):
        for t in ("int8", "uint8"):
            for acc in ("int32", "uint32"):
                out.append(MatrixShape(m, n, k, t, t, acc, acc, True))
    return tuple(out)


#: What kernels accept on a device without cooperative matrices.
EMULATED = _emulated()

#: Vulkan's VkComponentTypeKHR values, by dtype name.
COMPONENT_TYPES = {
    0: "float16", 1: "float32", 2: "float64", 3: "int8", 4: "int16", 5: "int32", 6: "int64",
    7: "uint8", 8: "uint16", 9: "uint32", 10: "uint64", 1000141000: "bfloat16",
}


def from_device(raw, bfloat16=False):
    """MatrixShapes from the runtime's (m, n, k, a, b, c, result, scope) tuples: the
    subgroup-scope ones whose component types this library knows. A bfloat16 one is
    marked emulated unless `bfloat16` (the device's shaderBFloat16CooperativeMatrix is on):
    a driver may list it without letting shaders declare such tiles."""
    out = []
    for m, n, k, a, b, c, r, scope in raw:
        names = [COMPONENT_TYPES.get(t) for t in (a, b, c, r)]
        if scope == 3 and None not in names:  # VK_SCOPE_SUBGROUP_KHR
            out.append(MatrixShape(m, n, k, *names, emulated="bfloat16" in names and not bfloat16))
    return tuple(out)


def on_units(shapes, use, rows, cols, dtype):
    """Whether a configuration of `shapes` the device's matrix units do (not emulated) has
    a tile of that use, shape and dtype (``tile_accepted``)."""
    return tile_accepted([s for s in shapes if not s.emulated], use, rows, cols, dtype)


def accepted(shapes, m, n, k, a, b, c):
    """Whether one of `shapes` is the multiply-accumulate m x n x k of those types."""
    return any((s.m, s.n, s.k, s.a, s.b, s.c) == (m, n, k, a, b, c) for s in shapes)


def tile_accepted(shapes, use, rows, cols, dtype):
    """Whether some configuration of `shapes` has a tile of that use ('a': M x K of A's
    type, 'b': K x N of B's, 'acc': M x N of C's or the result's), shape and dtype."""
    for s in shapes:
        if use == "a" and (s.m, s.k, s.a) == (rows, cols, dtype):
            return True
        if use == "b" and (s.k, s.n, s.b) == (rows, cols, dtype):
            return True
        if use == "acc" and (s.m, s.n) == (rows, cols) and dtype in (s.c, s.result):
            return True
    return False


def describe(shapes):
    """The configurations as lines, for an error message."""
    return "\n".join(f"  {s}" for s in shapes) or "  (none)"
