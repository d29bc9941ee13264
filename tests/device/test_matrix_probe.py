"""The matrix units' self-test (runtime/matrix_probe.py): its probe kernels give NumPy's
result where tiles are right (here: emulated on lavapipe, the same kernels the matrix units
run on a device that lists the configuration), a fault is reported as "wrong", and a
configuration that is not exact takes every tile of the device off the units."""

import dataclasses
import re

import pytest

from numba_vulkan.errors import VulkanDriverFaultWarning
from numba_vulkan.matrix_shapes import MatrixShape
from numba_vulkan.runtime import matrix_probe

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]

SHAPES = [
    MatrixShape(16, 16, 16, "float16", "float16", "float32", "float32"),
    MatrixShape(16, 8, 8, "float16", "float16", "float16", "float16"),
    MatrixShape(16, 16, 32, "int8", "int8", "int32", "int32"),
    MatrixShape(16, 8, 32, "uint8", "uint8", "uint32", "uint32"),
    MatrixShape(16, 16, 16, "bfloat16", "bfloat16", "float32", "float32"),
]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_the_probe_passes_where_tiles_are_right(device, shape):
    assert matrix_probe.check(device, shape) == matrix_probe.EXACT


def test_a_fault_is_reported(device, monkeypatch):
    """A tile stored before its share is doubled (as a driver that lost the element-wise
    writes would give) is caught, with the element that differs."""
    faulty = matrix_probe._SOURCE.replace(
        "    for t in range(acc.length):\n        acc[t] = acc[t] + acc[t]\n", "")
    assert faulty != matrix_probe._SOURCE
    monkeypatch.setattr(matrix_probe, "_SOURCE", faulty)
    verdict = matrix_probe.check(device, SHAPES[0])
    assert re.fullmatch(r"wrong: \d+ of 256 elements of the row-major result, "
                        r"e\.g\. \[\d+, \d+\] = -?\d+\.0 for -?\d+\.0", verdict), verdict


def test_a_configuration_not_exact_emulates_every_tile(device):
    info = dataclasses.replace(device.info, matrix_shapes=tuple(SHAPES))
    exact = {str(s): matrix_probe.EXACT for s in SHAPES}
    assert matrix_probe.with_verdicts(info, exact).matrix_shapes == tuple(SHAPES)
    # bfloat16's configuration listed without the feature: emulated, not probed, no fault
    bf16 = MatrixShape(16, 8, 16, "bfloat16", "bfloat16", "float32", "float32", emulated=True)
    assert matrix_probe.run(_Listing(bf16)) == {str(bf16): matrix_probe.NOT_PROBED}
    kept = matrix_probe.with_verdicts(info, {**exact, str(bf16): matrix_probe.NOT_PROBED})
    assert kept.matrix_shapes == tuple(SHAPES)
    wrong = {**exact, str(SHAPES[2]): "wrong: 3 of 256 elements ..."}
    off = matrix_probe.with_verdicts(info, wrong)
    assert off.matrix_shapes == () and dict(off.matrix_selftest) == wrong
    with pytest.warns(VulkanDriverFaultWarning, match="16x16x32 int8 x int8 .* emulated"):
        matrix_probe.warn_failed(info, wrong)


class _Listing:
    """A device whose info lists `shapes` (all that matrix_probe.run reads of it)."""

    def __init__(self, *shapes):
        self.info = dataclasses.make_dataclass("Info", ["matrix_shapes"])(shapes)
