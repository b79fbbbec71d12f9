// Float unary operators over contiguous tensors (ops/unary.cpp): Relu, Sigmoid, Tanh, Exp, Neg,
// Abs, LeakyRelu, HardSigmoid, HardSwish, Gelu (erf or tanh), Erf, Sqrt, Clip, Floor, Ceil, Round
// (halves to even), Reciprocal, Log, Sin, Cos, Tan, Sign, Softplus, Softsign, Elu, Selu, Celu,
// ThresholdedRelu, Mish, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh.
//
// Each formula is the CPU reference's, comparisons in its order, so that NaN goes the same way
// (Relu, HardSigmoid and Clip keep a NaN; Sign keeps NaN and -0). Unlike GLSL, OpenCL C has the
// whole C99 math library (erf, expm1, log1p, the inverse and hyperbolic functions) with bounded
// ulp errors and IEEE special values, so the polynomials Vulkan's unary.comp carries are not
// needed here.
typedef struct {
  uint op;  // ops/unary.cpp's UnaryOp
  uint n;
  uint off_x, off_y;
  float alpha;  // LeakyRelu, HardSigmoid, Elu, Selu, Celu, ThresholdedRelu: alpha; Clip: min
  float beta;   // HardSigmoid: beta; Selu: gamma; Clip: max
} UnaryParams;

// As the CPU: split at 0 so that exp never overflows.
float un_sigmoid(float v) {
  if (v >= 0.0f) return 1.0f / (1.0f + exp(-v));
  const float e = exp(v);
  return e / (1.0f + e);
}

float un_softplus(float v) { return v > 0.0f ? v + log1p(exp(-v)) : log1p(exp(v)); }

float un_apply(float v, uint op, float alpha, float beta) {
  switch (op) {
    case 0u: return v < 0.0f ? 0.0f : v;  // Relu
    case 1u: return un_sigmoid(v);
    case 2u: return tanh(v);
    case 3u: return exp(v);
    case 4u: return -v;
    case 5u: return fabs(v);
    case 6u: return v < 0.0f ? alpha * v : v;                           // LeakyRelu
    case 7u: return pi_unit(alpha * v + beta);                    // HardSigmoid
    case 8u: return v * pi_unit(v / 6.0f + 0.5f);                 // HardSwish
    case 9u: return 0.5f * v * (1.0f + erf(v * 0.70710678118654752f));  // Gelu
    case 10u:                                                           // Gelu, tanh approximation
      return 0.5f * v * (1.0f + tanh(0.79788456080286536f * (v + 0.044715f * v * v * v)));
    case 11u: return erf(v);
    case 12u: return sqrt(v);
    case 14u: return floor(v);
    case 15u: return ceil(v);
    case 16u: return rint(v);  // the default rounding mode: halves to even
    case 17u: return 1.0f / v;
    case 18u: return log(v);
    case 19u: return sin(v);
    case 20u: return cos(v);
    case 21u: return tan(v);
    case 22u: return v > 0.0f ? 1.0f : (v < 0.0f ? -1.0f : v);  // Sign
    case 23u: return un_softplus(v);
    case 24u: return v / (1.0f + fabs(v));                      // Softsign
    case 25u: return v < 0.0f ? alpha * expm1(v) : v;           // Elu
    case 26u: return beta * (v > 0.0f ? v : alpha * expm1(v));  // Selu
    case 27u: return v > 0.0f ? v : alpha * expm1(v / alpha);   // Celu
    case 28u: return v > alpha ? v : 0.0f;                      // ThresholdedRelu
    case 29u: return v * tanh(un_softplus(v));                  // Mish
    case 30u: return asin(v);
    case 31u: return acos(v);
    case 32u: return atan(v);
    case 33u: return sinh(v);
    case 34u: return cosh(v);
    case 35u: return asinh(v);
    case 36u: return acosh(v);
    case 37u: return atanh(v);
    default: {
      // Clip as the CPU does it, max then min: with min > max every element becomes max.
      float r = v < alpha ? alpha : v;
      return r > beta ? beta : r;
    }
  }
}

__kernel void unary(CTPTR x, TPTR y, const UnaryParams p) {
  const uint step = get_global_size(0);
  for (uint i = get_global_id(0); i < p.n; i += step)
    STORE(y, p.off_y + i, un_apply(LOAD(x, p.off_x + i), p.op, p.alpha, p.beta));
}
