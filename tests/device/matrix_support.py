"""What the matrix-tile tests share (test_matrix.py, test_f_order.py): compiling kernels in
the matrix units' form on any device."""

from numba_vulkan import config, launchers, matrix_shapes


def units_form(monkeypatch):
    """For one test, kernels compile as on a device whose matrix units list every emulated
    configuration (OpTypeCooperativeMatrixKHR, the Vulkan memory model), even where the tests
    ask for emulation (config.MATRIX); SPIRV-Tools checks that form on any machine."""
    monkeypatch.setattr(config, "MATRIX", "")
    listed = tuple(s._replace(emulated=False) for s in matrix_shapes.EMULATED)
    controls = launchers.codegen_controls
    monkeypatch.setattr(launchers, "codegen_controls",
                        lambda device: controls(device)._replace(matrix_shapes=listed))  # fmt: skip
