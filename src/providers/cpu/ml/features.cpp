// Feature selection and assembly of ai.onnx.ml (opset 1): ArrayFeatureExtractor and
// FeatureVectorizer.
#include "providers/cpu/ml/ml_common.h"
#include "providers/cpu/reference/op_util.h"

namespace polyinfer::ml {
namespace {

// ArrayFeatureExtractor: Z[..., j] = X[..., Y[j]] for the indices Y (any shape, flattened).
// A 1-D X gives [1, len(Y)] (as ONNX Runtime and the reference write it).
class ArrayFeatureExtractorKernel final : public Kernel {
 public:
  explicit ArrayFeatureExtractorKernel(const KernelInfo&) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& y = ctx.input(1);
    require_dtype(ctx, x,
                  {DType::Float32, DType::Float64, DType::Int64, DType::Int32, DType::String});
    require_dtype(ctx, y, {DType::Int64});
    PI_CHECK(x.rank() >= 1, ShapeMismatch, ctx.node().label(), ": X must have rank 1 or more");
    const int64_t c = x.dim(-1), k = y.numel();
    const int64_t* idx = y.data<int64_t>();
    for (int64_t j = 0; j < k; ++j)
      PI_CHECK(idx[j] >= 0 && idx[j] < c, InvalidArgument, ctx.node().label(), ": index ", idx[j],
               " is outside the last dimension of X (", c, ")");
    Shape shape = x.shape();
    if (x.rank() == 1) shape.insert(shape.begin(), 1);
    shape.back() = k;
    Tensor& z = ctx.output(0, x.dtype(), shape);
    const int64_t rows = c > 0 ? x.numel() / c : 0;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < k; ++j) copy_elems(z, r * k + j, x, r * c + idx[j], 1);
  }
};

// FeatureVectorizer: the inputs' rows side by side, as floats; input i contributes
// inputdimensions[i] columns (its own columns cut or padded with zeros to that many).
class FeatureVectorizerKernel final : public Kernel {
 public:
  explicit FeatureVectorizerKernel(const KernelInfo& info)
      : dims_(info.attr_ints("inputdimensions")) {
    check_range(info, dims_, 0, int64_t{1} << 40, "inputdimensions");
  }

  void run(KernelContext& ctx) override {
    const size_t inputs = ctx.num_inputs();
    PI_CHECK(dims_.empty() || dims_.size() == inputs, InvalidModel, ctx.node().label(),
             ": inputdimensions has ", dims_.size(), " entries for ", inputs, " inputs");
    std::vector<Rows> rows(inputs);
    std::vector<int64_t> width(inputs);
    int64_t total = 0;
    for (size_t i = 0; i < inputs; ++i) {
      const Tensor& x = ctx.input(i);
      require_dtype(ctx, x, {DType::Float32, DType::Float64, DType::Int64, DType::Int32});
      rows[i] = rows_of(x, ctx.node());
      PI_CHECK(rows[i].n == rows[0].n, ShapeMismatch, ctx.node().label(), ": input ", i, " has ",
               rows[i].n, " rows but input 0 has ", rows[0].n);
      width[i] = dims_.empty() ? rows[i].c : dims_[i];
      total += width[i];
    }
    const int64_t n = inputs ? rows[0].n : 0;
    float* out = ctx.output(0, DType::Float32, {n, total}).data<float>();
    std::fill(out, out + n * total, 0.f);
    std::vector<double> buf;
    int64_t col = 0;
    for (size_t i = 0; i < inputs; ++i) {
      const Tensor& x = ctx.input(i);
      const int64_t take = std::min(width[i], rows[i].c);
      buf.resize(static_cast<size_t>(take));
      for (int64_t r = 0; r < n; ++r) {
        read_as<double>(x, r * rows[i].c, take, buf.data());
        for (int64_t j = 0; j < take; ++j)
          out[r * total + col + j] = static_cast<float>(buf[static_cast<size_t>(j)]);
      }
      col += width[i];
    }
  }

 private:
  std::vector<int64_t> dims_;
};

}  // namespace

PI_REGISTER_KERNEL("cpu", "ai.onnx.ml", ArrayFeatureExtractor, 1, 5, ArrayFeatureExtractorKernel);
PI_REGISTER_KERNEL("cpu", "ai.onnx.ml", FeatureVectorizer, 1, 5, FeatureVectorizerKernel);

}  // namespace polyinfer::ml
