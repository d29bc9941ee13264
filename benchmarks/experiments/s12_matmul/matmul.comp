// The 16x16 tiled float32 matmul of benchmarks/bench_parallel.py (MATMUL), in GLSL, for
// s12_matmul_spirv.py. One source, variants chosen by macros (build.sh compiles each):
//
//   PRECISE      tmp is `precise`: its FMul and FAdd carry NoContraction (exact float
//                semantics, as numba_vulkan without fastmath); without it the driver may
//                contract a*b+c into an FMA (as NVVM does for numba.cuda)
//   VEC4_A       the A tile is `shared vec4 As[16][4]`: one 128-bit shared load per four
//                steps of k (numba.cuda's SASS: LDS.128)
//   UNROLL_SRC   the k loop written out, 16 (or 4 vec4) steps, no loop
//   UNROLL_HINT  the k loop kept, with [[unroll]] (OpLoopMerge Unroll)
//   OURS_INDEX   global memory reached as numba_vulkan does: 64-bit address arithmetic
//                (base + int64(index) * 4) with runtime strides, a select for Python's
//                negative indices on the column index, and the tiles zeroed before the
//                guarded loads (two stores); shared tiles flat float[256] with ty*16+j
//                (with VEC4_A, the A tile is the vec4 one)
//   ONE_STORE    with OURS_INDEX: each tile element stored once (the loaded value or 0), as
//                the plain variants do, instead of a 0 and then the guarded value
//
// Parameters (push constants, 40 bytes): A, B, C addresses (u64 at 0, 8, 16), n (i32 at
// 24), the row and column strides in elements (i32 at 28 and 32: n and 1), a pad.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(buffer_reference, std430, buffer_reference_align = 4) buffer Floats { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Float1 { float x; };

layout(push_constant) uniform Params {
    uint64_t A, B, C;
    int n, s0, s1, pad;
} p;

#define TPB 16

#ifdef PRECISE
#define ACC precise float
#else
#define ACC float
#endif

#ifdef VEC4_A
shared vec4 As[TPB][TPB / 4];
#define STORE_A(v) As[ty][tx >> 2][tx & 3] = (v)
#elif defined(OURS_INDEX)
shared float As[TPB * TPB];
#define STORE_A(v) As[ty * TPB + tx] = (v)
#define A_AT(j) As[ty * TPB + (j)]
#else
shared float As[TPB][TPB];
#define STORE_A(v) As[ty][tx] = (v)
#define A_AT(j) As[ty][j]
#endif

#ifdef OURS_INDEX
shared float Bs[TPB * TPB];
#define STORE_B(v) Bs[ty * TPB + tx] = (v)
#define B_AT(j) Bs[(j) * TPB + tx]
#else
shared float Bs[TPB][TPB];
#define STORE_B(v) Bs[ty][tx] = (v)
#define B_AT(j) Bs[j][tx]
#endif

#ifdef UNROLL_HINT
#define LOOP [[unroll]] for
#else
#define LOOP for
#endif

#ifdef OURS_INDEX
float load(uint64_t base, int row, int col) {
    int c = col < 0 ? col + p.n : col;  // Python's negative index (the column is not proven >= 0)
    int index = row * p.s0 + c * p.s1;
    return Float1(base + uint64_t(int64_t(index)) * 4ul).x;
}
#endif

void main() {
    int tx = int(gl_LocalInvocationID.x), ty = int(gl_LocalInvocationID.y);
    int x = int(gl_WorkGroupID.x) * TPB + tx;
    int y = int(gl_WorkGroupID.y) * TPB + ty;
    int n = p.n;
    int bpg = int(gl_NumWorkGroups.x);
    ACC tmp = 0.0;
    for (int i = 0; i < bpg; ++i) {
#if defined(OURS_INDEX) && defined(ONE_STORE)
        float a = 0.0, b = 0.0;
        if (y < n && tx + i * TPB < n) a = load(p.A, y, tx + i * TPB);
        if (x < n && ty + i * TPB < n) b = load(p.B, ty + i * TPB, x);
        STORE_A(a);
        STORE_B(b);
#elif defined(OURS_INDEX)
        STORE_A(0.0);
        STORE_B(0.0);
        if (y < n && tx + i * TPB < n) STORE_A(load(p.A, y, tx + i * TPB));
        if (x < n && ty + i * TPB < n) STORE_B(load(p.B, ty + i * TPB, x));
#else
        float a = 0.0, b = 0.0;
        if (y < n && tx + i * TPB < n) a = Floats(p.A).v[y * n + tx + i * TPB];
        if (x < n && ty + i * TPB < n) b = Floats(p.B).v[(ty + i * TPB) * n + x];
        STORE_A(a);
        STORE_B(b);
#endif
        barrier();
#if defined(VEC4_A) && defined(UNROLL_SRC)
#define STEP4(j4) { vec4 a4 = As[ty][j4]; \
        tmp += a4.x * B_AT(4 * j4); tmp += a4.y * B_AT(4 * j4 + 1); \
        tmp += a4.z * B_AT(4 * j4 + 2); tmp += a4.w * B_AT(4 * j4 + 3); }
        STEP4(0) STEP4(1) STEP4(2) STEP4(3)
#elif defined(VEC4_A)
        LOOP (int j4 = 0; j4 < TPB / 4; ++j4) {
            vec4 a4 = As[ty][j4];
            tmp += a4.x * B_AT(4 * j4);
            tmp += a4.y * B_AT(4 * j4 + 1);
            tmp += a4.z * B_AT(4 * j4 + 2);
            tmp += a4.w * B_AT(4 * j4 + 3);
        }
#elif defined(UNROLL_SRC)
#define STEP(j) tmp += A_AT(j) * B_AT(j);
        STEP(0) STEP(1) STEP(2) STEP(3) STEP(4) STEP(5) STEP(6) STEP(7)
        STEP(8) STEP(9) STEP(10) STEP(11) STEP(12) STEP(13) STEP(14) STEP(15)
#else
        LOOP (int j = 0; j < TPB; ++j) {
            tmp += A_AT(j) * B_AT(j);
        }
#endif
        barrier();
    }
#ifdef OURS_INDEX
    if (y < n && x < n) Float1(p.C + uint64_t(int64_t(y * p.s0 + x * p.s1)) * 4ul).x = tmp;
#else
    if (y < n && x < n) Floats(p.C).v[y * n + x] = tmp;
#endif
}
