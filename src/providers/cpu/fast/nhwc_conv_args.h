// What the hand-written kernels of this folder read and check the same way, so that each file
// holds its arithmetic, not another copy of these: whether the CPU runs their code, and the
// operands of NhwcFusedConv (the conv_*.cpp kernels) and how a run of it begins. Which kernel
// takes which shapes is the choice table's (providers/cpu/choice_tables.cpp).
#pragma once

#include <cstdint>
#include <string>

#include "core/unaligned.h"
#include "ops/activation.h"
#include "ops/window.h"
#include "runtime/kernel.h"

namespace polyinfer::fast {

// Declines (info.unsupported, the placement report's reason, naming `who`) unless this build
// and CPU run AVX2+FMA code: a kernel compiled out of a non-x86 build says so.
void require_avx2_kernel(const KernelInfo& info, const char* who);

// ai.polyinfer NhwcFusedConv's operands: X [N, H, W, C], W [M, C, kH, kW], optional B [M],
// optional residual Z shaped as Y [N, OH, OW, M], and the fused activation.
struct NhwcConvArgs {
  int64_t M = 0, C = 0, KH = 0, KW = 0;
  WindowAttrs attrs;
  FusedActivation act;
  bool has_z = false;
  // [M, C, kH, kW], maybe still in the model file: read them in the kernel's constructor.
  UnalignedFloats weights;
  const float* bias = nullptr;  // M values, or null

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
    WindowGeometry g;
    Tensor& y;
    const float* z;  // or null
  };
  Run begin(KernelContext& ctx, const std::string& label) const;
};

}  // namespace polyinfer::fast
