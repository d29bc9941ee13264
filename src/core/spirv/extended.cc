// kMath: GLSL.std.450 extended instructions, and OpIsNan/OpIsInf.
//
// Widths. GLSL.std.450 defines Floor, Ceil, Trunc, FAbs, FMin, FMax, Sqrt and
// Fma on 16-, 32- and 64-bit floats, but the transcendental functions (Exp,
// Log, Pow, Sin, Cos, Tan, Atan2, Tanh) only on 16- and 32-bit floats. A
// 64-bit transcendental is refused with kUnsupported naming the function; the
// front end computes those with its own math library (ARCHITECTURE.md #6).
//
// NaN. FMin/FMax return an undefined operand when one of them is NaN (the
// driver may pick either). Python's min/max and NumPy's minimum/fmin need a
// defined answer, so the front end builds those with comparisons and select
// when NaN matters; kMin/kMax here are the plain driver instructions.
//
// Bits. kBitCount is OpBitCount, kFindUMsb / kFindILsb GLSL.std.450's, all on
// 32-bit integers only (as Vulkan requires; the verifier checks it).
#include <spirv/unified1/GLSL.std.450.h>

#include "spirv/emitter.h"

namespace nvk::spirv {

namespace {

using kir::MathFn;
using kir::ScalarKind;

size_t Arity(MathFn fn) {
    switch (fn) {
        case MathFn::kMin: case MathFn::kMax: case MathFn::kPow: case MathFn::kAtan2: return 2;
        case MathFn::kFma: return 3;
        default: return 1;
    }
}

bool IsTranscendental(MathFn fn) {
    switch (fn) {
        case MathFn::kExp: case MathFn::kLog: case MathFn::kPow: case MathFn::kSin:
        case MathFn::kCos: case MathFn::kTan: case MathFn::kAtan2: case MathFn::kTanh:
            return true;
        default: return false;
    }
}

// The GLSL.std.450 instruction for `fn` on operands of kind `k`, or -1.
int GlslInstruction(MathFn fn, ScalarKind k) {
    bool f = kir::IsFloat(k), s = kir::IsSigned(k), i = kir::IsInteger(k);
    switch (fn) {
        case MathFn::kFloor: return f ? GLSLstd450Floor : -1;
        case MathFn::kCeil: return f ? GLSLstd450Ceil : -1;
        case MathFn::kTrunc: return f ? GLSLstd450Trunc : -1;
        case MathFn::kAbs: return f ? GLSLstd450FAbs : s ? GLSLstd450SAbs : -1;
        case MathFn::kMin:
            return f ? GLSLstd450FMin : s ? GLSLstd450SMin : i ? GLSLstd450UMin : -1;
        case MathFn::kMax:
            return f ? GLSLstd450FMax : s ? GLSLstd450SMax : i ? GLSLstd450UMax : -1;
        case MathFn::kSqrt: return f ? GLSLstd450Sqrt : -1;
        case MathFn::kInverseSqrt: return f ? GLSLstd450InverseSqrt : -1;
        case MathFn::kFma: return f ? GLSLstd450Fma : -1;
        case MathFn::kExp: return f ? GLSLstd450Exp : -1;
        case MathFn::kLog: return f ? GLSLstd450Log : -1;
        case MathFn::kPow: return f ? GLSLstd450Pow : -1;
        case MathFn::kSin: return f ? GLSLstd450Sin : -1;
        case MathFn::kCos: return f ? GLSLstd450Cos : -1;
        case MathFn::kTan: return f ? GLSLstd450Tan : -1;
        case MathFn::kAtan2: return f ? GLSLstd450Atan2 : -1;
        case MathFn::kTanh: return f ? GLSLstd450Tanh : -1;
        case MathFn::kFindUMsb: return i ? GLSLstd450FindUMsb : -1;
        case MathFn::kFindILsb: return i ? GLSLstd450FindILsb : -1;
        default: return -1;
    }
}

}  // namespace

util::Status Emitter::EmitMath(const kir::Inst& inst) {
    auto fn = static_cast<MathFn>(inst.imm);
    std::string fn_name = kir::MathFnName(fn);
    size_t arity = (fn == MathFn::kIsNan || fn == MathFn::kIsInf) ? 1 : Arity(fn);
    if (inst.operands.size() != arity) {
        return Error(util::Code::kInternal, inst,
                     fn_name + " takes " + std::to_string(arity) + " operand(s)");
    }
    std::vector<Id> args;
    for (kir::ValueId v : inst.operands) {
        NVK_ASSIGN_OR_RETURN(Id id, Value(v));
        args.push_back(id);
    }
    ScalarKind k = KindOf(inst.operands[0]);

    if (fn == MathFn::kIsNan || fn == MathFn::kIsInf) {
        if (!kir::IsFloat(k)) return Error(util::Code::kUnsupported, inst, fn_name + " on ints");
        spv::Op op = fn == MathFn::kIsNan ? spv::Op::OpIsNan : spv::Op::OpIsInf;
        Bind(inst, Append(op, b_.TypeBool(), args));
        return util::Status::Ok();
    }
    if (fn == MathFn::kBitCount) {
        if (kir::BitWidth(k) != 32 || !kir::IsInteger(k))
            return Error(util::Code::kUnsupported, inst, "bitcount of " + std::string(kir::ScalarName(k)));
        Bind(inst, Append(spv::Op::OpBitCount, ScalarType(k), args));
        return util::Status::Ok();
    }
    // |x| of an unsigned integer is x.
    if (fn == MathFn::kAbs && kir::IsInteger(k) && !kir::IsSigned(k)) {
        Bind(inst, args[0]);
        return util::Status::Ok();
    }
    // |x| of a signed integer: a select, not GLSL SAbs, which NVIDIA treats as
    // never negative (|MIN| must stay MIN, as in Numba; wrapping.cc).
    if (fn == MathFn::kAbs && kir::IsSigned(k)) {
        Bind(inst, WrappingAbs(k, args[0]));
        return util::Status::Ok();
    }
    if (k == ScalarKind::kF64 && IsTranscendental(fn)) {
        return Error(util::Code::kUnsupported, inst,
                     fn_name + " on f64: GLSL.std.450 defines it for 16/32-bit floats only");
    }
    int glsl = GlslInstruction(fn, k);
    if (glsl < 0) {
        return Error(util::Code::kUnsupported, inst,
                     fn_name + " is not defined on " + kir::ScalarName(k));
    }
    std::vector<Id> operands = {b_.GlslStd450(), static_cast<uint32_t>(glsl)};
    operands.insert(operands.end(), args.begin(), args.end());
    Bind(inst, Append(spv::Op::OpExtInst, ScalarType(k), operands));
    return util::Status::Ok();
}

}  // namespace nvk::spirv
