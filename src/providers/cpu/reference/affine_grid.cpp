// AffineGrid (opset 20): the sampling grid of a batch of 2-D or 3-D affine transforms, as
// PyTorch's affine_grid; GridSample consumes it.
//
// theta is [N, 2, 3] with size = [N, C, H, W] (grid [N, H, W, 2]) or [N, 3, 4] with
// size = [N, C, D, H, W] (grid [N, D, H, W, 3]). Every output position gets the normalized
// coordinates (x along W, y along H, z along D) of its pixel in [-1, 1]; the grid holds
// theta[n] * (x, y, [z,] 1).
#include <cstdint>
#include <string>
#include <vector>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "providers/cpu/reference/op_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

// The normalized coordinates of n pixels along one dimension. align_corners puts -1 and 1 at the
// centres of the corner pixels, otherwise at their outer edges. One pixel sits at 0 either way
// (PyTorch's choice; with align_corners the formula would divide by zero).
std::vector<double> base_coords(int64_t n, bool align_corners) {
  std::vector<double> c(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    if (n == 1) {
      c[i] = 0.0;
    } else if (align_corners) {
      c[i] = -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(n - 1);
    } else {
      c[i] = -1.0 + (2.0 * static_cast<double>(i) + 1.0) / static_cast<double>(n);
    }
  }
  return c;
}

class AffineGridKernel final : public Kernel {
 public:
  explicit AffineGridKernel(const KernelInfo& info)
      : align_corners_(info.attr_int("align_corners", 0) != 0), who_(info.node().label()) {}

  void run(KernelContext& ctx) override {
    const Tensor& theta = ctx.input(0);
    const std::vector<int64_t> size = read_int_list(ctx.input(1), who_.c_str());
    PI_CHECK(size.size() == 4 || size.size() == 5, InvalidArgument, who_, ": size ",
             int_list_str(size), " must be [N, C, H, W] or [N, C, D, H, W]");
    const int64_t dims = static_cast<int64_t>(size.size()) - 2;  // 2 or 3 spatial dimensions
    for (int64_t s : size)
      PI_CHECK(s >= 0, InvalidArgument, who_, ": size ", int_list_str(size), " is negative");
    const int64_t N = size[0];
    PI_CHECK(theta.shape() == (Shape{N, dims, dims + 1}), ShapeMismatch, who_, ": theta ",
             theta.describe(), " must be [", N, ", ", dims, ", ", dims + 1, "] for size ",
             int_list_str(size));
    // D is 1 for a 2-D grid, which makes the 2-D case the 3-D loop with z = 0 unused.
    const int64_t D = dims == 3 ? size[2] : 1, H = size[dims], W = size[dims + 1];
    Shape out_shape = dims == 3 ? Shape{N, D, H, W, 3} : Shape{N, H, W, 2};
    Tensor& grid = ctx.output(0, theta.dtype(), out_shape);
    if (shape_numel(out_shape) == 0) return;
    const std::vector<double> xs = base_coords(W, align_corners_);
    const std::vector<double> ys = base_coords(H, align_corners_);
    const std::vector<double> zs = base_coords(D, align_corners_);

    dispatch(FloatTypes{}, theta.dtype(), who_.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* th = theta.data<T>();
      T* out = grid.template data<T>();
      const int64_t cols = dims + 1;
      int64_t at = 0;
      for (int64_t n = 0; n < N; ++n) {
        // theta[n] as double, row-major [dims, dims + 1].
        std::vector<double> m(static_cast<size_t>(dims * cols));
        for (size_t i = 0; i < m.size(); ++i)
          m[i] = static_cast<double>(compute_t<T>(th[n * dims * cols + static_cast<int64_t>(i)]));
        for (int64_t d = 0; d < D; ++d) {
          for (int64_t h = 0; h < H; ++h) {
            for (int64_t w = 0; w < W; ++w) {
              // The homogeneous position (x, y, [z,] 1).
              const double p[4] = {xs[w], ys[h], dims == 3 ? zs[d] : 1.0, 1.0};
              for (int64_t r = 0; r < dims; ++r) {
                double v = 0;
                for (int64_t k = 0; k < cols; ++k) v += m[r * cols + k] * p[k];
                out[at++] = static_cast<T>(static_cast<compute_t<T>>(v));
              }
            }
          }
        }
      }
    });
  }

 private:
  bool align_corners_;
  std::string who_;
};

}  // namespace

PI_CPU_KERNEL(AffineGrid, 20, 28, AffineGridKernel);

}  // namespace polyinfer
