// End to end on scikit-learn models (tests/data/sklearn/, written by
// tools/make_sklearn_models.py): each converted model, run by polyinfer, must give scikit-learn's
// own predictions for the test rows — labels exactly, probabilities and regression values within
// the bound each case states (the converted model holds its parameters as float32; scikit-learn
// computes with the float64 originals). Every model runs serially, in a large batch on two
// threads, and row by row. The *_zipmap models keep skl2onnx's default ZipMap: their
// probabilities come as a sequence of maps class -> probability, read back here into the
// [N, C] matrix predict_proba gives, column j being the class keys_<output>.npy names j-th.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "polyinfer/io.h"
#include "polyinfer/session.h"

namespace polyinfer {
namespace {

namespace fs = std::filesystem;

const fs::path kDir = fs::path(POLYINFER_SOURCE_DIR) / "tests" / "data" / "sklearn";

struct Case {
  const char* name;
  // |polyinfer - scikit-learn| <= atol + rtol * |scikit-learn| for float outputs.
  double atol, rtol;
};

// Why these bounds (the largest differences measured are in brackets): the converted models
// hold their parameters as float32 (~6e-8 relative rounding each) and polyinfer computes in
// double from them, then rounds the result to float32 (another ~6e-8). Probabilities are sums
// and ratios of such numbers: 1e-6 absolute [1.3e-7]. Regression values (tens to hundreds) get
// the same rounding relative to their size: 2e-6 relative, plus 1e-5 absolute for values near 0
// [4.7e-7 relative]. k-means distances go through standard float32 ONNX operators (Gemm,
// ReduceSumSquare): 1e-5 [8e-7]. preprocess_linreg is computed by scikit-learn itself in
// float32 (its predictions are float32) from terms of ~1e2: 1e-4 absolute [3e-5].
const Case kCases[] = {
    {"rf_classifier", 1e-6, 0},
    {"rf_regressor", 1e-5, 2e-6},
    {"gb_binary", 1e-6, 0},
    {"gb_multiclass", 1e-6, 0},
    {"gb_regressor", 1e-5, 2e-6},
    {"hgb_nan", 1e-6, 0},
    {"svc_rbf", 1e-6, 0},
    {"svc_poly_binary", 1e-6, 0},
    {"svr", 1e-5, 2e-6},
    {"logreg_multiclass", 1e-6, 0},
    {"logreg_binary", 1e-6, 0},
    {"kmeans", 1e-5, 1e-5},
    {"preprocess_linreg", 1e-4, 0},
    {"binarizer_logreg", 1e-6, 0},
    {"column_transformer", 1e-6, 0},
    {"ordinal_tree", 1e-6, 0},
    {"label_encoder", 0, 0},
    {"rf_zipmap", 1e-6, 0},
    {"logreg_zipmap_strings", 1e-6, 0},
};

std::map<std::string, Value> feeds_of(const Session& s, const fs::path& dir) {
  std::map<std::string, Value> feeds;
  for (const auto& in : s.inputs())
    feeds[in.name] = read_npy((dir / ("in_" + in.name + ".npy")).string());
  return feeds;
}

// Key i of a map's int64 or string keys, as text.
std::string key_text(const Tensor& keys, int64_t i) {
  return keys.dtype() == DType::String ? keys.data<std::string>()[i]
                                       : std::to_string(keys.data<int64_t>()[i]);
}

// Output `name` as a tensor: itself, or, for a sequence of maps (ZipMap's), the [N, C] matrix
// of its values with column j the key keys_<name>.npy holds j-th. Each map must hold exactly
// those keys.
Tensor as_tensor(const Value& v, const fs::path& dir, const std::string& name) {
  const fs::path keys_file = dir / ("keys_" + name + ".npy");
  if (!fs::exists(keys_file)) return v.tensor();
  const Tensor keys = read_npy(keys_file.string());
  const int64_t c = keys.numel();
  EXPECT_TRUE(v.holds_maps()) << name << " is a " << v.describe();
  if (!v.holds_maps()) return {};
  const auto& maps = v.maps();
  std::vector<float> out(maps.size() * static_cast<size_t>(c), NAN);
  for (size_t r = 0; r < maps.size(); ++r) {
    const Value& m = maps[r];
    EXPECT_EQ(m.key_type(), keys.dtype()) << name << " row " << r << ": " << m.describe();
    EXPECT_EQ(m.elem_type(), DType::Float32) << name << " row " << r << ": " << m.describe();
    EXPECT_EQ(m.map_keys().numel(), c) << name << " row " << r << ": " << m.describe();
    if (m.key_type() != keys.dtype() || m.elem_type() != DType::Float32) continue;
    std::map<std::string, int64_t> column;
    for (int64_t j = 0; j < c; ++j) column[key_text(keys, j)] = j;
    for (int64_t i = 0; i < m.map_keys().numel(); ++i) {
      const auto it = column.find(key_text(m.map_keys(), i));
      EXPECT_NE(it, column.end()) << name << " row " << r << ": unexpected key "
                                  << key_text(m.map_keys(), i);
      if (it != column.end()) out[r * c + it->second] = m.map_values().data<float>()[i];
    }
  }
  return Tensor::from_vector<float>({static_cast<int64_t>(maps.size()), c}, out);
}

// Compares `got` with scikit-learn's `want`, element by element (shapes may differ by unit
// dimensions: [N] against [N, 1]).
void expect_matches(const Tensor& got, const Tensor& want, const Case& c, const std::string& what) {
  ASSERT_EQ(got.numel(), want.numel())
      << what << ": " << got.describe() << " vs " << want.describe();
  if (want.dtype() == DType::String) {
    ASSERT_EQ(got.dtype(), DType::String) << what;
    const auto g = got.to_vector<std::string>(), w = want.to_vector<std::string>();
    for (size_t i = 0; i < g.size(); ++i) EXPECT_EQ(g[i], w[i]) << what << " [" << i << "]";
    return;
  }
  if (want.dtype() == DType::Int64) {
    ASSERT_EQ(got.dtype(), DType::Int64) << what;
    const auto g = got.to_vector<int64_t>(), w = want.to_vector<int64_t>();
    for (size_t i = 0; i < g.size(); ++i) EXPECT_EQ(g[i], w[i]) << what << " [" << i << "]";
    return;
  }
  // scikit-learn answers in float64, or in float32 where it computes in the input's float32.
  ASSERT_TRUE(want.dtype() == DType::Float64 || want.dtype() == DType::Float32) << what;
  ASSERT_EQ(got.dtype(), DType::Float32) << what;
  const auto g = got.to_vector<float>();
  std::vector<double> w;
  if (want.dtype() == DType::Float64) {
    w = want.to_vector<double>();
  } else {
    const auto f = want.to_vector<float>();
    w.assign(f.begin(), f.end());
  }
  double worst_abs = 0, worst_rel = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const double d = std::fabs(static_cast<double>(g[i]) - w[i]);
    worst_abs = std::max(worst_abs, d);
    if (w[i] != 0) worst_rel = std::max(worst_rel, d / std::fabs(w[i]));
    EXPECT_LE(d, c.atol + c.rtol * std::fabs(w[i]))
        << what << " [" << i << "]: " << g[i] << " vs " << w[i];
  }
  if (::testing::Test::HasFailure())
    std::cout << what << ": largest differences " << worst_abs << " absolute, " << worst_rel
              << " relative\n";
}

// Runs a case on `threads` threads, the test rows `copies` times over (a large batch takes the
// kernels' parallel paths), and checks every output scikit-learn gave.
void check(const Case& c, int threads, int copies) {
  const fs::path dir = kDir / c.name;
  SessionOptions opts;
  opts.threads = threads;
  Session s = Session::load((dir / "model.onnx").string(), opts);
  std::map<std::string, Value> feeds = feeds_of(s, dir);
  auto tile = [&](const Tensor& t) {
    if (copies == 1) return t;
    Shape shape = t.shape();
    shape[0] *= copies;
    Tensor out = Tensor::empty(t.dtype(), shape);
    const size_t bytes = t.nbytes();
    for (int k = 0; k < copies; ++k) {
      if (t.dtype() == DType::String) {
        const auto v = t.to_vector<std::string>();
        std::copy(v.begin(), v.end(), out.data<std::string>() + k * t.numel());
      } else {
        std::memcpy(static_cast<char*>(out.raw_data()) + k * bytes, t.raw_data(), bytes);
      }
    }
    return out;
  };
  for (auto& [name, v] : feeds) v = tile(v.tensor());
  const std::vector<Value> outs = s.run(feeds);
  int compared = 0;
  for (size_t i = 0; i < s.outputs().size(); ++i) {
    const fs::path file = dir / ("out_" + s.outputs()[i].name + ".npy");
    if (!fs::exists(file)) continue;
    const Tensor want = tile(read_npy(file.string()));
    expect_matches(as_tensor(outs[i], dir, s.outputs()[i].name), want, c,
                   std::string(c.name) + "/" + s.outputs()[i].name +
                       " threads=" + std::to_string(threads) + " copies=" + std::to_string(copies));
    ++compared;
  }
  EXPECT_GE(compared, 1) << c.name << ": no out_*.npy matches an output";
  EXPECT_EQ(s.placement().providers.at(0).nodes, s.placement().total_nodes) << c.name;
}

class SklearnModels : public ::testing::TestWithParam<Case> {};

TEST_P(SklearnModels, MatchScikitLearn) {
  if (!fs::exists(kDir / GetParam().name)) GTEST_FAIL() << "missing " << kDir / GetParam().name;
  check(GetParam(), 1, 1);
}

// 40 rows x 50 on two threads: the row-parallel paths, which must agree with the serial one.
TEST_P(SklearnModels, MatchScikitLearnInALargeBatchOnTwoThreads) { check(GetParam(), 2, 50); }

// Row by row: batch 1, where tree ensembles split the trees among threads instead.
TEST_P(SklearnModels, MatchScikitLearnOneRowAtATime) {
  const Case& c = GetParam();
  const fs::path dir = kDir / c.name;
  SessionOptions opts;
  opts.threads = 2;
  Session s = Session::load((dir / "model.onnx").string(), opts);
  const std::map<std::string, Value> feeds = feeds_of(s, dir);
  const int64_t rows = feeds.begin()->second.tensor().dim(0);
  for (int64_t r = 0; r < std::min<int64_t>(rows, 8); ++r) {
    std::map<std::string, Value> one;
    for (const auto& [name, v] : feeds) {
      const Tensor& t = v.tensor();
      Shape shape = t.shape();
      shape[0] = 1;
      Tensor row = Tensor::empty(t.dtype(), shape);
      if (t.dtype() == DType::String) {
        const auto all = t.to_vector<std::string>();
        const int64_t w = t.numel() / rows;
        std::copy(all.begin() + r * w, all.begin() + (r + 1) * w, row.data<std::string>());
      } else {
        const size_t w = t.nbytes() / static_cast<size_t>(rows);
        std::memcpy(row.raw_data(), static_cast<const char*>(t.raw_data()) + r * w, w);
      }
      one[name] = row;
    }
    const std::vector<Value> outs = s.run(one);
    for (size_t i = 0; i < s.outputs().size(); ++i) {
      const fs::path file = dir / ("out_" + s.outputs()[i].name + ".npy");
      if (!fs::exists(file)) continue;
      const Tensor all = read_npy(file.string());
      const int64_t w = all.numel() / rows;
      Tensor want = Tensor::empty(all.dtype(), {w});
      if (all.dtype() == DType::String) {
        const auto v = all.to_vector<std::string>();
        std::copy(v.begin() + r * w, v.begin() + (r + 1) * w, want.data<std::string>());
      } else {
        const size_t bytes = want.nbytes();
        std::memcpy(want.raw_data(), static_cast<const char*>(all.raw_data()) + r * bytes, bytes);
      }
      expect_matches(as_tensor(outs[i], dir, s.outputs()[i].name), want, c,
                     std::string(c.name) + "/" + s.outputs()[i].name + " row " + std::to_string(r));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, SklearnModels, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace polyinfer
