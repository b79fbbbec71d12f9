// The MatMul + bias pattern two passes rewrite: Add(MatMul(A, B), bias) (either Add operand
// order) with B a constant float32 [K, N] matrix, bias a constant float32 [N] vector, A float32
// of known rank, the MatMul output read by the Add alone, and the Add at opset >= 7 (numpy
// broadcasting). matmul_add_to_gemm.cpp turns it into Gemm where A is 2-D;
// matmul_bias_fusion.cpp into ai.polyinfer FusedMatMul for any rank >= 2.
#pragma once

#include <functional>

#include "ir/graph.h"

namespace polyinfer::opt {

// Rewrites every match whose A rank `accept` takes: the node `make(mm, add, bias)` returns
// replaces the Add (keeping the Add's outputs) and the MatMul is removed. Returns the count.
int rewrite_matmul_bias(ir::Graph& g, const std::function<bool(int a_rank)>& accept,
                        const std::function<ir::Node(const ir::Node& mm, const ir::Node& add,
                                                     const std::string& bias)>& make);

}  // namespace polyinfer::opt
