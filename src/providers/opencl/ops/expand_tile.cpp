// Expand and Tile on OpenCL, any dtype of 1, 2, 4 or 8 bytes: strided copies (kernels/copy.cl).
// Expand walks the output with the input's broadcast strides (0 on broadcast dimensions), output
// shape by the CPU's rule (expand_shape in ops/shape_rules.h); Tile walks the output as [repeats,
// dim] pairs, the repeat's input stride 0 (a repeat of 1 is one dimension). Constant
// shapes/repeats stay on the host; ones computed at run time are read back, which waits for the
// enqueued work. Refused at creation: other dtypes (strings, packed types), more than 6 walked
// dimensions (Expand: output rank; Tile: rank plus the repeated dimensions) when known then.
#include "ops/shape_rules.h"
#include "providers/opencl/ops/copy.h"

namespace polyinfer::opencl {
namespace {

class ExpandKernel final : public Kernel {
 public:
  explicit ExpandKernel(const KernelInfo& info) {
    dtype_ = require_movable(info, kMaxRank, 1);
    if (const Tensor* s = info.constant_input(1)) {
      const int64_t rank = std::max<int64_t>(s->numel(), known_rank(info, 0));
      if (rank > kMaxRank)
        info.unsupported("output rank " + std::to_string(rank) +
                         " (this OpenCL kernel takes rank <= 6)");
    }
    constants_.keep(info, 1);
    ctx_ = Context::get();
    kernel_ = copy_kernel(*ctx_, dtype_);
  }
  std::string impl() const override { return "opencl:copy"; }
  bool prepacked(size_t i) const override { return constants_.prepacked(i); }

  void run(KernelContext& kc) override {
    const std::string who = kc.node().label();
    const Tensor& x = kc.input(0);
    check_input(kc, x, kMaxRank, dtype_);
    HostConstantsContext hc(kc, constants_);
    const Shape out = expand_shape(x.shape(), read_int_list(hc.input(1), who.c_str()), who);
    PI_CHECK(out.size() <= kMaxRank, UnsupportedOp, who, ": output rank ", out.size(),
             " (this OpenCL kernel takes rank <= 6)");
    Tensor& y = kc.output(0, dtype_, out);
    check_input(kc, y, kMaxRank, dtype_);
    enqueue_copy(*ctx_, kernel_, x, y, out, broadcast_strides(x.shape(), out),
                 contiguous_strides(out), 0);
  }

 private:
  HostConstants constants_;
  std::shared_ptr<Context> ctx_;
  DType dtype_ = DType::Float32;
  cl_kernel kernel_ = nullptr;
};

// Dimensions Tile walks: one per input dimension, plus one per repeat above 1.
int64_t tile_walked(int64_t rank, const std::vector<int64_t>& reps) {
  int64_t n = rank;
  for (int64_t r : reps) n += r > 1;
  return n;
}

class TileKernel final : public Kernel {
 public:
  explicit TileKernel(const KernelInfo& info) {
    dtype_ = require_movable(info, kMaxRank, 1);
    const int rank = known_rank(info, 0);
    if (const Tensor* r = info.constant_input(1)) {
      // One repeat per input dimension (checked at run time).
      const std::vector<int64_t> reps = read_int_list(*r, info.node().label().c_str());
      const int64_t walked = tile_walked(static_cast<int64_t>(reps.size()), reps);
      if (walked > kMaxRank)
        info.unsupported(std::to_string(walked) +
                         " walked dimensions (rank plus repeated dimensions; this OpenCL "
                         "kernel walks <= 6)");
    } else if (rank < 0 || 2 * rank > kMaxRank) {
      info.unsupported("repeats computed at run time with an input of rank " +
                       (rank < 0 ? std::string("unknown") : std::to_string(rank)) +
                       " (this OpenCL kernel walks rank plus repeated dimensions <= 6)");
    }
    constants_.keep(info, 1);
    ctx_ = Context::get();
    kernel_ = copy_kernel(*ctx_, dtype_);
  }
  std::string impl() const override { return "opencl:copy"; }
  bool prepacked(size_t i) const override { return constants_.prepacked(i); }

  void run(KernelContext& kc) override {
    const std::string who = kc.node().label();
    const Tensor& x = kc.input(0);
    check_input(kc, x, kMaxRank, dtype_);
    HostConstantsContext hc(kc, constants_);
    const std::vector<int64_t> reps = read_int_list(hc.input(1), who.c_str());
    const int r = x.rank();
    PI_CHECK(static_cast<int>(reps.size()) == r, InvalidArgument, who, ": repeats ",
             int_list_str(reps), " must have one entry per dimension of ", x.describe());
    Shape out(r);
    for (int d = 0; d < r; ++d) {
      PI_CHECK(reps[d] >= 0, InvalidArgument, who, ": repeats ", int_list_str(reps),
               " has a negative entry");
      out[d] = shape_numel({x.shape()[d], reps[d]});
    }
    PI_CHECK(tile_walked(r, reps) <= kMaxRank, UnsupportedOp, who, ": ", tile_walked(r, reps),
             " walked dimensions (this OpenCL kernel walks <= 6)");
    Tensor& y = kc.output(0, dtype_, out);
    check_input(kc, y, kMaxRank, dtype_);
    if (y.numel() == 0) return;  // a repeat of 0 (the walk below skips it)
    // The output as [reps[d], dim[d]] pairs (row-major, so its own strides are contiguous).
    const std::vector<int64_t> xs = contiguous_strides(x.shape());
    Shape walk;
    std::vector<int64_t> sx;
    for (int d = 0; d < r; ++d) {
      if (reps[d] > 1) {
        walk.push_back(reps[d]);
        sx.push_back(0);
      }
      walk.push_back(x.shape()[d]);
      sx.push_back(xs[d]);
    }
    enqueue_copy(*ctx_, kernel_, x, y, walk, sx, contiguous_strides(walk), 0);
  }

 private:
  HostConstants constants_;
  std::shared_ptr<Context> ctx_;
  DType dtype_ = DType::Float32;
  cl_kernel kernel_ = nullptr;
};

PI_REGISTER_KERNEL("opencl", "", Expand, 8, 28, ExpandKernel);
PI_REGISTER_KERNEL("opencl", "", Tile, 6, 28, TileKernel);

}  // namespace
}  // namespace polyinfer::opencl
