"""Compiling without a device: the _core.compile bindings and kernel.compile()."""

import os

import numpy as np
import pytest
from numba.core import types

import numba_vulkan as nv
from numba_vulkan import _core, config, narrowing
from numba_vulkan.errors import InternalCompilerError, SpirvCodegenError

K = _core.Kind


def double_module():
    """out[i] = 2 * i for i < n, built by hand through the KIR builder."""
    m = _core.KirModule("double")
    p_addr = m.add_param("out.addr", K.u64)
    p_n = m.add_param("n", K.i32)
    b = _core.KirBuilder(m)
    entry, body, done = b.create_block("entry"), b.create_block("body"), b.create_block("done")
    b.set_block(entry)
    addr = b.param(p_addr)
    n = b.param(p_n)
    gid = b.convert(K.i32, b.builtin(_core.Builtin.global_id, 0))
    b.condbr(b.compare(_core.Op.lt, gid, n), body, done)
    b.set_block(body)
    b.store(b.elemptr(K.i32, addr, gid), b.binary(_core.Op.mul, gid, b.const_int(K.i32, 2)))
    b.br(done)
    b.set_block(done)
    b.ret()
    return m


def test_core_compile_hand_built_module():
    module = double_module()
    before = str(module)
    ck = _core.compile(module)
    assert isinstance(ck.words, np.ndarray) and ck.words.dtype == np.uint32
    assert ck.words[0] == 0x07230203  # the SPIR-V magic number
    assert ck.entry == "main"
    assert ck.param_size == 16 and ck.push_size == 16 and not ck.params_in_buffer
    assert ck.kir == before  # the KIR as the front end built it
    assert str(module) == before  # compile copies; the caller's module is intact
    assert isinstance(ck.capabilities, list)
    _core.validate(ck.words)
    text = _core.disassemble(ck.words)
    assert "OpEntryPoint GLCompute" in text and "PhysicalStorageBuffer" in text


def test_core_compile_params_in_buffer():
    ck = _core.compile(double_module(), max_push_bytes=8)
    assert ck.params_in_buffer and ck.push_size == 8 and ck.param_size == 16
    _core.validate(ck.words)


def test_core_compile_without_optimiser():
    ck = _core.compile(double_module(), optimize=False, fastmath=True)
    _core.validate(ck.words)


def test_core_compile_hides_float_zeros_where_asked():
    """hide_float_zeros (lavapipe): float(gid) / 0.0 reads its zero, and the conversion's
    disguise, from a hidden parameter 'float.zero' after the arguments; fastmath and the
    default leave the module alone."""

    def module():
        m = _core.KirModule("div0")
        p_addr = m.add_array_arg("out", "f", 4, K.f32, K.f32, 1, K.i32)
        b = _core.KirBuilder(m)
        b.set_block(b.create_block("entry"))
        gid = b.convert(K.i32, b.builtin(_core.Builtin.global_id, 0))
        q = b.binary(_core.Op.div, b.convert(K.f32, gid), b.const_float(K.f32, 0.0))
        b.store(b.elemptr(K.f32, b.param(p_addr), gid), q)
        b.ret()
        return m

    plain = _core.compile(module())
    assert [a.name for a in plain.args] == ["out"] and plain.param_size == 16
    hidden = _core.compile(module(), hide_float_zeros=True)
    assert [(a.kind, a.name, a.offset) for a in hidden.args] == [
        ("array", "out", 0), ("hidden", _core.FLOAT_ZERO_PARAM, 16)
    ]
    assert hidden.param_size == 24
    assert "param 3 : u32" in hidden.kir_narrowed and " or " in hidden.kir_narrowed
    assert [a.name for a in _core.compile(module(), hide_float_zeros=True, fastmath=True).args] == ["out"]


def test_core_compile_rejects_a_broken_module():
    m = _core.KirModule("broken")
    b = _core.KirBuilder(m)
    b.set_block(b.create_block("entry"))  # no terminator
    with pytest.raises(InternalCompilerError):
        _core.compile(m)


def test_validate_rejects_garbage():
    with pytest.raises(SpirvCodegenError):
        _core.validate(np.array([0x07230203, 0x00010000, 0, 5, 0, 1, 2, 3], dtype=np.uint32))


# ---------------------------------------------------------------- kernel.compile


@nv.jit
def saxpy(a, x, y, out):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = a * x[i] + y[i]


ARGTYPES = (types.float32,) + (types.Array(types.float32, 1, "C"),) * 3


def test_compile_saxpy_to_validated_spirv():
    kernel = saxpy.compile(ARGTYPES)
    _core.validate(kernel.words)
    assert kernel.entry == "main"
    assert kernel.argtypes == ARGTYPES
    assert [a.kind for a in kernel.arguments] == ["scalar", "array", "array", "array"]
    assert kernel.arguments[0].type == _core.Kind.f32
    assert kernel.writes == (False, False, False, True)
    assert kernel.unbound == [] and kernel.local_size is None
    assert kernel.param_size > 0 and kernel.push_size in (kernel.param_size, 8)
    assert "OpEntryPoint GLCompute" in kernel.disassemble()
    assert kernel.kir.strip()
    # Cached: the same specialisation is not compiled twice.
    assert saxpy.compile(ARGTYPES) is kernel
    assert saxpy.compile("void(float32, float32[::1], float32[::1], float32[::1])") is kernel


def test_compile_modes_are_separate_specialisations():
    narrow = saxpy.compile(ARGTYPES, mode=narrowing.Mode(ints=True, floats=False))
    wide = saxpy.compile(ARGTYPES, mode=narrowing.Mode(ints=False, floats=False))
    assert narrow is not wide
    _core.validate(wide.words)


def test_inspect_without_device():
    assert saxpy.inspect_kir(*ARGTYPES) == saxpy.compile(ARGTYPES).kir
    assert "OpEntryPoint" in saxpy.inspect_spirv(*ARGTYPES)


def test_dump_writes_one_file_per_stage(tmp_path, monkeypatch):
    monkeypatch.setattr(config, "DUMP", "kir,spirv")
    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path))

    @nv.jit
    def dumped(out):
        out[0] = 1

    dumped.compile((types.Array(types.int32, 1, "C"),))
    files = sorted(os.listdir(tmp_path / "nvk_dump"))
    assert [f.split(".")[-1] for f in files] == ["kir", "spvasm"]
    assert all(f.startswith("dumped.") for f in files)
    assert "OpEntryPoint" in (tmp_path / "nvk_dump" / files[1]).read_text()


def test_unsupported_construct_is_a_vulkan_unsupported_error():
    @nv.jit
    def uses_a_list(out):
        values = [1, 2, 3]
        out[0] = values[0]

    with pytest.raises(nv.VulkanUnsupportedError):
        uses_a_list.compile((types.Array(types.int64, 1, "C"),))
