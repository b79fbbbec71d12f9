#include "providers/cpu/onednn/conv_plan.h"

#include <algorithm>
#include <unordered_map>
#include <utility>
#include <vector>

namespace polyinfer::cpu::onednn {

using dnnl::memory;
using tag = memory::format_tag;

namespace {

// Whether oneDNN takes `strides` for `dims`: it rejects a view in which, ordered by stride, a
// dimension's stride is smaller than the span of those inside it (the next image of a view of
// every second row of an odd-height image starts inside the view's last row's span). A
// dimension of extent 1 is never stepped: its stride does not count.
bool non_overlapping(const memory::dims& dims, const memory::dims& strides) {
  std::vector<size_t> order(dims.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return strides[a] < strides[b]; });
  int64_t span = 1;
  for (size_t i : order) {
    if (dims[i] == 1) continue;
    if (strides[i] < span) return false;
    span = strides[i] * dims[i];
  }
  return true;
}

// A 1-D convolution written as 2-D over [H, 1] (TF/Keras Conv1D exports): X [h, w] of width
// 1 under a window one wide, unpadded along the width.
bool width_one(const memory::dims& in, const memory::dims& kernel, const memory::dims& pad_l,
               const memory::dims& pad_r) {
  return kernel.size() == 2 && in[0] > 1 && in[1] == 1 && kernel[1] == 1 && pad_l[1] == 0 &&
         pad_r[1] == 0;
}

}  // namespace

ConvDims conv_dims(const Shape& xs, const Shape& ws, const WindowAttrs& attrs, bool channels_last,
                   const std::string& label, bool fold_depth) {
  const size_t rank = ws.size() - 2;  // spatial axes: 1, 2 or 3
  PI_CHECK(rank >= 1 && rank <= 3 && xs.size() == ws.size(), ShapeMismatch, label, ": X ",
           shape_str(xs), " and weights ", shape_str(ws), " are not a 1-D to 3-D convolution");
  PI_CHECK(!channels_last || rank <= 2, Internal, label, ": channels-last 3-D convolution");
  const int64_t N = xs[0], C = channels_last ? xs.back() : xs[1], M = ws[0], G = attrs.group;
  PI_CHECK(C == ws[1] * G, ShapeMismatch, label, ": X has ", C, " channels but weights ",
           shape_str(ws), " with group ", G, " expect ", ws[1] * G);
  PI_CHECK(M % G == 0, InvalidModel, label, ": ", M,
           " output channels are not divisible by "
           "group ",
           G);
  const Shape spatial =
      channels_last ? Shape(xs.begin() + 1, xs.end() - 1) : Shape(xs.begin() + 2, xs.end());
  const Shape kernel(ws.begin() + 2, ws.end());
  PI_CHECK(attrs.kernel_shape.empty() || attrs.kernel_shape == kernel, InvalidModel, label,
           ": kernel_shape ", shape_str(attrs.kernel_shape), " does not match the weights ",
           shape_str(ws));
  const WindowGeometry g = window_geometry(attrs, spatial, kernel, label);
  // 1-D runs as 2-D of height 1; a 3-D convolution that never mixes depths, where asked, as 2-D
  // over its depth slices, which are then further images.
  const bool flat = rank == 3 && fold_depth && kernel[0] == 1 && g.strides[0] == 1 &&
                    g.pad_begin[0] == 0 && g.pad_end[0] == 0 && (N == 1 || g.in[0] == 1);
  auto axes = [&](const std::vector<int64_t>& v, int64_t pad) {
    memory::dims out(v.begin() + (flat ? 1 : 0), v.end());
    if (rank == 1) out.insert(out.begin(), pad);
    return out;
  };
  ConvDims d;
  memory::dims in_sp = axes(g.in, 1), out_sp = axes(g.out, 1);
  d.kernel = axes(kernel, 1);
  d.strides = axes(g.strides, 1);
  d.pad_l = axes(g.pad_begin, 0);
  d.pad_r = axes(g.pad_end, 0);
  d.dilation = axes(g.dilations, 1);
  for (auto& v : d.dilation) v -= 1;
  if (width_one(in_sp, d.kernel, d.pad_l, d.pad_r)) {
    // brgconv blocks on the output width, so each of its products would get one pixel (2.3x
    // slower than the same convolution over [1, H] on AVX-512). Described as over [1, H]:
    // a 1-wide axis adds no stride to the other, so X, Y (NCHW and NHWC alike, depth slices
    // too) and the weights keep their bytes, and y_shape stays in the tensors' layout.
    for (memory::dims* v :
         {&in_sp, &out_sp, &d.kernel, &d.strides, &d.pad_l, &d.pad_r, &d.dilation})
      std::swap((*v)[0], (*v)[1]);
    // The new height is one pixel under a one-tap window: its stride and dilation are moot.
    d.strides[0] = 1;
    d.dilation[0] = 0;
  }
  const int64_t D = flat ? g.in[0] : 1;
  d.src = {N * D, C};
  d.dst = {N * D, M};
  d.src.insert(d.src.end(), in_sp.begin(), in_sp.end());
  d.dst.insert(d.dst.end(), out_sp.begin(), out_sp.end());
  d.weights = G == 1 ? memory::dims{M, C} : memory::dims{G, M / G, C / G};
  d.weights.insert(d.weights.end(), d.kernel.begin(), d.kernel.end());
  d.M = M;
  d.y_shape = channels_last ? Shape{N} : Shape{N, M};
  for (int64_t o : g.out) d.y_shape.push_back(o);
  if (channels_last) d.y_shape.push_back(M);
  if (flat && D > 1) {
    // One image of D slices: slice z of [1, C, D, H, W] is image z, its channels D*H*W apart.
    const int64_t hw = in_sp[0] * in_sp[1], ohw = out_sp[0] * out_sp[1];
    d.src_strides = {hw, D * hw, in_sp[1], 1};
    d.dst_strides = {ohw, D * ohw, out_sp[1], 1};
    return d;
  }
  if (d.kernel.size() != 2) return d;
  const bool pointwise = d.kernel == memory::dims{1, 1};
  const bool unpadded = d.pad_l == memory::dims{0, 0} && d.pad_r == memory::dims{0, 0};
  if (pointwise && unpadded && d.strides != memory::dims{1, 1}) {
    const int64_t NB = d.src[0], H = in_sp[0], W = in_sp[1], sh = d.strides[0], sw = d.strides[1];
    const memory::dims view{NB, C, out_sp[0], out_sp[1]};
    const memory::dims strides = channels_last ? memory::dims{H * W * C, 1, sh * W * C, sw * C}
                                               : memory::dims{C * H * W, H * W, sh * W, sw};
    if (non_overlapping(view, strides)) {
      d.src = view;
      d.src_strides = strides;
      d.strides = {1, 1};
    }
  }
  return d;
}

ConvPlan make_conv_plan(const dnnl::convolution_forward::primitive_desc& pd, const ConvDims& dims,
                        bool channels_last, memory::data_type src_type, memory::data_type dst_type,
                        const void* weights, memory::data_type weight_type,
                        std::optional<memory> bias, bool with_z, dnnl::stream& s) {
  ConvPlan p;
  p.y_shape = dims.y_shape;
  p.prim = dnnl::convolution_forward(pd);
  const bool three_d = dims.src.size() == 5;
  const tag user_tag =
      three_d ? (channels_last ? tag::ndhwc : tag::ncdhw) : (channels_last ? tag::nhwc : tag::nchw);
  p.user_src = dims.src_strides.empty() ? memory::desc(dims.src, src_type, user_tag)
                                        : memory::desc(dims.src, src_type, dims.src_strides);
  p.user_dst = dims.dst_strides.empty() ? memory::desc(dims.dst, dst_type, user_tag)
                                        : memory::desc(dims.dst, dst_type, dims.dst_strides);
  const bool grouped = dims.weights.size() == dims.src.size() + 1;
  const tag w_tag =
      three_d ? (grouped ? tag::goidhw : tag::oidhw) : (grouped ? tag::goihw : tag::oihw);
  const memory::desc user_wd(dims.weights, weight_type, w_tag);
  p.weights = host_memory(pd.weights_desc(), &p.weights_buf);
  write_weights(weights, user_wd, p.weights, s);
  p.bias = std::move(bias);
  if (pd.src_desc() != p.user_src) {
    p.src_buf = memory(pd.src_desc(), engine());
    p.to_src =
        dnnl::reorder(dnnl::reorder::primitive_desc(engine(), p.user_src, engine(), pd.src_desc()));
  }
  if (pd.dst_desc() != p.user_dst) {
    p.dst_buf = memory(pd.dst_desc(), engine());
    p.from_dst =
        dnnl::reorder(dnnl::reorder::primitive_desc(engine(), pd.dst_desc(), engine(), p.user_dst));
  }
  p.scratchpad = pd.scratchpad_desc();
  if (with_z)
    p.z_in =
        dnnl::reorder(dnnl::reorder::primitive_desc(engine(), p.user_dst, engine(), pd.dst_desc()));
  s.wait();
  return p;
}

void run_conv_plan(ConvPlan& p, dnnl::stream& s, const Tensor& x, Tensor& y, const Tensor* z,
                   std::unordered_map<int, memory> extra) {
  run_conv_plan(p, s, x.raw_data(), y, z, std::move(extra));
}

void run_conv_plan(ConvPlan& p, dnnl::stream& s, const void* x, Tensor& y, const Tensor* z,
                   std::unordered_map<int, memory> extra) {
  memory src(p.user_src, engine(), const_cast<void*>(x));
  if (p.src_buf) {
    p.to_src->execute(s, src, *p.src_buf);
    src = *p.src_buf;
  }
  memory dst(p.user_dst, engine(), y.raw_data());
  memory conv_dst = p.dst_buf ? *p.dst_buf : dst;
  // Z already in the destination (the executor lent Z's memory to Y): nothing to copy.
  if (z && !(z->raw_data() == y.raw_data() && !p.dst_buf)) {
    memory zm = wrap(p.user_dst, *z);
    p.z_in->execute(s, zm, conv_dst);
  }
  extra.emplace(DNNL_ARG_SRC, src);
  extra.emplace(DNNL_ARG_WEIGHTS, p.weights);
  extra.emplace(DNNL_ARG_DST, conv_dst);
  if (p.bias) extra.emplace(DNNL_ARG_BIAS, *p.bias);
  add_thread_scratchpad(extra, p.scratchpad);
  p.prim.execute(s, extra);
  if (p.dst_buf) p.from_dst->execute(s, *p.dst_buf, dst);
  s.wait();
}

}  // namespace polyinfer::cpu::onednn
