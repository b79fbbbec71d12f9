// The CUDA data-movement and reduction kernels against cpu-ref (oracle harness): Transpose
// (every permutation of rank 3, rank 6), Slice (negative starts and steps, clamping, empty),
// Split (attribute, input, uneven num_outputs), Expand, Concat along every axis, Gather along
// every axis with int32/int64 and negative indices, the views (Reshape & co.) with run-time and
// constant shapes, ReduceSum/ReduceMean over every axis set. Copies are exact (tolerance 0).
// Each skips with the probe's reason without a usable GPU.
#include <algorithm>

#include <cmath>

#include "cuda_util.h"
#include "oracle.h"
#include "vulkan_util.h"

namespace polyinfer {
namespace {

using test::OracleOp;

OracleOp on_cuda(const std::string& op, int opset) {
  return std::move(OracleOp(op, opset).providers({"cuda"}));
}

void expect_on_cuda(const test::OracleResult& r, const std::string& what) {
  EXPECT_EQ(r.provider, "cuda") << what;
  EXPECT_EQ(r.impl.rfind("cuda:", 0), 0u) << what << ": " << r.impl;
}

Tensor i64(const Shape& s, std::vector<int64_t> v) { return Tensor::from_vector<int64_t>(s, v); }
Tensor ints(std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return i64({n}, std::move(v));
}

TEST(CudaLayout, Transpose) {
  PI_SKIP_WITHOUT_CUDA();
  std::vector<int64_t> perm = {0, 1, 2};
  do {
    expect_on_cuda(on_cuda("Transpose", 13).attr("perm", perm).random({3, 5, 257}).check(0, 0),
                   "perm " + shape_str(perm));
  } while (std::next_permutation(perm.begin(), perm.end()));
  expect_on_cuda(on_cuda("Transpose", 13).random({2, 3, 4}).check(0, 0), "default perm");
  expect_on_cuda(on_cuda("Transpose", 13)
                     .attr("perm", std::vector<int64_t>{5, 0, 3, 1, 4, 2})
                     .random({2, 3, 1, 4, 5, 3})
                     .check(0, 0),
                 "rank 6");
  // BERT's head split: [1, 128, 12, 64] -> [1, 12, 128, 64].
  expect_on_cuda(on_cuda("Transpose", 13)
                     .attr("perm", std::vector<int64_t>{0, 2, 1, 3})
                     .random({1, 128, 12, 64})
                     .check(0, 0),
                 "BERT");
}

TEST(CudaLayout, Concat) {
  PI_SKIP_WITHOUT_CUDA();
  for (int64_t axis = -3; axis < 3; ++axis) {
    const int64_t a = axis < 0 ? axis + 3 : axis;
    Shape s1{2, 3, 4}, s2{2, 3, 4}, s3{2, 3, 4};
    s2[a] = 5;
    s3[a] = 1;
    expect_on_cuda(
        on_cuda("Concat", 13).attr("axis", axis).random(s1).random(s2).random(s3).check(0, 0),
        "axis " + std::to_string(axis));
  }
  expect_on_cuda(
      on_cuda("Concat", 13).attr("axis", int64_t{1}).random({2, 0}).random({2, 3}).check(0, 0),
      "empty input");
}

TEST(CudaLayout, Slice) {
  PI_SKIP_WITHOUT_CUDA();
  struct Case {
    Shape shape;
    std::vector<int64_t> starts, ends, axes, steps;
  };
  const std::vector<Case> cases = {
      {{10}, {2}, {7}, {}, {}},
      {{10}, {-3}, {1000}, {}, {}},
      {{10}, {8}, {1}, {0}, {-2}},
      {{10}, {-1}, {-1000}, {0}, {-1}},
      {{10}, {5}, {5}, {}, {}},
      {{3, 5, 7}, {1, -6}, {3, 100}, {1, -1}, {2, 3}},
      {{3, 5, 7}, {2, 4, 6}, {-100, -100, -100}, {0, 1, 2}, {-1, -2, -3}},
      {{2, 3, 1, 4, 5, 3}, {1, 3, 0}, {2, 0, 5}, {0, 3, 4}, {1, -1, 2}}};
  for (const Case& c : cases) {
    auto o = on_cuda("Slice", 13).random(c.shape);
    o.input(ints(c.starts)).input(ints(c.ends));
    if (!c.axes.empty() || !c.steps.empty()) o.input(c.axes.empty() ? Tensor() : ints(c.axes));
    if (!c.steps.empty()) o.input(ints(c.steps));
    expect_on_cuda(o.check(0, 0), "run-time " + shape_str(c.shape));
    std::vector<Tensor> in = {test::random_tensor(c.shape), ints(c.starts), ints(c.ends),
                              c.axes.empty() ? Tensor() : ints(c.axes),
                              c.steps.empty() ? Tensor() : ints(c.steps)};
    const auto r = test::check_with_constants(OracleOp("Slice", 13), in,
                                              {false, true, true, true, true}, {"cuda"});
    EXPECT_EQ(r.provider, "cuda") << "constant " << shape_str(c.shape);
  }
  expect_on_cuda(on_cuda("Slice", 9)
                     .attr("starts", std::vector<int64_t>{1})
                     .attr("ends", std::vector<int64_t>{3})
                     .attr("axes", std::vector<int64_t>{1})
                     .random({2, 5})
                     .check(0, 0),
                 "opset 9 attributes");
}

TEST(CudaLayout, Split) {
  PI_SKIP_WITHOUT_CUDA();
  auto a = on_cuda("Split", 11).attr("axis", int64_t{1});
  a.attr("split", std::vector<int64_t>{2, 3, 1});
  expect_on_cuda(a.outputs(3).random({2, 6, 3}).check(0, 0), "attribute");
  auto b = on_cuda("Split", 13).attr("axis", int64_t{-1}).outputs(2);
  expect_on_cuda(b.random({4, 7}).input(ints({3, 4})).check(0, 0), "input");
  auto c = on_cuda("Split", 18).attr("axis", int64_t{0}).attr("num_outputs", int64_t{3}).outputs(3);
  expect_on_cuda(c.random({8, 2}).check(0, 0), "uneven num_outputs");
}

TEST(CudaLayout, Gather) {
  PI_SKIP_WITHOUT_CUDA();
  const std::vector<Shape> shapes = {{5}, {4, 3}, {3, 5, 2}, {2, 3, 4, 5}};
  for (const Shape& s : shapes) {
    const int64_t r = static_cast<int64_t>(s.size());
    for (int64_t axis = -r; axis < r; ++axis) {
      const int64_t dim = s[static_cast<size_t>(axis < 0 ? axis + r : axis)];
      const Tensor ind = i64({2, 2}, {0, dim - 1, -1, -dim});
      expect_on_cuda(on_cuda("Gather", 13).attr("axis", axis).random(s).input(ind).check(0, 0),
                     shape_str(s) + " axis " + std::to_string(axis));
      const auto c =
          test::check_with_constants(OracleOp("Gather", 13).attr("axis", axis),
                                     {test::random_tensor(s), ind}, {false, true}, {"cuda"});
      EXPECT_EQ(c.provider, "cuda") << shape_str(s) << " " << axis;
    }
  }
  expect_on_cuda(on_cuda("Gather", 13)
                     .random({9, 4})
                     .input(Tensor::from_vector<int32_t>({5}, {8, -9, 0, 3, -1}))
                     .check(0, 0),
                 "int32");
  std::vector<int64_t> tokens(128);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int64_t>((i * 37) % 1000);
  expect_on_cuda(on_cuda("Gather", 13).random({1000, 768}).input(i64({1, 128}, tokens)).check(0, 0),
                 "embedding");
  // Out of range: the CPU's error, not a fault.
  try {
    on_cuda("Gather", 13).random({4, 3}).input(i64({1}, {4})).check(0, 0);
    FAIL() << "an out-of-range index ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << e.what();
  }
}

TEST(CudaLayout, Expand) {
  PI_SKIP_WITHOUT_CUDA();
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases = {
      {{3, 1}, {2, 3, 4}}, {{1}, {5, 7}}, {{2, 1, 3}, {1, 4, 1}}, {{4}, {1}}, {{1, 1}, {0, 3}}};
  for (const auto& [x, shape] : cases) {
    expect_on_cuda(on_cuda("Expand", 13).random(x).input(ints(shape)).check(0, 0),
                   "run-time " + shape_str(x));
    const auto r = test::check_with_constants(
        OracleOp("Expand", 13), {test::random_tensor(x), ints(shape)}, {false, true}, {"cuda"});
    EXPECT_EQ(r.provider, "cuda") << "constant " << shape_str(x);
  }
}

TEST(CudaLayout, Views) {
  PI_SKIP_WITHOUT_CUDA();
  expect_on_cuda(on_cuda("Reshape", 14).random({2, 3, 4}).input(ints({0, -1, 2})).check(0, 0),
                 "Reshape");
  for (int64_t axis : {0, 1, 2, -1})
    expect_on_cuda(on_cuda("Flatten", 13).attr("axis", axis).random({2, 3, 4}).check(0, 0),
                   "Flatten");
  expect_on_cuda(on_cuda("Squeeze", 13).random({1, 3, 1, 4}).input(ints({-2})).check(0, 0),
                 "Squeeze");
  expect_on_cuda(on_cuda("Unsqueeze", 13).random({3, 4}).input(ints({0, -1})).check(0, 0),
                 "Unsqueeze");
  const auto r = test::check_with_constants(OracleOp("Reshape", 14),
                                            {test::random_tensor({2, 12}), ints({6, 4})},
                                            {false, true}, {"cuda"});
  EXPECT_EQ(r.provider, "cuda");
}

TEST(CudaReduce, EveryAxisSet) {
  PI_SKIP_WITHOUT_CUDA();
  const Shape s{3, 4, 5, 67};
  const std::vector<std::vector<int64_t>> sets = {{},     {0},    {1},    {3},          {-1},
                                                  {1, 2}, {0, 3}, {2, 3}, {0, 1, 2, 3}, {-3, 0}};
  for (const auto& axes : sets)
    for (int64_t keep : {0, 1}) {
      const std::string what = shape_str(axes) + " keepdims " + std::to_string(keep);
      auto m = on_cuda("ReduceMean", 13).attr("keepdims", keep);
      if (!axes.empty()) m.attr("axes", axes);
      expect_on_cuda(m.random(s).check(1e-6, 1e-5), "mean " + what);
      auto sum = on_cuda("ReduceSum", 13).attr("keepdims", keep).random(s);
      if (!axes.empty()) sum.input(ints(axes));
      expect_on_cuda(sum.check(1e-5, 1e-5), "sum " + what);
      auto m18 = on_cuda("ReduceMean", 18).attr("keepdims", keep).random(s);
      if (!axes.empty()) m18.input(ints(axes));
      expect_on_cuda(m18.check(1e-6, 1e-5), "mean-18 " + what);
    }
  expect_on_cuda(
      on_cuda("ReduceSum", 13).attr("noop_with_empty_axes", int64_t{1}).random({3, 4}).check(0, 0),
      "noop");
  // Empty sets: 0 for the sum, NaN for the mean, as on the CPU.
  expect_on_cuda(on_cuda("ReduceSum", 13).random({3, 0, 4}).input(ints({1})).check(0, 0),
                 "empty sum");
  expect_on_cuda(
      on_cuda("ReduceMean", 13).attr("axes", std::vector<int64_t>{1}).random({3, 0, 4}).check(0, 0),
      "empty mean");
}

// ReduceMax / ReduceMin select: exact, NaN kept, the empty set's identity (-inf / +inf).
TEST(CudaReduce, MaxAndMin) {
  PI_SKIP_WITHOUT_CUDA();
  const Shape s{3, 4, 5, 67};
  for (const char* op : {"ReduceMax", "ReduceMin"})
    for (const auto& axes : std::vector<std::vector<int64_t>>{{}, {0}, {3}, {1, 2}, {0, 3}}) {
      auto o = on_cuda(op, 13).attr("keepdims", int64_t{0});
      if (!axes.empty()) o.attr("axes", axes);
      expect_on_cuda(o.random(s).check(0, 0), std::string(op) + shape_str(axes));
      auto o18 = on_cuda(op, 18).random(s);
      if (!axes.empty()) o18.input(ints(axes));
      expect_on_cuda(o18.check(0, 0), std::string(op) + "-18" + shape_str(axes));
    }
  std::vector<float> v(2 * 300, 1.0f);
  v[417] = NAN;  // row 1
  for (const char* op : {"ReduceMax", "ReduceMin"}) {
    expect_on_cuda(on_cuda(op, 13)
                       .attr("axes", std::vector<int64_t>{1})
                       .input(Tensor::from_vector<float>({2, 300}, v))
                       .check(0, 0),
                   std::string(op) + " NaN");
    expect_on_cuda(
        on_cuda(op, 13).attr("axes", std::vector<int64_t>{1}).random({3, 0, 4}).check(0, 0),
        std::string(op) + " empty");
  }
}

Tensor random_bool(const Shape& s, uint32_t seed) {
  Tensor t = Tensor::empty(DType::Bool, s);
  uint32_t x = seed * 2654435761u + 1;
  bool* p = t.data<bool>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    x = x * 1664525u + 1013904223u;
    p[i] = (x >> 16) & 1;
  }
  return t;
}

// Where selects: exact. Broadcasting of each input up to rank 6, run-time and constant inputs,
// float16, and refusals falling back with the reason.
TEST(CudaWhere, BroadcastConstantsAndRefusals) {
  PI_SKIP_WITHOUT_CUDA();
  const std::vector<std::vector<Shape>> cases = {{{7}, {7}, {7}},
                                                 {{3, 257}, {3, 257}, {3, 257}},
                                                 {{5, 1}, {1, 3}, {}},
                                                 {{}, {4, 5}, {5}},
                                                 {{2, 1, 3, 1, 5, 1}, {1, 4, 1, 6, 1, 7}, {7}},
                                                 {{0, 3}, {1, 3}, {3}}};
  uint32_t seed = 1;
  for (const auto& c : cases) {
    const std::string what = shape_str(c[0]) + shape_str(c[1]) + shape_str(c[2]);
    expect_on_cuda(
        on_cuda("Where", 16).input(random_bool(c[0], seed++)).random(c[1]).random(c[2]).check(0, 0),
        what);
    expect_on_cuda(on_cuda("Where", 16)
                       .input(random_bool(c[0], seed++))
                       .random_half(c[1])
                       .random_half(c[2])
                       .check(0, 0),
                   "float16 " + what);
    const auto r = test::check_with_constants(
        OracleOp("Where", 9),
        {random_bool(c[0], seed++), test::random_tensor(c[1], seed), test::random_tensor(c[2])},
        {true, false, true}, {"cuda"});
    EXPECT_EQ(r.provider, "cuda") << "constants " << what << ": " << r.reason;
  }
  const auto r = test::check_with_constants(
      OracleOp("Where", 16),
      {random_bool({4}, 3), Tensor::from_vector<int64_t>({4}, {1, 2, 3, 4}),
       Tensor::from_vector<int64_t>({1}, {0})},
      {false, false, false}, {"cuda", "cpu"});
  EXPECT_EQ(r.provider, "cpu");
  EXPECT_NE(r.reason.find("X of dtype int64"), std::string::npos) << r.reason;
}

// Pad copies or fills: exact. Every mode, pads wider than the input, crops, rank 6, the axes
// input, attributes, float16, an empty input, and a refusal.
TEST(CudaPad, EveryModeAndForm) {
  PI_SKIP_WITHOUT_CUDA();
  struct Case {
    Shape shape;
    std::vector<int64_t> pads;
  };
  const std::vector<Case> cases = {{{5}, {2, 3}},
                                   {{3, 4}, {7, 0, 0, 9}},           // wider than the input
                                   {{4, 5}, {-1, 2, 1, -3}},         // crops
                                   {{2, 1, 3}, {0, 2, 1, 1, 3, 0}},  // a dimension of size 1
                                   {{2, 3, 17, 19}, {0, 0, 1, 2, 0, 0, 2, 1}},
                                   {{2, 1, 2, 1, 2, 3}, {0, 1, 0, 0, 1, 1, 1, 0, 0, 0, 1, 2}}};
  for (const char* mode : {"constant", "reflect", "edge", "wrap"})
    for (const Case& c : cases) {
      const std::string what = std::string(mode) + shape_str(c.shape);
      std::vector<Tensor> in = {test::random_tensor(c.shape), ints(c.pads)};
      if (std::string(mode) == "constant") in.push_back(Tensor::from_vector<float>({}, {-1.5f}));
      auto r =
          test::check_with_constants(std::move(OracleOp("Pad", 19).attr("mode", std::string(mode))),
                                     in, {false, true, true}, {"cuda"});
      EXPECT_EQ(r.provider, "cuda") << what << ": " << r.reason;
      in[0] = test::to_half(in[0]);
      if (in.size() > 2) in[2] = test::to_half(in[2]);
      r = test::check_with_constants(std::move(OracleOp("Pad", 19).attr("mode", std::string(mode))),
                                     in, {false, true, true}, {"cuda"});
      EXPECT_EQ(r.provider, "cuda") << "float16 " << what << ": " << r.reason;
    }
  // Axes (18), negative and out of order; pads and value as attributes (2); run-time pads; an
  // empty input padded with the constant.
  expect_on_cuda(on_cuda("Pad", 18)
                     .attr("mode", std::string("reflect"))
                     .random({3, 4, 5})
                     .input(ints({1, 2, 3, 1}))
                     .input(Tensor())
                     .input(ints({-1, 0}))
                     .check(0, 0),
                 "axes");
  expect_on_cuda(on_cuda("Pad", 2)
                     .attr("pads", std::vector<int64_t>{1, 0, 2, 3})
                     .attr("value", 0.75f)
                     .random({3, 4})
                     .check(0, 0),
                 "attributes");
  expect_on_cuda(on_cuda("Pad", 13).random({2, 3}).input(ints({1, 1, 1, 1})).check(0, 0),
                 "run-time pads");
  expect_on_cuda(on_cuda("Pad", 13).random({0, 3}).input(ints({2, 0, 1, 0})).check(0, 0),
                 "empty input");
  const auto r = test::check_with_constants(
      OracleOp("Pad", 13), {Tensor::from_vector<int64_t>({2}, {1, 2}), ints({1, 1})}, {false, true},
      {"cuda", "cpu"});
  EXPECT_EQ(r.provider, "cpu");
  EXPECT_NE(r.reason.find("dtype int64"), std::string::npos) << r.reason;
}

}  // namespace
}  // namespace polyinfer
