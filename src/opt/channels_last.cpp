#include "opt/channels_last.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "opt/graph_util.h"

namespace polyinfer::opt {
namespace {

const std::vector<int64_t> kToNhwc{0, 2, 3, 1}, kToNchw{0, 3, 1, 2};

bool is(const ir::Node& n, const char* op, const char* domain = "") {
  return n.op_type == op && n.domain == domain;
}

// Static rank-4 float type of `name`, or nullptr.
const ir::TypeInfo* rank4_float(const ir::Graph& g, const std::string& name) {
  const ir::TypeInfo* t = g.type_of(name);
  if (!t || t->kind != ir::TypeInfo::Kind::Tensor || !t->has_shape || t->dims.size() != 4 ||
      t->elem != DType::Float32)
    return nullptr;
  return t;
}

// `t` with its dimensions permuted; a type whose rank is not the permutation's (unknown shape)
// keeps only its element type.
ir::TypeInfo permuted(const ir::TypeInfo& t, const std::vector<int64_t>& perm) {
  ir::TypeInfo out = t;
  if (!t.has_shape || t.dims.size() != perm.size()) {
    out.has_shape = false;
    out.dims.clear();
    out.dim_params.clear();
    return out;
  }
  for (size_t i = 0; i < perm.size(); ++i) {
    out.dims[i] = t.dims[perm[i]];
    if (!t.dim_params.empty()) out.dim_params[i] = t.dim_params[perm[i]];
  }
  return out;
}

// A 2-D float convolution (Conv or FusedConv) with constant 4-D weights. The weights alone
// settle it: ONNX requires X to have W's rank and type, and the input's own type is often not
// known after folding (a Slice whose bounds were computed from Shape ops).
bool convertible_conv(const ir::Graph& g, const ir::Node& n) {
  if (!is(n, "Conv") && !is(n, "FusedConv", "ai.polyinfer")) return false;
  if (n.inputs.size() < 2 || n.outputs.empty()) return false;
  auto w = g.initializers.find(n.inputs[1]);
  if (w == g.initializers.end() || w->second.rank() != 4 || w->second.dtype() != DType::Float32)
    return false;
  if (n.inputs.size() > 2 && !n.inputs[2].empty() && !g.initializers.count(n.inputs[2]))
    return false;
  return true;
}

// QLinearConv with constant int8 4-D weights, zero weight zero points and constant scales, zero
// points and bias: the form oneDNN's int8 convolution runs (onednn/qlinear.cpp), which reads and
// writes NHWC; on NCHW it pays a reorder in and out that costs as much as the convolution.
bool convertible_qconv(const ir::Graph& g, const ir::Node& n) {
  const bool residual = is(n, "QLinearConvAdd", "ai.polyinfer");
  if (!(is(n, "QLinearConv") || residual) || n.inputs.size() < (residual ? 14u : 8u) ||
      n.outputs.empty())
    return false;
  if (residual)
    for (size_t i : {10, 11, 12, 13})
      if (!g.initializers.count(n.inputs[i])) return false;
  auto w = g.initializers.find(n.inputs[3]);
  if (w == g.initializers.end() || w->second.rank() != 4 || w->second.dtype() != DType::Int8)
    return false;
  for (size_t i : {1, 2, 4, 5, 6, 7})
    if (!g.initializers.count(n.inputs[i])) return false;
  if (n.inputs.size() > 8 && !n.inputs[8].empty() && !g.initializers.count(n.inputs[8]))
    return false;
  for (double z : to_doubles(g.initializers.at(n.inputs[5])))
    if (z != 0) return false;
  return true;
}

// QuantizeLinear / DequantizeLinear with one scale and zero point: elementwise in any layout.
bool per_tensor_qdq(const ir::Graph& g, const ir::Node& n) {
  if (!is(n, "QuantizeLinear") && !is(n, "DequantizeLinear")) return false;
  if (n.inputs.size() < 2 || n.outputs.size() != 1) return false;
  for (size_t i = 1; i < n.inputs.size(); ++i)
    if (!n.inputs[i].empty() && !scalar_constant(g, n.inputs[i])) return false;
  return true;
}

bool convertible_pool(const ir::Graph& g, const ir::Node& n) {
  const bool windowed = is(n, "MaxPool") || is(n, "AveragePool");
  if (!windowed && !is(n, "GlobalAveragePool") && !is(n, "GlobalMaxPool")) return false;
  if (n.inputs.empty() || n.outputs.empty()) return false;  // malformed (opsets libonnx lacks)
  if (n.outputs.size() > 1 && !n.outputs[1].empty()) return false;  // MaxPool's Indices
  if (const ir::Attribute* d = n.attr("dilations"))
    for (int64_t v : d->ints)
      if (v != 1) return false;
  if (rank4_float(g, n.inputs[0])) return true;
  // Max pooling of 8-bit values (fuse-qdq's MaxPool): oneDNN runs it channels-last too.
  const ir::TypeInfo* t = g.type_of(n.inputs[0]);
  return (is(n, "MaxPool") || is(n, "GlobalMaxPool")) && t &&
         t->kind == ir::TypeInfo::Kind::Tensor && t->has_shape && t->dims.size() == 4 &&
         (t->elem == DType::UInt8 || t->elem == DType::Int8);
}

// Operators that compute the same thing in any layout, given their first input and (for the
// binary ones) their second in the same layout.
bool unary_agnostic(const ir::Node& n) {
  static const std::set<std::string> ops{
      "Relu",     "Clip", "Sigmoid", "Tanh", "LeakyRelu", "HardSigmoid", "HardSwish", "Elu", "Selu",
      "Softplus", "Neg",  "Abs",     "Exp",  "Sqrt",      "Erf",         "Mish",      "Gelu"};
  // The later-opset activations the fusions emit below their opsets (docs/optimizer.md).
  static const std::set<std::string> poly{"Gelu", "HardSwish", "Mish"};
  return n.domain.empty() ? ops.count(n.op_type) > 0
                          : n.domain == kPolyDomain && poly.count(n.op_type) > 0;
}
bool binary_agnostic(const ir::Node& n) {
  return n.domain.empty() && (n.op_type == "Add" || n.op_type == "Sub" || n.op_type == "Mul" ||
                              n.op_type == "Div" || n.op_type == "Max" || n.op_type == "Min");
}

class Rewriter {
 public:
  explicit Rewriter(ir::Graph& g) : g_(g) {
    for (const auto& n : g.nodes) {
      for (const auto& o : n.outputs) used_.insert(o);
      for (const auto& i : n.inputs) used_.insert(i);
    }
    for (const auto& n : g.nodes) {
      for (const auto& i : n.inputs) ++readers_[i];
      for (const auto& i : n.implicit_inputs) ++readers_[i];
    }
    for (const auto& v : g.outputs) ++readers_[v.name];
    for (const auto& v : g.inputs) used_.insert(v.name);
    for (const auto& [name, t] : g.initializers) used_.insert(name);
  }

  bool run() {
    std::vector<ir::Node> out;
    for (size_t k = 0; k < g_.nodes.size(); ++k) {
      ir::Node& n = g_.nodes[k];
      if (skip_.count(k)) continue;  // rewritten as part of an earlier pattern
      if (is(n, "Reshape") && nhwc_.count(n.inputs[0]) && channel_shuffle_nhwc(k, out)) continue;
      if (convertible_conv(g_, n) || convertible_pool(g_, n) || convertible_qconv(g_, n)) {
        // Layout inputs: X, and the residual Z of FusedConv (3) and QLinearConvAdd (9).
        std::vector<size_t> layout{0};
        if (n.op_type == "FusedConv") layout.push_back(3);
        if (n.op_type == "QLinearConvAdd") layout.push_back(9);
        convert(n, out, layout, /*rename=*/true);
        changed_ = true;
        continue;
      }
      if (is(n, "BatchNormalization") && nhwc_.count(n.inputs[0]) && inference_bn(n)) {
        bn_as_channel_affine(k, out);
        continue;
      }
      if (((unary_agnostic(n) && rest_scalar(n, 1)) || per_tensor_qdq(g_, n)) &&
          nhwc_.count(n.inputs[0])) {
        convert(n, out, {0}, false);
        continue;
      }
      if (binary_agnostic(n) && n.inputs.size() == 2 && nhwc_.count(n.inputs[0]) &&
          nhwc_.count(n.inputs[1]) && rank4_pair(n.inputs[0], n.inputs[1])) {
        convert(n, out, {0, 1}, false);
        continue;
      }
      if (binary_agnostic(n) && n.inputs.size() == 2 && n.outputs.size() == 1 &&
          constant_operand_nhwc(n, out))
        continue;
      // ai.polyinfer QLinearAdd (the QDQ pass's residual add): elementwise over A and B.
      if (is(n, "QLinearAdd", "ai.polyinfer") && n.inputs.size() == 8 && nhwc_.count(n.inputs[0]) &&
          nhwc_.count(n.inputs[3])) {
        convert(n, out, {0, 3}, false);
        continue;
      }
      if (is(n, "Slice") && nhwc_.count(n.inputs[0]) && slice_nhwc(n, out)) continue;
      if (is(n, "Pad") && nhwc_.count(n.inputs[0]) && pad_nhwc(n, out)) continue;
      if (is(n, "Split") && nhwc_.count(n.inputs[0]) && split_nhwc(n, out)) continue;
      if (is(n, "Resize") && nhwc_.count(n.inputs[0]) && resize_nhwc(n, out)) continue;
      if (is(n, "Shape") && nhwc_.count(n.inputs[0]) && shape_nhwc(n, out)) continue;
      if (is(n, "Concat") && concat_channels(n)) {
        convert(n, out, all_inputs(n), false);
        out.back().attrs["axis"].i = 3;  // convert() pushes the rewritten node last
        continue;
      }
      for (const auto& name : n.inputs) materialize(name, out);
      for (const auto& name : n.implicit_inputs) materialize(name, out);
      out.push_back(n);  // copied: the graph stays as it was when nothing converts
    }
    if (!changed_) return false;
    for (const auto& v : g_.outputs) materialize(v.name, out);
    g_.nodes = std::move(out);
    g_.opsets.emplace("ai.polyinfer", 1);
    return true;
  }

 private:
  static std::vector<size_t> all_inputs(const ir::Node& n) {
    std::vector<size_t> v(n.inputs.size());
    for (size_t i = 0; i < v.size(); ++i) v[i] = i;
    return v;
  }

  bool rest_scalar(const ir::Node& n, size_t from) const {
    for (size_t i = from; i < n.inputs.size(); ++i)
      // A one-element constant broadcasts the same way in both layouts.
      if (!n.inputs[i].empty() && !scalar_constant(g_, n.inputs[i])) return false;
    return true;
  }

  // BatchNormalization in inference form with constant float32 [C] parameters and one output.
  bool inference_bn(const ir::Node& n) const {
    if (n.inputs.size() != 5 || g_.opsets.count("") == 0 || g_.opsets.at("") < 7) return false;
    for (size_t i = 1; i < n.outputs.size(); ++i)
      if (!n.outputs[i].empty()) return false;
    if (attr_int(n, "training_mode", 0) != 0) return false;
    const ir::TypeInfo* x = rank4_float(g_, n.inputs[0]);
    if (!x || x->dims[1] <= 0) return false;
    for (size_t i = 1; i < 5; ++i) {
      auto it = g_.initializers.find(n.inputs[i]);
      if (it == g_.initializers.end() || it->second.dtype() != DType::Float32 ||
          it->second.rank() != 1 || it->second.numel() != x->dims[1])
        return false;
    }
    return true;
  }

  // In NHWC the channel is the last axis, so BatchNormalization becomes ChannelAffine: x * scale
  // + shift with [C] constants along it, in one pass with the Relu or LeakyRelu that follows
  // when that is its only reader (DenseNet's pre-activation BN → ReLU → conv), instead of three.
  void bn_as_channel_affine(size_t k, std::vector<ir::Node>& out) {
    const ir::Node& n = g_.nodes[k];
    const Tensor& gamma = g_.initializers.at(n.inputs[1]);
    const Tensor& beta = g_.initializers.at(n.inputs[2]);
    const Tensor& mean = g_.initializers.at(n.inputs[3]);
    const Tensor& var = g_.initializers.at(n.inputs[4]);
    const double eps = attr_float(n, "epsilon", 1e-5f);
    const int64_t c = gamma.numel();
    std::vector<float> scale(c), shift(c);
    for (int64_t i = 0; i < c; ++i) {
      const double sc = gamma.data<float>()[i] / std::sqrt(double(var.data<float>()[i]) + eps);
      scale[i] = static_cast<float>(sc);
      shift[i] = static_cast<float>(beta.data<float>()[i] - mean.data<float>()[i] * sc);
    }
    const std::string sc_name = fresh(n.name + "_scale"), sh_name = fresh(n.name + "_shift");
    g_.initializers[sc_name] = Tensor::from_vector<float>({c}, scale);
    g_.initializers[sh_name] = Tensor::from_vector<float>({c}, shift);
    ir::Node a;
    a.name = fresh(n.name + "_nhwc");
    a.op_type = "ChannelAffine";
    a.domain = "ai.polyinfer";
    a.opset = 1;
    a.inputs = {nhwc_.at(n.inputs[0]), sc_name, sh_name};
    std::string y = n.outputs[0];
    const size_t act = sole_reader(k, y);
    if (act != SIZE_MAX && g_.nodes[act].domain.empty() &&
        (g_.nodes[act].op_type == "Relu" || g_.nodes[act].op_type == "LeakyRelu")) {
      const ir::Node& r = g_.nodes[act];
      a.attrs["activation"] = make_string(r.op_type);
      if (r.op_type == "LeakyRelu")
        a.attrs["activation_params"] = make_floats({attr_float(r, "alpha", 0.01f)});
      skip_.insert(act);
      y = r.outputs[0];
    }
    a.outputs = {fresh(y + "_nhwc")};
    if (const ir::TypeInfo* t = g_.type_of(n.outputs[0]); t && t->has_shape && t->dims.size() == 4)
      g_.value_types[a.outputs[0]] = permuted(*t, kToNhwc);
    nhwc_[y] = a.outputs[0];
    out.push_back(std::move(a));
  }

  // A binary elementwise node of an NHWC value and a float32 constant of rank <= 4 (Paddle's
  // learnable scale and shift after an activation, x·w + b with one-element w and b; a
  // per-channel [1, C, 1, 1]): the constant, aligned to rank 4 from the right as broadcasting
  // aligns it, permuted like the value, so the node runs channels-last instead of between two
  // layout Transposes. A one-element constant broadcasts the same in both layouts and stays.
  bool constant_operand_nhwc(ir::Node& n, std::vector<ir::Node>& out) {
    const int side = nhwc_.count(n.inputs[0]) ? 0 : nhwc_.count(n.inputs[1]) ? 1 : -1;
    if (side < 0) return false;
    const std::string& k = n.inputs[1 - side];
    const Tensor* c = constant(g_, k);
    if (!c || c->dtype() != DType::Float32 || c->rank() > 4) return false;
    std::string name = k;
    if (c->numel() != 1) {
      auto it = nhwc_constants_.find(k);
      if (it == nhwc_constants_.end()) {
        Shape s4(4 - c->rank(), 1);
        for (int64_t d : c->shape()) s4.push_back(d);
        const Shape t4 = {s4[0], s4[2], s4[3], s4[1]};
        std::vector<float> v(static_cast<size_t>(c->numel()));
        // Copied out first: a weight still in the mapped model file may be unaligned.
        std::vector<float> src(v.size());
        std::memcpy(src.data(), c->peek_bytes(), c->nbytes());
        for (int64_t a = 0; a < s4[0]; ++a)
          for (int64_t ch = 0; ch < s4[1]; ++ch)
            for (int64_t h = 0; h < s4[2]; ++h)
              for (int64_t w = 0; w < s4[3]; ++w)
                v[static_cast<size_t>(((a * s4[2] + h) * s4[3] + w) * s4[1] + ch)] =
                    src[((a * s4[1] + ch) * s4[2] + h) * s4[3] + w];
        const std::string fresh_name = fresh(k + "_nhwc");
        g_.initializers[fresh_name] = Tensor::from_vector<float>(t4, v);
        it = nhwc_constants_.emplace(k, fresh_name).first;
      }
      name = it->second;
    }
    convert(n, out, {static_cast<size_t>(side)}, false);
    out.back().inputs[1 - side] = name;
    return true;
  }

  // Two rank-4 operands broadcast alike in either layout: broadcasting pairs their axes by
  // position, and both are permuted the same way. So a squeeze-and-excitation block's scale
  // ([N, C, 1, 1], from a pooled and convolved branch) multiplies the feature map ([N, C, H, W])
  // channels-last as [N, 1, 1, C] times [N, H, W, C], without the layout transposes around it
  // (EfficientNet-B0 has 16 such Muls). An operand of lower rank aligns from the right, which
  // the permutation would break: those stay NCHW.
  bool rank4_pair(const std::string& a, const std::string& b) const {
    return rank4_float(g_, a) && rank4_float(g_, b);
  }

  // Slice of an NHWC value with constant axes: the same Slice with each axis renumbered for
  // NHWC, so a channel slice (ShuffleNet's split in two) needs no transposes around it. Starts,
  // ends and steps are per listed axis and do not change.
  bool slice_nhwc(ir::Node& n, std::vector<ir::Node>& out) {
    if (n.outputs.size() != 1) return false;
    std::vector<int64_t> axes;
    const bool from_attr = n.opset < 10;
    if (from_attr) {
      const std::vector<int64_t> starts = attr_ints(n, "starts");
      axes = n.attr("axes") ? attr_ints(n, "axes") : std::vector<int64_t>{};
      if (!n.attr("axes"))
        for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    } else {
      if (n.inputs.size() < 3) return false;
      if (n.inputs.size() > 3 && !n.inputs[3].empty()) {
        const Tensor* t = constant(g_, n.inputs[3]);
        if (!t || (t->dtype() != DType::Int64 && t->dtype() != DType::Int32)) return false;
        for (double v : to_doubles(*t)) axes.push_back(static_cast<int64_t>(v));
      } else {
        const Tensor* starts = constant(g_, n.inputs[1]);
        if (!starts) return false;  // how many axes the default covers is only known at run time
        for (int64_t i = 0; i < starts->numel(); ++i) axes.push_back(i);
      }
    }
    // NCHW axis a sits at position kToNchw[a] in NHWC: C (1) → 3, H (2) → 1, W (3) → 2.
    std::vector<int64_t> mapped;
    for (int64_t a : axes) {
      if (a < -4 || a > 3) return false;  // the kernel reports the bad axis on the original
      mapped.push_back(kToNchw[a < 0 ? a + 4 : a]);
    }
    convert(n, out, {0}, false);
    ir::Node& m = out.back();
    if (from_attr) {
      m.attrs["axes"] = make_ints(mapped);
    } else {
      const std::string name = fresh(n.name + "_nhwc_axes");
      g_.initializers[name] =
          Tensor::from_vector<int64_t>({static_cast<int64_t>(mapped.size())}, mapped);
      if (m.inputs.size() < 4) m.inputs.resize(4);
      m.inputs[3] = name;
    }
    return true;
  }

  // Split of an NHWC value: the same Split along the renumbered axis, every output NHWC. The
  // channel splits of YOLO-style blocks (C2f, CSP) then need no layout Transposes: in and out
  // of each such Split there were three. The sizes (input or attribute) do not change.
  bool split_nhwc(ir::Node& n, std::vector<ir::Node>& out) {
    const int64_t axis = attr_int(n, "axis", 0);
    if (axis < -4 || axis > 3) return false;  // the kernel reports the bad axis on the original
    ir::Node m = n;
    m.inputs[0] = nhwc_of(n.inputs[0], out);
    if (n.attr("axis")) m.attrs["axis"].i = kToNchw[axis < 0 ? axis + 4 : axis];
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      const std::string& y = n.outputs[i];
      if (y.empty()) continue;
      m.outputs[i] = fresh(y + "_nhwc");
      if (const ir::TypeInfo* t = g_.type_of(y); t && t->has_shape && t->dims.size() == 4)
        g_.value_types[m.outputs[i]] = permuted(*t, kToNhwc);
      nhwc_[y] = m.outputs[i];
    }
    out.push_back(std::move(m));
    return true;
  }

  // Resize of an NHWC value: the same Resize with its scales or sizes reordered for NHWC (a
  // constant permuted here, a computed one through a Gather before the Resize), so a feature
  // pyramid's upsampling (Paddle's detectors: Resize, then Add with the lateral branch) runs
  // channels-last instead of between layout Transposes (ppocr's detector had 12 ms of them).
  // Every other attribute keeps its meaning per axis. Not with tf_crop_and_resize (its roi is
  // per axis too), an axes attribute, a keep_aspect_ratio_policy other than stretch, or a
  // computed scales/sizes whose length is not known to be 4.
  bool resize_nhwc(ir::Node& n, std::vector<ir::Node>& out) {
    if (n.outputs.size() != 1 || n.attr("axes") ||
        attr_string(n, "coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize" ||
        attr_string(n, "keep_aspect_ratio_policy", "stretch") != "stretch")
      return false;
    // Resize-10 takes (X, scales); from 11 (X, roi, scales, sizes), one of the last two given.
    const std::vector<size_t> params =
        n.opset < 11 ? std::vector<size_t>{1} : std::vector<size_t>{2, 3};
    size_t which = SIZE_MAX;
    for (size_t i : params) {
      if (i >= n.inputs.size() || n.inputs[i].empty()) continue;
      if (const Tensor* c = constant(g_, n.inputs[i]); c && c->numel() == 0) continue;
      if (which != SIZE_MAX) return false;  // both given: the kernel reports it on the original
      which = i;
    }
    if (which == SIZE_MAX) return false;
    const std::string& v = n.inputs[which];
    std::string permuted_name;
    if (const Tensor* c = constant(g_, v)) {
      if (c->rank() != 1 || c->numel() != 4) return false;
      const std::vector<double> d = to_doubles(*c);
      const std::vector<double> p = {d[0], d[2], d[3], d[1]};
      permuted_name = fresh(v + "_nhwc");
      if (c->dtype() == DType::Float32)
        g_.initializers[permuted_name] =
            Tensor::from_vector<float>({4}, {float(p[0]), float(p[1]), float(p[2]), float(p[3])});
      else if (c->dtype() == DType::Int64)
        g_.initializers[permuted_name] = Tensor::from_vector<int64_t>(
            {4}, {int64_t(p[0]), int64_t(p[1]), int64_t(p[2]), int64_t(p[3])});
      else
        return false;
    } else {
      const auto shape = static_shape(g_, v);
      if (!shape || *shape != Shape{4}) return false;
      const std::string idx = fresh(n.name + "_nhwc_order");
      g_.initializers[idx] = Tensor::from_vector<int64_t>({4}, {0, 2, 3, 1});
      ir::Node gather;
      gather.name = fresh(v + "_to_nhwc");
      gather.op_type = "Gather";
      gather.origin = "channels-last";
      gather.opset = g_.opsets.count("") ? g_.opsets.at("") : 13;
      gather.inputs = {v, idx};
      permuted_name = fresh(v + "_nhwc");
      gather.outputs = {permuted_name};
      gather.attrs["axis"] = make_int(0);
      if (const ir::TypeInfo* t = g_.type_of(v)) g_.value_types[permuted_name] = *t;
      out.push_back(std::move(gather));
    }
    convert(n, out, {0}, false);
    out.back().inputs[which] = permuted_name;
    return true;
  }

  // Shape of an NHWC value: Shape of the NHWC version, its entries gathered back into NCHW order
  // (start and end, opset 15, pick which), instead of a layout Transpose that only a Shape reads
  // (slanet's decoder sizes each Resize from the Shape of a convolution's output).
  bool shape_nhwc(const ir::Node& n, std::vector<ir::Node>& out) {
    if (n.outputs.size() != 1 || n.outputs[0].empty()) return false;
    // ONNX Shape: negative bounds count from the end; both are clamped to [0, rank].
    const auto bound = [](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + 4 : v, 0, 4); };
    const int64_t start = bound(attr_int(n, "start", 0)), end = bound(attr_int(n, "end", 4));
    std::vector<int64_t> order;
    for (int64_t i = start; i < end; ++i) order.push_back(kToNchw[i]);
    ir::Node sh = n;
    sh.attrs.erase("start");
    sh.attrs.erase("end");
    sh.inputs = {nhwc_.at(n.inputs[0])};
    sh.outputs = {fresh(n.outputs[0] + "_nhwc")};
    ir::TypeInfo t;
    t.elem = DType::Int64;
    t.has_shape = true;
    t.dims = {4};
    g_.value_types[sh.outputs[0]] = t;
    const std::string idx = fresh(n.name + "_nchw_order");
    g_.initializers[idx] =
        Tensor::from_vector<int64_t>({static_cast<int64_t>(order.size())}, order);
    ir::Node gather;
    gather.name = fresh(n.name + "_nchw");
    gather.op_type = "Gather";
    gather.origin = "channels-last";
    gather.opset = g_.opsets.count("") ? g_.opsets.at("") : 13;
    gather.inputs = {sh.outputs[0], idx};
    gather.outputs = {n.outputs[0]};
    gather.attrs["axis"] = make_int(0);
    out.push_back(std::move(sh));
    out.push_back(std::move(gather));
    return true;
  }

  // Pad of an NHWC value (any mode: each pads its own axes): the same Pad with the begin and
  // end amounts reordered for NHWC. Inception-v3's average pools are exported as a Pad and a
  // pool; in NCHW each had a layout Transpose on either side, which did not scale with
  // threads. Pads given as a constant input (opset 11+) or attribute; an axes input (opset 18)
  // is left as it is.
  bool pad_nhwc(ir::Node& n, std::vector<ir::Node>& out) {
    if (n.outputs.size() != 1 || !rank4_float(g_, n.inputs[0])) return false;
    const bool from_attr = n.opset < 11;
    std::vector<int64_t> pads;
    if (from_attr) {
      pads = attr_ints(n, "pads");
    } else {
      if (n.inputs.size() < 2 || n.inputs[1].empty()) return false;
      if (n.inputs.size() > 3 && !n.inputs[3].empty()) return false;
      const Tensor* t = constant(g_, n.inputs[1]);
      if (!t || t->dtype() != DType::Int64) return false;
      for (double v : to_doubles(*t)) pads.push_back(static_cast<int64_t>(v));
    }
    if (pads.size() != 8) return false;  // the kernel reports a wrong count on the original
    std::vector<int64_t> mapped(8);
    for (int i = 0; i < 4; ++i) {
      mapped[i] = pads[kToNhwc[i]];
      mapped[4 + i] = pads[4 + kToNhwc[i]];
    }
    convert(n, out, {0}, false);
    ir::Node& m = out.back();
    if (from_attr) {
      m.attrs["pads"] = make_ints(mapped);
    } else {
      const std::string name = fresh(n.name + "_nhwc_pads");
      g_.initializers[name] = Tensor::from_vector<int64_t>({8}, mapped);
      m.inputs[1] = name;
    }
    return true;
  }

  // The channel shuffle of ShuffleNet, on NCHW: Reshape [N,C,H,W] → [N,g,C/g,H,W], Transpose
  // [0,2,1,3,4], Reshape back to [N,C,H,W]. On NHWC the same permutation of channels is Reshape
  // [N,H,W,C] → [N,H,W,g,C/g], Transpose [0,1,2,4,3], Reshape back: channel j*g+i of the result
  // is channel i*(C/g)+j of the input either way. The three nodes (node k and its two single
  // readers) are replaced by their NHWC versions, so the shuffle needs no layout transposes.
  bool channel_shuffle_nhwc(size_t k, std::vector<ir::Node>& out) {
    const ir::Node& r1 = g_.nodes[k];
    if (r1.inputs.size() != 2) return false;
    // The split shape [N, g, C/g, H, W]: from shape inference, else from the constant shape
    // input when it is fully given (after folding it usually is, even where types are not).
    std::optional<Shape> mid = static_shape(g_, r1.outputs[0]);
    if (!mid) mid = literal_shape(r1.inputs[1]);
    if (!mid || mid->size() != 5) return false;
    const Shape x = {(*mid)[0], (*mid)[1] * (*mid)[2], (*mid)[3], (*mid)[4]};
    if (const auto in = static_shape(g_, r1.inputs[0]); in && *in != x) return false;
    const int64_t groups = (*mid)[1];
    if ((*mid)[0] != x[0] || groups <= 0 || (*mid)[1] * (*mid)[2] != x[1] || (*mid)[3] != x[2] ||
        (*mid)[4] != x[3])
      return false;
    const size_t t = sole_reader(k, r1.outputs[0]);
    if (t == SIZE_MAX || !is(g_.nodes[t], "Transpose") ||
        attr_ints(g_.nodes[t], "perm") != std::vector<int64_t>{0, 2, 1, 3, 4})
      return false;
    const size_t r2 = sole_reader(t, g_.nodes[t].outputs[0]);
    if (r2 == SIZE_MAX || !is(g_.nodes[r2], "Reshape") || g_.nodes[r2].inputs.size() != 2)
      return false;
    // Back to [N, C, H, W]: a -1 in the constant shape can only be C here.
    std::optional<Shape> merged = static_shape(g_, g_.nodes[r2].outputs[0]);
    if (!merged) {
      const Tensor* c = constant(g_, g_.nodes[r2].inputs[1]);
      if (!c || c->dtype() != DType::Int64 || c->numel() != 4) return false;
      merged = Shape(c->data<int64_t>(), c->data<int64_t>() + 4);
      if ((*merged)[1] == -1) (*merged)[1] = x[1];
    }
    if (*merged != x) return false;

    const std::string src = nhwc_.at(r1.inputs[0]);
    const Shape split = {x[0], x[2], x[3], groups, x[1] / groups};
    const Shape swapped = {x[0], x[2], x[3], x[1] / groups, groups};
    const Shape back = {x[0], x[2], x[3], x[1]};
    const std::string y = g_.nodes[r2].outputs[0];
    const std::string a = fresh(r1.outputs[0] + "_nhwc"),
                      b = fresh(g_.nodes[t].outputs[0] + "_nhwc"), c = fresh(y + "_nhwc");
    out.push_back(reshape(r1, src, a, split));
    ir::Node tr = g_.nodes[t];
    tr.inputs = {a};
    tr.outputs = {b};
    tr.attrs["perm"] = make_ints({0, 1, 2, 4, 3});
    g_.value_types[b] = float_type(swapped);
    out.push_back(std::move(tr));
    out.push_back(reshape(g_.nodes[r2], b, c, back));
    nhwc_[y] = c;
    skip_.insert(t);
    skip_.insert(r2);
    changed_ = true;
    return true;
  }

  // A constant int64 shape with every dimension given (no -1 or 0), or nullopt.
  std::optional<Shape> literal_shape(const std::string& name) const {
    const Tensor* c = constant(g_, name);
    if (!c || c->dtype() != DType::Int64 || c->rank() != 1) return std::nullopt;
    Shape s(c->data<int64_t>(), c->data<int64_t>() + c->numel());
    for (int64_t d : s)
      if (d <= 0) return std::nullopt;
    return s;
  }

  // The index of the only node reading `value` (which node `after` writes), when it is later in
  // the graph and nothing else (no graph output) reads it; SIZE_MAX otherwise.
  size_t sole_reader(size_t after, const std::string& value) const {
    auto it = readers_.find(value);
    if (it == readers_.end() || it->second != 1) return SIZE_MAX;
    for (size_t j = after + 1; j < g_.nodes.size(); ++j)
      for (const auto& i : g_.nodes[j].inputs)
        if (i == value) return j;
    return SIZE_MAX;
  }

  static ir::TypeInfo float_type(const Shape& s) {
    ir::TypeInfo t;
    t.kind = ir::TypeInfo::Kind::Tensor;
    t.elem = DType::Float32;
    t.has_shape = true;
    t.dims = s;
    return t;
  }

  // `like` (a Reshape) reading `in` and writing `out` with the constant shape `shape`.
  ir::Node reshape(const ir::Node& like, const std::string& in, const std::string& out,
                   const Shape& shape) {
    ir::Node r = like;
    const std::string shape_name = fresh(out + "_shape");
    g_.initializers[shape_name] =
        Tensor::from_vector<int64_t>({static_cast<int64_t>(shape.size())}, shape);
    r.name = fresh(like.name + "_nhwc");
    r.inputs = {in, shape_name};
    r.outputs = {out};
    g_.value_types[out] = float_type(shape);
    return r;
  }

  bool concat_channels(const ir::Node& n) const {
    const ir::Attribute* a = n.attr("axis");
    if (!a || (a->i != 1 && a->i != -3)) return false;
    // A value with an NHWC version is a rank-4 float (only those get one), and ONNX requires
    // Concat's inputs to share rank and type: an input whose shape is not known (bounds folded
    // after shape inference ran) is one too, unless its known type says otherwise.
    bool any = false;
    for (const auto& in : n.inputs) {
      if (nhwc_.count(in)) {
        any = true;
        continue;
      }
      const ir::TypeInfo* t = g_.type_of(in);
      if (t && t->elem != DType::Undefined && t->elem != DType::Float32) return false;
      if (t && t->has_shape && t->dims.size() != 4) return false;
    }
    return any;
  }

  std::string fresh(const std::string& base) {
    std::string name = base;
    for (int i = 1; used_.count(name); ++i) name = base + "_" + std::to_string(i);
    used_.insert(name);
    return name;
  }

  // The NHWC version of `name`, adding a Transpose when there is none yet.
  std::string nhwc_of(const std::string& name, std::vector<ir::Node>& out) {
    auto it = nhwc_.find(name);
    if (it != nhwc_.end()) return it->second;
    const ir::TypeInfo* t = g_.type_of(name);
    ir::Node tr = transpose(name, fresh(name + "_nhwc"), kToNhwc, "to_nhwc");
    if (t) g_.value_types[tr.outputs[0]] = permuted(*t, kToNhwc);
    nhwc_[name] = tr.outputs[0];
    nchw_ready_.insert(name);
    out.push_back(std::move(tr));
    return nhwc_[name];
  }

  // Makes the NCHW value `name` exist when only its NHWC version is computed.
  void materialize(const std::string& name, std::vector<ir::Node>& out) {
    if (!nhwc_.count(name) || nchw_ready_.count(name)) return;
    out.push_back(transpose(nhwc_[name], name, kToNchw, "to_nchw"));
    nchw_ready_.insert(name);
  }

  ir::Node transpose(const std::string& in, const std::string& out, std::vector<int64_t> perm,
                     const char* what) {
    ir::Node tr;
    tr.name = fresh(in + "_" + what);
    tr.op_type = "Transpose";
    tr.origin = "channels-last";
    tr.opset = g_.opsets.count("") ? g_.opsets.at("") : 13;
    tr.inputs = {in};
    tr.outputs = {out};
    ir::Attribute a;
    a.type = ir::Attribute::Type::Ints;
    a.ints = std::move(perm);
    tr.attrs["perm"] = a;
    return tr;
  }

  // Rewrites `n` to read the NHWC versions of its inputs `layout_inputs` and produce an NHWC
  // output; `rename` turns it into the ai.polyinfer Nhwc* operator.
  void convert(ir::Node& n, std::vector<ir::Node>& out, const std::vector<size_t>& layout_inputs,
               bool rename) {
    ir::Node m = n;
    for (size_t i : layout_inputs)
      if (i < m.inputs.size() && !m.inputs[i].empty()) m.inputs[i] = nhwc_of(n.inputs[i], out);
    if (rename) {
      m.op_type = "Nhwc" + (n.op_type == "Conv" ? std::string("FusedConv") : n.op_type);
      m.domain = "ai.polyinfer";
      m.opset = 1;
    }
    const std::string y = n.outputs[0];
    m.outputs[0] = fresh(y + "_nhwc");
    if (const ir::TypeInfo* t = g_.type_of(y); t && t->has_shape && t->dims.size() == 4)
      g_.value_types[m.outputs[0]] = permuted(*t, kToNhwc);
    nhwc_[y] = m.outputs[0];
    out.push_back(std::move(m));
  }

  ir::Graph& g_;
  std::set<std::string> used_;
  std::map<std::string, std::string> nhwc_;            // NCHW name → its NHWC version
  std::map<std::string, std::string> nhwc_constants_;  // constant → its permuted copy
  std::set<std::string> nchw_ready_;                   // NCHW names that exist as values
  std::map<std::string, int> readers_;  // value → nodes (and graph outputs) reading it
  std::set<size_t> skip_;               // nodes already rewritten with an earlier one
  bool changed_ = false;
};

}  // namespace

bool to_channels_last(ir::Graph& g) { return Rewriter(g).run(); }

}  // namespace polyinfer::opt
