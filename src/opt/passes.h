// The optimizer's passes, one file each (src/opt/<name>.cpp); optimizer.cpp lists them in order.
// Tests create them one at a time to check each rewrite alone.
#pragma once

#include <memory>

#include "opt/pass.h"

namespace polyinfer::opt {

// Level 1: standard ONNX.
std::unique_ptr<Pass> make_constant_folding();       // all-constant nodes → initializers
std::unique_ptr<Pass> make_shape_folding();          // Shape/Size of a static shape → initializer
std::unique_ptr<Pass> make_identity_elimination();   // Identity, inference Dropout
std::unique_ptr<Pass> make_dead_node_elimination();  // nodes whose outputs nothing reads
// Loop body nodes whose inputs are the same every iteration → before the Loop
std::unique_ptr<Pass> make_loop_invariant_motion();
// Transpose → order-agnostic chain → Transpose: the pair cancels or becomes one Transpose
std::unique_ptr<Pass> make_transpose_cancellation();
std::unique_ptr<Pass> make_conv_bn_folding();  // Conv + BatchNormalization → Conv
// Conv + per-channel constant Add/Sub/Mul/Div → Conv with folded weights and bias
std::unique_ptr<Pass> make_conv_channel_affine_folding();
std::unique_ptr<Pass> make_pad_fusion();           // zero Pad + Conv/AveragePool → their pads
std::unique_ptr<Pass> make_matmul_add_to_gemm();   // 2-D MatMul + Add → Gemm
std::unique_ptr<Pass> make_reduce_mean_to_pool();  // spatial ReduceMean → GlobalAveragePool

// Level 2: ai.polyinfer operators (and other rewrites that change results within rounding).
std::unique_ptr<Pass> make_qdq_unsigned();        // int8 activation Q/DQ pairs → uint8 (exact)
std::unique_ptr<Pass> make_qdq_fusion();          // DQ → Conv/MatMul → Q → QLinearConv/MatMul
std::unique_ptr<Pass> make_qconv_add_fusion();    // QLinearConv + QLinearAdd → QLinearConvAdd
std::unique_ptr<Pass> make_layer_norm_fusion();   // the decomposed LayerNorm → LayerNormalization
std::unique_ptr<Pass> make_gelu_fusion();         // erf / tanh GELU patterns → Gelu
std::unique_ptr<Pass> make_matmul_bias_fusion();  // MatMul + Add(bias) → FusedMatMul
std::unique_ptr<Pass> make_conv_add_fusion();     // Conv + Add(residual) → FusedConv with Z
std::unique_ptr<Pass> make_activation_fusion();   // Conv/Gemm/MatMul + activation → Fused*
// x·Clip(x+3, 0, 6)/6 and the other spelled-out activations → HardSwish, HardSigmoid, Mish
std::unique_ptr<Pass> make_activation_decomposition_fusion();

// Level 3 (CPU-only operators), with the fusions above.
std::unique_ptr<Pass> make_attention_fusion();  // per-head attention → Attention (3-D)

// Level 3, after the channels-last layout (channels_last.h), whose operators they match.
std::unique_ptr<Pass> make_concat_affine_fusion();    // channel Concat + ChannelAffine → one pass
std::unique_ptr<Pass> make_channel_shuffle_fusion();  // Concat + shuffle (+ split) → one op
std::unique_ptr<Pass> make_pointwise_depthwise_fusion();  // 1x1 conv + 3x3 depthwise → one op

}  // namespace polyinfer::opt
