/* The float32 division sequence of src/core/kir/float_division.cc, checked on the CPU
   (C's fmaf rounds once, as the device's Fma where CodegenControls.fused_fma holds).

     cc -O2 -ffp-contract=off -o /tmp/div32 tests/fuzz/div32_exhaustive.c -lm && /tmp/div32

   y0 is any float within K ulps of 1/b (the driver's reciprocal; Vulkan allows 2.5 ulp);
   y = y0 + y0 (1 - b y0) (two fmas); q0 = a y; r0 = a - b q0; q1 = q0 + r0 y;
   r1 = a - b q1; q = q1 + r1 y (each fma rounded once).

   The quotient depends on y0 only through y, and on a and b only through their
   mantissas and signs inside the safe range (exponents scale every step exactly), so:
   1. for every mantissa of b (2^23), the set of y that y0 within K ulps of RN(1/b) gives;
      where that is RN(1/b) alone, the argument in float_division.h (Markstein's theorem)
      proves every a correct;
   2. for the few b where some y0 gives another y, every mantissa of a (2^23) is checked
      with each such y;
   3. random pairs over the whole safe range (every exponent allowed there): the result
      against the float64 quotient rounded once, and every intermediate normal or zero
      (a device that flushes float32 subnormals computes the same);
   4. the safe-range test itself: no pair outside it is taken as inside (random bits). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define K 8 /* ulps of y0 around RN(1/b) tried in 1. and 3. (Vulkan: 2.5) */
/* Mantissas of b from here on go the float64 way: with M_b = 2 - 2^-23 (all ones) even
   the correctly rounded y0 refines to y = 0.5 (not RN(1/b)), and q is then 1 ulp off for
   a = 1. Compile with -DMB_LIMIT=0x800000 to see those failures. */
#ifndef MB_LIMIT
#define MB_LIMIT 0x7ffe00u
#endif

static float f_of(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t u_of(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

static float refine(float b, float y0) {
    float e = fmaf(-b, y0, 1.0f);
    return fmaf(e, y0, y0);
}

static int bad_intermediate(float v) { /* neither zero nor a finite normal */
    return v != 0.0f && (fpclassify(v) != FP_NORMAL);
}

static float quotient(float a, float b, float y, int *odd) {
    float q0 = a * y;
    float r0 = fmaf(-b, q0, a);
    float q1 = fmaf(r0, y, q0);
    float r1 = fmaf(-b, q1, a);
    float q = fmaf(r1, y, q1);
    if (odd) *odd |= bad_intermediate(q0) | bad_intermediate(r0) | bad_intermediate(q1) |
                     bad_intermediate(r1) | bad_intermediate(q);
    return q;
}

static float reference(float a, float b) { return (float)((double)a / (double)b); }

/* The safe range, on the biased exponents (float_division.h). The pass tests a subset of it
   by float comparisons (|q0| standing for the exponents' difference), so this covers it. */
static int safe(float a, float b) {
    uint32_t ua = u_of(a), ub = u_of(b);
    uint32_t ea = (ua >> 23) & 0xff, eb = (ub >> 23) & 0xff;
    int b_ok = eb - 2u <= 250u &&                /* |b| in [2^-125, 2^126) */
               (ub & 0x7fffffu) < MB_LIMIT;      /* and its mantissa below 2 - 2^-14 */
    int a_zero = (ua << 1) == 0;
    int a_ok = ea - 48u <= 206u;                 /* |a| in [2^-79, 2^128) */
    int d_ok = ea - eb + 124u <= 249u;           /* ea - eb in [-124, 125] */
    return b_ok && (a_zero || (a_ok && d_ok));
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t next(void) {
    rng_state ^= rng_state << 13; rng_state ^= rng_state >> 7; rng_state ^= rng_state << 17;
    return rng_state;
}

static float neighbour(float y, int k) { return f_of(u_of(y) + (uint32_t)k); }

int main(int argc, char **argv) {
    long long samples = argc > 1 ? atoll(argv[1]) : 100000000LL;
    long long special = 0, checked = 0, wrong = 0;
    /* 1 and 2 */
    for (uint32_t mb = 0; mb < MB_LIMIT; ++mb) {
        float b = f_of(0x3f800000u | mb);
        float r = (float)(1.0 / (double)b);
        float ys[2 * K + 1];
        int n = 0;
        for (int k = -K; k <= K; ++k) {
            float y = refine(b, neighbour(r, k));
            int seen = 0;
            for (int i = 0; i < n; ++i) seen |= ys[i] == y;
            if (!seen) ys[n++] = y;
        }
        if (n == 1 && ys[0] == r) continue;
        ++special;
        for (int i = 0; i < n; ++i) {
            for (uint32_t ma = 0; ma < (1u << 23); ++ma) {
                float a = f_of(0x3f800000u | ma);
                float q = quotient(a, b, ys[i], NULL);
                ++checked;
                if (q != reference(a, b)) {
                    if (++wrong < 10) printf("wrong: a=%a b=%a y=%a q=%a ref=%a\n", a, b, ys[i], q, reference(a, b));
                }
            }
        }
        if (special < 100) {
            printf("b=%a: %d values of y:", b, n);
            for (int i = 0; i < n; ++i) printf(" %a%s", ys[i], ys[i] == r ? "(RN)" : "");
            printf("\n");
        }
    }
    printf("1-2: %lld of the 2^23 - 512 divisors give a y other than RN(1/b) for some y0 within %d ulps; "
           "%lld quotients checked, %lld wrong\n", special, K, checked, wrong);
    /* 3 and 4 */
    long long inside = 0, wrong3 = 0, odd = 0, outside_bad = 0;
    for (long long i = 0; i < samples; ++i) {
        uint64_t r = next();
        float a = f_of((uint32_t)r), b = f_of((uint32_t)(r >> 32));
        if (i & 1) { /* half the pairs near each other: quotients of moderate size */
            uint32_t ub = (u_of(a) & 0x807fffffu) | (((u_of(a) >> 23) & 0xff) + (uint32_t)(next() % 61) - 30) << 23;
            b = f_of(ub ^ ((uint32_t)(next() & 1) << 31));
        }
        if (!safe(a, b)) {
            /* 4: the range test must exclude every non-finite, zero or subnormal b, and
               every a that is not finite */
            continue;
        }
        if (!isfinite(a) || !isfinite(b) || fpclassify(b) != FP_NORMAL ||
            (a != 0 && fpclassify(a) != FP_NORMAL)) {
            ++outside_bad;
            continue;
        }
        ++inside;
        float rb = (float)(1.0 / (double)b);
        float y0 = neighbour(rb, (int)(next() % (2 * K + 1)) - K);
        int o = bad_intermediate(y0);
        float e = fmaf(-b, y0, 1.0f);
        float y = fmaf(e, y0, y0);
        o |= bad_intermediate(e) | bad_intermediate(y);
        float q = quotient(a, b, y, &o);
        uint32_t sign = (u_of(a) ^ u_of(b)) & 0x80000000u;
        q = f_of(u_of(q) | sign);
        odd += o;
        if (u_of(q) != u_of(reference(a, b))) {
            if (++wrong3 < 10) printf("wrong: a=%a b=%a y0=%a q=%a ref=%a\n", a, b, y0, q, reference(a, b));
        }
    }
    printf("3-4: %lld random pairs, %lld in the safe range: %lld wrong, %lld with a subnormal "
           "or non-finite intermediate, %lld taken as safe wrongly\n",
           samples, inside, wrong3, odd, outside_bad);
    return (wrong || wrong3 || odd || outside_bad) ? 1 : 0;
}
