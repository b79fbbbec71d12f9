// Rotary position embedding of one head vector, as com.microsoft RotaryEmbedding and
// GroupQueryAttention (do_rotary) apply it (rotary.cpp, gqa.cpp).
#pragma once

#include <cstdint>

namespace polyinfer::contrib {

// Rotates the first `rot` elements of the head vector x in place by the angles whose cosines
// and sines are cos[0, rot/2) and sin[0, rot/2); elements from rot on are left as they are.
// Interleaved: the pairs are (x[2i], x[2i+1]); otherwise (x[i], x[i + rot/2]).
inline void rotate_head(float* x, int64_t rot, const float* cos, const float* sin,
                        bool interleaved) {
  const int64_t half = rot / 2;
  if (interleaved) {
    for (int64_t i = 0; i < half; ++i) {
      const float a = x[2 * i], b = x[2 * i + 1];
      x[2 * i] = a * cos[i] - b * sin[i];
      x[2 * i + 1] = b * cos[i] + a * sin[i];
    }
  } else {
    for (int64_t i = 0; i < half; ++i) {
      const float a = x[i], b = x[i + half];
      x[i] = a * cos[i] - b * sin[i];
      x[i + half] = b * cos[i] + a * sin[i];
    }
  }
}

}  // namespace polyinfer::contrib
