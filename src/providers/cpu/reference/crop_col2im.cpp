// CenterCropPad and Col2Im (both opset 18): operators that move image elements into a new frame.
//
// CenterCropPad crops (window start rounded down) or zero-pads (the odd extra element on the right)
// the chosen axes to a target size around their centre. Col2Im is the inverse of im2col, like
// PyTorch's fold: it adds the columns of [N, C * prod(block_shape), L] back into the N-D images
// [N, C, image_shape...] they were cut from; overlapping blocks sum.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "providers/cpu/reference/op_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

// Advances a row-major multi-index over `dims` by one (wrapping to all zeros at the end).
void next_index(std::vector<int64_t>& idx, const std::vector<int64_t>& dims) {
  for (size_t d = dims.size(); d-- > 0;) {
    if (++idx[d] < dims[d]) return;
    idx[d] = 0;
  }
}

class CenterCropPadKernel final : public Kernel {
 public:
  explicit CenterCropPadKernel(const KernelInfo& info)
      : has_axes_(info.has_attr("axes")),
        axes_(info.attr_ints("axes")),
        who_(info.node().label()) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const std::vector<int64_t> target = read_int_list(ctx.input(1), who_.c_str());
    const int64_t rank = x.rank();
    std::vector<int64_t> axes;
    if (has_axes_) {
      std::vector<bool> seen(static_cast<size_t>(rank), false);
      for (int64_t a : axes_) {
        const int64_t axis = normalize_axis(a, rank, who_.c_str());
        PI_CHECK(!seen[axis], InvalidArgument, who_, ": axes ", int_list_str(axes_),
                 " name an axis twice");
        seen[axis] = true;
        axes.push_back(axis);
      }
    } else {
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    }
    PI_CHECK(target.size() == axes.size(), InvalidArgument, who_, ": shape ", int_list_str(target),
             " must have one entry per axis (", axes.size(), ")");

    // Per dimension: where the copied window starts in the input and in the output, and its
    // length. Dimensions not named in axes are copied whole.
    const Shape& in_shape = x.shape();
    Shape out_shape = in_shape;
    std::vector<int64_t> in_start(static_cast<size_t>(rank), 0);
    std::vector<int64_t> out_start(static_cast<size_t>(rank), 0);
    std::vector<int64_t> len = in_shape;
    for (size_t i = 0; i < axes.size(); ++i) {
      const int64_t a = axes[i], dim = in_shape[a], want = target[i];
      PI_CHECK(want >= 0, InvalidArgument, who_, ": shape ", int_list_str(target),
               " has a negative size");
      out_shape[a] = want;
      if (want < dim) {
        in_start[a] = (dim - want) / 2;
        len[a] = want;
      } else {
        out_start[a] = (want - dim) / 2;
      }
    }

    Tensor& y = ctx.output(0, x.dtype(), out_shape);
    // The padding is zero: all-zero bytes for every numeric type and bool; string tensors come
    // allocated as empty strings.
    if (x.dtype() != DType::String && y.nbytes() > 0) std::memset(y.raw_data(), 0, y.nbytes());
    if (rank == 0) {
      copy_elems(y, 0, x, 0, 1);
      return;
    }
    for (int64_t l : len)
      if (l == 0) return;
    // Copy the window row by row: the outer dimensions walk a multi-index, the last dimension is
    // one contiguous run in both tensors.
    const std::vector<int64_t> in_strides = strides_of(in_shape);
    const std::vector<int64_t> out_strides = strides_of(out_shape);
    const std::vector<int64_t> outer(len.begin(), len.end() - 1);
    const int64_t rows = product(outer, 0, outer.size());
    std::vector<int64_t> idx(outer.size(), 0);
    for (int64_t r = 0; r < rows; ++r) {
      int64_t src = 0, dst = 0;
      for (int64_t d = 0; d < rank; ++d) {
        const int64_t i = d + 1 < rank ? idx[d] : 0;
        src += (in_start[d] + i) * in_strides[d];
        dst += (out_start[d] + i) * out_strides[d];
      }
      copy_elems(y, dst, x, src, len[rank - 1]);
      next_index(idx, outer);
    }
  }

 private:
  bool has_axes_;
  std::vector<int64_t> axes_;
  std::string who_;
};

// a + b for the accumulator: integers wrap (as unsigned arithmetic) instead of overflowing, which
// would be undefined behaviour for the signed types.
template <class A> A wrapping_add(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    using U = std::make_unsigned_t<A>;
    return static_cast<A>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}

class Col2ImKernel final : public Kernel {
 public:
  explicit Col2ImKernel(const KernelInfo& info)
      : strides_(info.attr_ints("strides")),
        pads_(info.attr_ints("pads")),
        dilations_(info.attr_ints("dilations")),
        who_(info.node().label()) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const std::vector<int64_t> image = read_int_list(ctx.input(1), who_.c_str());
    const std::vector<int64_t> block = read_int_list(ctx.input(2), who_.c_str());
    const size_t nd = image.size();
    PI_CHECK(x.rank() == 3, ShapeMismatch, who_,
             ": input must be [N, C * prod(block_shape), L], got ", x.describe());
    PI_CHECK(nd >= 1 && block.size() == nd, InvalidArgument, who_, ": image_shape ",
             int_list_str(image), " and block_shape ", int_list_str(block),
             " must be non-empty and of one length");
    const std::vector<int64_t> strides = strides_.empty() ? std::vector<int64_t>(nd, 1) : strides_;
    const std::vector<int64_t> dilations =
        dilations_.empty() ? std::vector<int64_t>(nd, 1) : dilations_;
    const std::vector<int64_t> pads = pads_.empty() ? std::vector<int64_t>(2 * nd, 0) : pads_;
    PI_CHECK(strides.size() == nd && dilations.size() == nd && pads.size() == 2 * nd,
             InvalidArgument, who_, ": strides ", int_list_str(strides), ", dilations ",
             int_list_str(dilations), " and pads ", int_list_str(pads), " must fit ", nd,
             " spatial dimensions");

    // The limit keeps every sum and product below in int64 range; no real image comes near it.
    constexpr int64_t kMax = int64_t(1) << 40;
    std::vector<int64_t> blocks(nd);  // sliding-block positions per dimension
    for (size_t d = 0; d < nd; ++d) {
      const int64_t pb = pads[d], pe = pads[d + nd];
      PI_CHECK(image[d] >= 0 && image[d] <= kMax && block[d] > 0 && block[d] <= kMax &&
                   strides[d] > 0 && strides[d] <= kMax && dilations[d] > 0 &&
                   dilations[d] <= kMax && pb >= 0 && pb <= kMax && pe >= 0 && pe <= kMax,
               InvalidArgument, who_, ": dimension ", d, " has image size ", image[d],
               ", block size ", block[d], ", stride ", strides[d], ", dilation ", dilations[d],
               " and pads ", pb, "/", pe,
               "; sizes, strides and dilations must be positive, pads "
               "non-negative, all at most 2^40");
      const int64_t padded = image[d] + pb + pe;
      // The dilated block spans dilation * (block - 1) + 1 elements and must fit the padded
      // image; the division avoids overflowing the product.
      PI_CHECK(padded >= 1 && (block[d] - 1) <= (padded - 1) / dilations[d], InvalidArgument, who_,
               ": a block of ", block[d], " with dilation ", dilations[d],
               " does not fit the padded image size ", padded, " in dimension ", d);
      blocks[d] = (padded - (dilations[d] * (block[d] - 1) + 1)) / strides[d] + 1;
    }
    const int64_t K = shape_numel(block);
    const int64_t L = shape_numel(blocks);
    const int64_t N = x.dim(0);
    PI_CHECK(x.dim(1) % K == 0 && x.dim(2) == L, ShapeMismatch, who_, ": input ", x.describe(),
             " must be [N, C * ", K, ", ", L, "] for block_shape ", int_list_str(block), " and ",
             int_list_str(blocks), " sliding blocks");
    const int64_t C = x.dim(1) / K;
    Shape out_shape = {N, C};
    out_shape.insert(out_shape.end(), image.begin(), image.end());
    const int64_t image_size = shape_numel(image);
    const std::vector<int64_t> image_strides = strides_of(image);

    dispatch(NumericTypes{}, x.dtype(), who_.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using A = compute_t<T>;
      Tensor& y = ctx.output(0, x.dtype(), out_shape);
      const T* in = x.data<T>();
      T* out = y.template data<T>();
      if (N * C == 0) return;
      std::vector<A> acc(static_cast<size_t>(image_size));
      for (int64_t nc = 0; nc < N * C; ++nc) {
        std::fill(acc.begin(), acc.end(), A(0));
        // Row kk of this (n, c) holds kernel offset kk of every block, blocks in row-major order.
        const T* col = in + nc * K * L;
        std::vector<int64_t> offset(nd, 0);
        for (int64_t kk = 0; kk < K; ++kk) {
          std::vector<int64_t> pos(nd, 0);
          for (int64_t l = 0; l < L; ++l) {
            int64_t at = 0;
            bool inside = true;
            for (size_t d = 0; d < nd && inside; ++d) {
              const int64_t i = pos[d] * strides[d] - pads[d] + offset[d] * dilations[d];
              inside = i >= 0 && i < image[d];
              at += i * image_strides[d];
            }
            if (inside) acc[at] = wrapping_add(acc[at], A(col[kk * L + l]));
            next_index(pos, blocks);
          }
          next_index(offset, block);
        }
        for (int64_t i = 0; i < image_size; ++i) out[nc * image_size + i] = static_cast<T>(acc[i]);
      }
    });
  }

 private:
  std::vector<int64_t> strides_, pads_, dilations_;
  std::string who_;
};

}  // namespace

PI_CPU_KERNEL(CenterCropPad, 18, 28, CenterCropPadKernel);
PI_CPU_KERNEL(Col2Im, 18, 28, Col2ImKernel);

}  // namespace polyinfer
