// The ai.onnx.ml operators of map values (opset 1): ZipMap, which turns a classifier's [N, C]
// scores into a sequence of N maps label -> score (what skl2onnx appends to every classifier
// unless told zipmap=False), and DictVectorizer, which lays a map out along a vocabulary.
#include <unordered_map>

#include "providers/cpu/ml/ml_common.h"
#include "providers/cpu/reference/op_util.h"

namespace polyinfer::ml {
namespace {

// ZipMap: row r of X becomes the map classlabels[j] -> X[r, j]. A 1-D X is one row (as ONNX
// Runtime reads it). The maps' keys are one tensor, made once and shared by every map: a value
// is never written after it is made (kernels do not write into inputs, callers get outputs to
// read).
class ZipMapKernel final : public Kernel {
 public:
  explicit ZipMapKernel(const KernelInfo& info)
      : labels_(ClassLabels::read(info, "classlabels_int64s", "classlabels_strings")),
        keys_(Tensor::empty(labels_.dtype(), {labels_.size()})) {
    for (int64_t k = 0; k < labels_.size(); ++k) labels_.write(keys_, k, k);
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    require_dtype(ctx, x, {DType::Float32});
    PI_CHECK(x.rank() == 1 || x.rank() == 2, ShapeMismatch, ctx.node().label(),
             ": X must be [C] or [N, C], got ", x.describe());
    const int64_t c = x.dim(-1), n = x.rank() == 2 ? x.dim(0) : 1;
    PI_CHECK(c == labels_.size(), ShapeMismatch, ctx.node().label(), ": X has ", c, " columns for ",
             labels_.size(), " class labels; there must be one per label");
    const float* p = x.data<float>();
    std::vector<Value> maps;
    maps.reserve(static_cast<size_t>(n));
    const size_t row_bytes = static_cast<size_t>(c) * sizeof(float);
    for (int64_t r = 0; r < n; ++r)
      maps.push_back(
          Value::map(keys_, Tensor::from_host(DType::Float32, {c}, p + r * c, row_bytes)));
    ctx.set_output(0, Value::map_sequence(std::move(maps), labels_.dtype(), DType::Float32));
  }

 private:
  ClassLabels labels_;
  Tensor keys_;
};

// DictVectorizer: Y[0, j] = X[vocabulary[j]], zero (an empty string) where X lacks the key.
// Keys of X outside the vocabulary are left out, as ONNX Runtime and scikit-learn's
// DictVectorizer.transform do (the specification asks for every key to be in it, but data seen
// after training is not checked by anyone else either).
class DictVectorizerKernel final : public Kernel {
 public:
  explicit DictVectorizerKernel(const KernelInfo& info) {
    const auto strings = info.attr_strings("string_vocabulary");
    const auto ints = info.attr_ints("int64_vocabulary");
    PI_CHECK(strings.empty() != ints.empty(), InvalidModel, info.node().label(),
             ": exactly one of 'string_vocabulary' and 'int64_vocabulary' must be given");
    by_string_ = !strings.empty();
    size_ = static_cast<int64_t>(by_string_ ? strings.size() : ints.size());
    // A word listed twice keeps its first column, as in ONNX Runtime.
    for (int64_t j = 0; j < size_; ++j) {
      if (by_string_) strings_.emplace(strings[static_cast<size_t>(j)], j);
      else
        ints_.emplace(ints[static_cast<size_t>(j)], j);
    }
  }

  void run(KernelContext& ctx) override {
    const Value& m = ctx.value(0);
    PI_CHECK(m.is_map(), InvalidArgument, ctx.node().label(), ": X must be a map, got ",
             m.describe());
    const Tensor& keys = m.map_keys();
    const Tensor& values = m.map_values();
    PI_CHECK((keys.dtype() == DType::String) == by_string_, InvalidArgument, ctx.node().label(),
             ": X has ", dtype_name(keys.dtype()), " keys but the vocabulary is of ",
             by_string_ ? "strings" : "int64s");
    require_dtype(ctx, values, {DType::Float32, DType::Float64, DType::Int64, DType::String});
    Tensor& y = ctx.output(0, values.dtype(), {1, size_});
    if (values.dtype() == DType::String) {
      std::fill(y.data<std::string>(), y.data<std::string>() + size_, std::string());
    } else if (y.nbytes()) {
      std::memset(y.raw_data(), 0, y.nbytes());
    }
    for (int64_t i = 0; i < keys.numel(); ++i) {
      const int64_t j = column(keys, i);
      if (j >= 0) copy_elems(y, j, values, i, 1);
    }
  }

 private:
  // The column of key i, or -1 for a key outside the vocabulary.
  int64_t column(const Tensor& keys, int64_t i) const {
    if (by_string_) {
      const auto it = strings_.find(keys.data<std::string>()[i]);
      return it == strings_.end() ? -1 : it->second;
    }
    const int64_t k = dispatch(IntTypes{}, keys.dtype(), "DictVectorizer key", [&](auto tag) {
      using T = typename decltype(tag)::type;
      return static_cast<int64_t>(keys.data<T>()[i]);
    });
    const auto it = ints_.find(k);
    return it == ints_.end() ? -1 : it->second;
  }

  bool by_string_ = false;
  int64_t size_ = 0;
  std::unordered_map<std::string, int64_t> strings_;
  std::unordered_map<int64_t, int64_t> ints_;
};

}  // namespace

PI_REGISTER_KERNEL("cpu", "ai.onnx.ml", ZipMap, 1, 5, ZipMapKernel);
PI_REGISTER_KERNEL("cpu", "ai.onnx.ml", DictVectorizer, 1, 5, DictVectorizerKernel);

}  // namespace polyinfer::ml
