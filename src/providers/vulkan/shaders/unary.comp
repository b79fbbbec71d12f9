// Float32 unary operators over contiguous tensors (ops/elementwise.cpp): Relu, Sigmoid, Tanh,
// Exp, Neg, Abs, LeakyRelu, HardSigmoid, HardSwish, Gelu (erf or tanh), Erf, Sqrt, Clip, Floor,
// Ceil, Round (halves to even), Reciprocal, Log, Sin, Cos, Tan, Sign, Softplus, Softsign, Elu,
// Selu, Celu, ThresholdedRelu, Mish, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh.
// Offsets are in elements into whole VkBuffers, as in binary.comp.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#include "activation.glsl"

layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer In { PI_T x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { PI_T y[]; };

layout(push_constant) uniform Params {
  uint op;      // elementwise.cpp's UnaryOp
  uint n;
  uint off_x;
  uint off_y;
  float alpha;  // LeakyRelu, HardSigmoid, Elu, Selu, Celu, ThresholdedRelu: alpha; Clip: min
  float beta;   // HardSigmoid: beta; Selu: gamma; Clip: max
} p;

// exp(v) - 1 and log(1 + v) without the cancellation near 0 (the CPU uses expm1/log1p): near 0
// a series, since the device's exp and log are only accurate to an absolute ~1e-7 around 1
// (llvmpipe), which would be a large relative error there; further out there is no
// cancellation to amplify it.
float pi_expm1(float v) {
  if (abs(v) >= 0.5) return exp(v) - 1.0;
  // Taylor to v^9 / 9!: the next term is below 1e-9 relative for |v| < 0.5.
  float t = 1.0 / 362880.0;
  t = t * v + 1.0 / 40320.0;
  t = t * v + 1.0 / 5040.0;
  t = t * v + 1.0 / 720.0;
  t = t * v + 1.0 / 120.0;
  t = t * v + 1.0 / 24.0;
  t = t * v + 1.0 / 6.0;
  t = t * v + 0.5;
  t = t * v + 1.0;
  return t * v;
}

float pi_log1p(float v) {
  if (abs(v) >= 0.5) return log(1.0 + v);
  // 2 atanh(s) with s = v / (2 + v), |s| <= 1/3: odd powers of s to s^15.
  const float s = v / (2.0 + v), s2 = s * s;
  float t = 1.0 / 15.0;
  t = t * s2 + 1.0 / 13.0;
  t = t * s2 + 1.0 / 11.0;
  t = t * s2 + 1.0 / 9.0;
  t = t * s2 + 1.0 / 7.0;
  t = t * s2 + 1.0 / 5.0;
  t = t * s2 + 1.0 / 3.0;
  t = t * s2 + 1.0;
  return 2.0 * s * t;
}

// tanh with its relative accuracy kept near 0 (Mish of a large negative v is v * tanh(tiny)).
float pi_tanh_accurate(float v) {
  const float t = pi_expm1(-2.0 * abs(v));
  return sign(v) * (-t / (t + 2.0));
}

// The inverse trigonometric functions from Cephes' atanf (range reduction to |x| <= tan(pi/8),
// a degree-9 odd polynomial; ~1e-7 relative): the device's own (llvmpipe) are off by up to 3e-4.
float pi_atan(float v) {
  const float a = abs(v);
  float x = a, y0 = 0.0;
  if (a > 2.414213562373095) {
    y0 = 1.5707963267948966;
    x = -1.0 / a;
  } else if (a > 0.4142135623730950) {
    y0 = 0.7853981633974483;
    x = (a - 1.0) / (a + 1.0);
  }
  const float z = x * x;
  const float y = (((8.05374449538e-2 * z - 1.38776856032e-1) * z + 1.99777106478e-1) * z -
                   3.33329491539e-1) * z * x + x;
  return sign(v) * (y0 + y);
}

// asin(v) = atan(v / sqrt(1 - v^2)), the root as (1 - v)(1 + v) (no cancellation near 1).
float pi_asin(float v) {
  if (abs(v) == 1.0) return v * 1.5707963267948966;
  return pi_atan(v / sqrt((1.0 - v) * (1.0 + v)));
}

// acos(v) = 2 atan(sqrt((1 - v) / (1 + v))): accurate near 1, where acos is small.
float pi_acos(float v) {
  if (v == -1.0) return 3.141592653589793;
  return 2.0 * pi_atan(sqrt((1.0 - v) / (1.0 + v)));
}

// The hyperbolic functions through the accurate expm1/log1p (sinh, asinh, atanh near 0 and
// acosh near 1 would cancel otherwise).
float pi_sinh(float v) {
  const float a = abs(v);
  if (a >= 1.0) return 0.5 * (exp(v) - exp(-v));
  const float t = pi_expm1(a);
  return sign(v) * 0.5 * (t + t / (t + 1.0));
}

float pi_asinh(float v) {
  const float a = abs(v);
  if (a > 1e18) return sign(v) * (log(a) + 0.6931471805599453);  // a * a would overflow
  return sign(v) * pi_log1p(a + a * a / (1.0 + sqrt(a * a + 1.0)));
}

float pi_acosh(float v) {
  if (v > 1e18) return log(v) + 0.6931471805599453;
  const float d = v - 1.0;
  return pi_log1p(d + sqrt(d * (v + 1.0)));
}

float pi_atanh(float v) { return 0.5 * pi_log1p(2.0 * v / (1.0 - v)); }

// As the CPU: split at 0 so that exp never overflows.
float pi_softplus(float v) {
  return v > 0.0 ? v + pi_log1p(exp(-v)) : pi_log1p(exp(v));
}

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += step) {
    const float v = PI_LD(x[p.off_x + i]);
    float r;
    switch (p.op) {
      case 0u: r = v < 0.0 ? 0.0 : v; break;  // a NaN stays NaN, as on the CPU
      case 1u: r = pi_sigmoid(v); break;
      case 2u: r = pi_tanh(v); break;
      case 3u: r = exp(v); break;
      case 4u: r = -v; break;
      case 5u: r = abs(v); break;
      case 6u: r = v < 0.0 ? p.alpha * v : v; break;
      case 7u: r = pi_unit(p.alpha * v + p.beta); break;
      case 8u: r = v * clamp(v / 6.0 + 0.5, 0.0, 1.0); break;
      case 9u: r = pi_activate(v, 9u, 0.0, 0.0); break;    // Gelu
      case 10u: r = pi_activate(v, 10u, 0.0, 0.0); break;  // Gelu, tanh approximation
      case 11u: r = pi_erf(v); break;
      case 12u: r = sqrt(v); break;
      case 14u: r = floor(v); break;
      case 15u: r = ceil(v); break;
      case 16u: r = roundEven(v); break;
      case 17u: r = 1.0 / v; break;
      case 18u: r = log(v); break;
      case 19u: r = sin(v); break;
      case 20u: r = cos(v); break;
      case 21u: r = tan(v); break;
      case 22u: r = v > 0.0 ? 1.0 : (v < 0.0 ? -1.0 : v); break;  // Sign: NaN and -0 kept
      case 23u: r = pi_softplus(v); break;
      case 24u: r = v / (1.0 + abs(v)); break;                   // Softsign
      case 25u: r = v < 0.0 ? p.alpha * pi_expm1(v) : v; break;  // Elu
      case 26u: r = p.beta * (v > 0.0 ? v : p.alpha * pi_expm1(v)); break;  // Selu
      case 27u: r = v > 0.0 ? v : p.alpha * pi_expm1(v / p.alpha); break;   // Celu
      case 28u: r = v > p.alpha ? v : 0.0; break;                // ThresholdedRelu
      case 29u: r = v * pi_tanh_accurate(pi_softplus(v)); break;  // Mish
      case 30u: r = pi_asin(v); break;
      case 31u: r = pi_acos(v); break;
      case 32u: r = pi_atan(v); break;
      case 33u: r = pi_sinh(v); break;
      case 34u: r = 0.5 * (exp(v) + exp(-v)); break;  // Cosh
      case 35u: r = pi_asinh(v); break;
      case 36u: r = pi_acosh(v); break;
      case 37u: r = pi_atanh(v); break;
      default: {
        // Clip as the CPU does it, max then min: with min > max every element becomes max.
        r = v < p.alpha ? p.alpha : v;
        r = r > p.beta ? p.beta : r;
      }
    }
    y[p.off_y + i] = PI_ST(r);
  }
}
