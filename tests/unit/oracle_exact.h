// Byte-for-byte comparison of a one-node model's outputs on `cpu` and `cpu-ref`, for the dtypes
// oracle.h's check() does not compare element by element (bool, int32, float64, ...). The
// kernels that only compare, select or move values (fast/compare.cpp, fast/cast.cpp, ...) must
// give the reference's bytes exactly.
//
//   const auto impl = test::check_bytes(OracleOp("Equal", 13).input(a).input(b), {a, b});
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "oracle.h"

namespace polyinfer::test {

// Runs op.check() (dtypes, shapes, float values) and then compares every output's bytes; `ins`
// are the inputs given to op, in order. Returns the node's impl on `cpu`.
inline std::string check_bytes(const OracleOp& op, const std::vector<Tensor>& ins,
                               int threads = 1) {
  const OracleResult r = op.check(0, 0);
  std::map<std::string, Value> feeds;
  for (size_t i = 0; i < ins.size(); ++i)
    if (ins[i].defined()) feeds["in" + std::to_string(i)] = Value(ins[i]);
  std::vector<Value> out[2];
  for (int k = 0; k < 2; ++k) {
    SessionOptions o;
    o.providers = {k == 0 ? "cpu" : "cpu-ref"};
    o.threads = threads;
    o.optimization_level = 0;
    const std::string bytes = op.model(k == 1);
    Session s = Session::load_bytes(bytes.data(), bytes.size(), o);
    out[k] = s.run(feeds);
  }
  EXPECT_EQ(out[0].size(), out[1].size());
  for (size_t i = 0; i < out[0].size() && i < out[1].size(); ++i) {
    if (!out[1][i].is_tensor()) continue;
    const Tensor& g = out[0][i].tensor();
    const Tensor& w = out[1][i].tensor();
    if (g.dtype() != w.dtype() || g.nbytes() != w.nbytes() || w.dtype() == DType::String) continue;
    const auto* gb = static_cast<const uint8_t*>(g.raw_data());
    const auto* wb = static_cast<const uint8_t*>(w.raw_data());
    EXPECT_EQ(std::vector<uint8_t>(gb, gb + g.nbytes()), std::vector<uint8_t>(wb, wb + w.nbytes()))
        << "output " << i;
  }
  return r.impl;
}

}  // namespace polyinfer::test
