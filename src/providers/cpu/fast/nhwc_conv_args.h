// What the hand-written specialized kernels of this folder read and check the same way, so
// that each file holds its arithmetic and the rules of when it applies, not another copy of
// these: the AVX2/A-B switch (all of them, matmul_packed.cpp included) and the operands of
// NhwcFusedConv (the conv_*.cpp kernels) and how a run of it begins.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/unaligned.h"
#include "providers/cpu/ops/conv_util.h"
#include "providers/cpu/ops/fused_activation.h"
#include "runtime/kernel.h"

namespace polyinfer::fast {

// Declines (info.unsupported, the placement report's reason, naming `who`) unless this build
// and CPU run AVX2+FMA code and the environment variable `off_env` is not "0": the switch each
// specialized kernel keeps for A/B runs against the kernel it replaces.
void require_avx2_kernel(const KernelInfo& info, const char* who, const char* off_env);

// Whether a specialized convolution that oneDNN's AVX-512 kernels beat steps aside: true where
// oneDNN runs AVX-512 code, unless the environment variable `off_env` is "1" (forced on, for
// tests and A/B runs). The im2col kernel asks: on a Zen 4 core oneDNN 2.6's brgconv ran
// ResNet-50 2% and Inception-v3 8-10% faster without it.
bool onednn_avx512_convolutions_win(const char* off_env);

// An NhwcFusedConv's kernel size, group and strides, read as cheaply as they can be for the
// specialized kernels' may_take (runtime/kernel.h); nullopt when the weights are not a
// constant of rank 4 (the constructors then decide).
struct ConvOutline {
  int64_t m = 0, c = 0;  // output channels, input channels per group (the weights' [M, C])
  int64_t kh = 0, kw = 0, group = 1;
  bool unit_strides = true;
};
std::optional<ConvOutline> conv_outline(const KernelInfo& info);

// ai.polyinfer NhwcFusedConv's operands: X [N, H, W, C], W [M, C, kH, kW], optional B [M],
// optional residual Z shaped as Y [N, OH, OW, M], and the fused activation.
struct NhwcConvArgs {
  int64_t M = 0, C = 0, KH = 0, KW = 0;
  cpu::WindowAttrs attrs;
  cpu::FusedActivation act;
  bool has_z = false;
  // [M, C, kH, kW], maybe still in the model file: read them in the kernel's constructor.
  UnalignedFloats weights;
  const float* bias = nullptr;     // M values, or null

  // Reads constant float32 weights of rank 4, a constant float32 bias of M values, the window
  // attributes, the activation and whether Z is given; declines (naming `who`) what a
  // register-tiled AVX2 kernel cannot take: non-constant weights or bias, an activation that
  // avx2_util.h does not apply. A bias of the wrong length is an error in the model.
  static NhwcConvArgs read(const KernelInfo& info, const char* who);

  // Checks that X is float32 [N, H, W, C * group] (an error naming the node and the expected
  // shape).
  void check_x(const Tensor& x, const std::string& label) const;

  // Z's values when given, checked to have Y's dtype and shape; null when not given.
  const float* residual(KernelContext& ctx, const Tensor& y, const std::string& label) const;

  // How a run of the kernels here begins: X checked (check_x), its window geometry, Y
  // allocated as [N, OH, OW, M], Z checked (residual). Errors name `label`.
  struct Run {
    const Tensor& x;
    int64_t N, H, W;
    cpu::WindowGeometry g;
    Tensor& y;
    const float* z;  // or null
  };
  Run begin(KernelContext& ctx, const std::string& label) const;
};

}  // namespace polyinfer::fast
