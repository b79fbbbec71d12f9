// GlobalAveragePool and GlobalMaxPool through oneDNN (fast tier; reference/pool.cpp holds the
// reference kernels), in NCHW or — as the ai.polyinfer NhwcGlobal* operators the channels-last
// pass emits — NHWC: one window covering the 1-D or 2-D input. float32; 8-bit for the maximum.
// (Windowed MaxPool / AveragePool have faster loops of their own in either layout:
// fast/pool.cpp; NhwcGlobalAveragePool's table tries fast/pool.cpp's first.)

#include "providers/cpu/onednn/onednn.h"
#include "runtime/kernel.h"

namespace polyinfer::cpu {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

class OnednnPool final : public Kernel {
 public:
  explicit OnednnPool(const KernelInfo& info) : label_(info.node().label()) {
    const std::string& op = info.node().op_type;
    const std::string base = info.node().domain == "ai.polyinfer" ? op.substr(4) : op;  // Nhwc*
    max_ = base == "GlobalMaxPool";
    channels_last_ = info.node().domain == "ai.polyinfer";
    const ir::TypeInfo* xt = info.input_type(0);
    // Max pooling also on 8-bit values (a QDQ model's MaxPool after fuse-qdq): the maximum of
    // integers is exact; average pooling on them would round differently, so it stays float.
    if (xt && max_ && (xt->elem == DType::UInt8 || xt->elem == DType::Int8)) dtype_ = xt->elem;
    if (!xt || (xt->elem != DType::Undefined && xt->elem != dtype_))
      info.unsupported("oneDNN path: dtype other than float32 (or 8-bit for max pooling)");
    if (!xt->has_shape || (xt->dims.size() != 3 && xt->dims.size() != 4))
      info.unsupported("oneDNN path: input of unknown rank or 3-D pooling");
    // Static shape: make the primitive now (an uncovered case refuses here, not at run time).
    bool known = true;
    for (int64_t d : xt->dims) known = known && d > 0;
    if (known) plans_.get(xt->dims, label_, [&] { return make_plan(xt->dims); });
  }

  std::string impl() const override { return impl_; }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    PI_CHECK(x.dtype() == dtype_ && (x.rank() == 3 || x.rank() == 4), InvalidArgument, label_,
             ": X must be a ", dtype_name(dtype_), " tensor of rank 3 or 4 here, got ",
             dtype_name(x.dtype()), shape_str(x.shape()));
    Plan& p = plans_.get(x.shape(), label_, [&] { return make_plan(x.shape()); });
    Tensor& y = ctx.output(0, dtype_, p.y_shape);
    dnnl::stream& s = stream_;
    onednn::guarded(label_, [&] {
      std::unordered_map<int, memory> args{
          {DNNL_ARG_SRC, onednn::wrap(p.src_md, x)},
          {DNNL_ARG_DST, memory(p.dst_md, onednn::engine(), y.raw_data())}};
      onednn::add_thread_scratchpad(args, p.scratchpad_md);
      p.prim.execute(s, args);
      s.wait();
    });
  }

 private:
  struct Plan {
    Shape y_shape;
    dnnl::pooling_forward prim;
    memory::desc src_md, dst_md, scratchpad_md;
  };

  Plan make_plan(const Shape& xs) {
    const bool one_d = xs.size() == 3;
    const int64_t N = xs[0], C = channels_last_ ? xs.back() : xs[1];
    const Shape spatial =
        channels_last_ ? Shape(xs.begin() + 1, xs.end() - 1) : Shape(xs.begin() + 2, xs.end());
    const std::vector<int64_t> ones(spatial.size(), 1), zeros(spatial.size(), 0);
    auto two_d = [&](const std::vector<int64_t>& v, int64_t pad) {
      return one_d ? memory::dims{pad, v[0]} : memory::dims{v[0], v[1]};
    };
    const memory::dims in_hw = two_d(spatial, 1), out_hw = two_d(ones, 1);
    const tag t = channels_last_ ? tag::nhwc : tag::nchw;
    Plan p;
    const dt type = dtype_ == DType::UInt8 ? dt::u8 : dtype_ == DType::Int8 ? dt::s8 : dt::f32;
    p.src_md = memory::desc({N, C, in_hw[0], in_hw[1]}, type, t);
    p.dst_md = memory::desc({N, C, out_hw[0], out_hw[1]}, type, t);
    p.y_shape = channels_last_ ? Shape{N} : Shape{N, C};
    for (size_t i = 0; i < spatial.size(); ++i) p.y_shape.push_back(1);
    if (channels_last_) p.y_shape.push_back(C);
    const auto alg =
        max_ ? dnnl::algorithm::pooling_max : dnnl::algorithm::pooling_avg_exclude_padding;
    auto desc =
        dnnl::pooling_forward::desc(dnnl::prop_kind::forward_inference, alg, p.src_md, p.dst_md,
                                    two_d(ones, 1), in_hw, two_d(zeros, 0), two_d(zeros, 0));
    dnnl::primitive_attr attr;
    onednn::use_own_scratchpad(attr);
    dnnl::pooling_forward::primitive_desc pd(desc, attr, onednn::engine());
    impl_ = onednn::impl_name(pd);
    p.prim = dnnl::pooling_forward(pd);
    p.scratchpad_md = pd.scratchpad_desc();
    return p;
  }

  std::string label_;
  bool max_ = false, channels_last_ = false;
  DType dtype_ = DType::Float32;
  onednn::PlanCache<Shape, Plan> plans_;
  dnnl::stream stream_{onednn::engine()};  // one per kernel, not one per run
  std::string impl_ = "onednn";
};

PI_CPU_CANDIDATE("", GlobalAveragePool, 1, 28, "onednn_pool", OnednnPool);
PI_CPU_CANDIDATE("", GlobalMaxPool, 1, 28, "onednn_pool", OnednnPool);
PI_CPU_CANDIDATE("ai.polyinfer", NhwcGlobalAveragePool, 1, 1, "onednn_pool", OnednnPool);
PI_CPU_FAST_KERNEL("ai.polyinfer", NhwcGlobalMaxPool, 1, 1, OnednnPool);

}  // namespace
}  // namespace polyinfer::cpu
