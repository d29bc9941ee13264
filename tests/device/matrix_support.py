"""What the matrix-tile tests share (test_matrix.py, test_f_order.py): compiling kernels in
the matrix units' form on any device, and a C-typed specialisation's launcher."""

import numpy as np

import numba_vulkan as nv
from numba_vulkan import config, launchers, matrix_shapes


def units_form(monkeypatch, bfloat16=True):
    """For one test, kernels compile as on a device whose matrix units list every emulated
    configuration (OpTypeCooperativeMatrixKHR, the Vulkan memory model), even where the tests
    ask for emulation (config.MATRIX); SPIRV-Tools checks that form on any machine. With
    `bfloat16` the device has shaderBFloat16CooperativeMatrix, so its bfloat16 configurations
    are on the units too; without it they are listed as emulated (matrix_shapes.from_device)."""
    monkeypatch.setattr(config, "MATRIX", "")
    listed = tuple(s._replace(emulated=s.a == "bfloat16" and not bfloat16)
                   for s in matrix_shapes.EMULATED)
    controls = launchers.codegen_controls
    monkeypatch.setattr(launchers, "codegen_controls",
                        lambda device: controls(device)._replace(matrix_shapes=listed))  # fmt: skip


def c_copy_launcher():
    """A fresh 2-d copy kernel launched once on C-contiguous 3 x 4 float32 device arrays:
    (its specialisation's fast launcher, the source x, the destination y)."""

    @nv.jit
    def copy(a, b):
        i = nv.global_id(0)
        if i < a.shape[0]:
            for j in range(a.shape[1]):
                b[i, j] = a[i, j]

    x = nv.to_device(np.arange(12, dtype=np.float32).reshape(3, 4))
    y = nv.device_array((3, 4), np.float32)
    copy[1, 4](x, y)
    (spec,) = copy._specialisations.values()
    return spec.launcher, x, y
