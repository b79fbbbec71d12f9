// The polynomial coefficients every form of exp and erf in this folder evaluates (fast_util.h's
// scalar fast_exp / fast_erf, avx2_util.h's exp8 / erf8, avx512_math.h's exp16 / erf16), in
// Horner order (highest degree first), so that the three widths agree to within an ulp or two
// and a kernel's epilogue matches the standalone operator it replaces.
#pragma once

namespace polyinfer::fast {

// exp(r) = 1 + r + r^2 * P(r) for |r| <= ln(2) / 2 (Cephes expf), after the reduction
// x = n ln 2 + r with ln 2 in two parts (Cody-Waite).
inline constexpr float kExpP[6] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                                   4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};
inline constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;

// erf(x) = x * P(x^2) / Q(x^2) on [-4, 4] (the rational fit Eigen and XLA use), +-1 beyond.
inline constexpr float kErfP[7] = {
    -2.72614225801306e-10f, 2.77068142495902e-08f,  -2.10102402082508e-06f, -5.69250639462346e-05f,
    -7.34990630326855e-04f, -2.95459980854025e-03f, -1.60960333262415e-02f};
inline constexpr float kErfQ[5] = {-1.45660718464996e-05f, -2.13374055278905e-04f,
                                   -1.68282697438203e-03f, -7.37332916720468e-03f,
                                   -1.42647390514189e-02f};

// Gelu's tail, x <= -3: 0.5 x (1 + erf(x / sqrt 2)) = -exp(-x^2 / 2) G(2 / x^2) / sqrt(2 pi),
// G(u) = t erfc(t) exp(t^2) sqrt(pi) with u = 1 / t^2, t = -x / sqrt 2 (G(0) = 1). Degree 7 in u
// on [0, 2/9], weighted least squares against double erfc: |rel err| < 2e-8 (8e-8 in float).
inline constexpr float kGeluTailP[8] = {-2.591495228e+01f, 2.882096132e+01f,  -1.511369034e+01f,
                                        5.466947890e+00f,  -1.823822437e+00f, 7.487430965e-01f,
                                        -4.999877509e-01f, 9.999999799e-01f};
inline constexpr float kInvSqrt2Pi = 0.398942280401432678f;  // 1 / sqrt(2 pi)

}  // namespace polyinfer::fast
