#include "quant/quantize.h"

namespace polyinfer::quant {

StaticReport quantize_static(Model& model, const std::vector<std::map<std::string, Value>>& feeds,
                             const StaticOptions& o) {
  PI_CHECK(!feeds.empty(), InvalidArgument, "quantize: no calibration samples");
  StaticReport r;
  // Level 1 keeps the model standard ONNX (ONNX Runtime must run the result) and folds what
  // quantization should not see: BatchNormalization into Conv weights, Identity, constants.
  r.simplified = opt::optimize(*model.graph, 1);
  for (const auto& x : o.qdq.exclude) {
    bool found = false;
    for (const auto& n : model.graph->nodes) found = found || n.name == x || n.op_type == x;
    PI_CHECK(found, InvalidArgument, "--exclude ", x, ": no node of that name or op type in the "
             "model (after simplification: BatchNormalization and Identity nodes are folded)");
  }
  r.plan = plan_qdq(*model.graph, o.qdq);
  PI_CHECK(!r.plan.nodes.empty(), InvalidArgument,
           "quantize: the model has no float32 Conv, MatMul or Gemm left to quantize");
  for (const auto& name : r.plan.nodes)
    for (const auto& n : model.graph->nodes)
      if (n.name == name) ++r.quantized_ops[n.op_type];

  Calibrator cal(model, r.plan.activations, o.threads);
  const int n = static_cast<int>(feeds.size());
  for (int i = 0; i < n; ++i) {
    cal.observe_range(feeds[size_t(i)]);
    if (o.progress) o.progress("calibrating", i + 1, n);
  }
  if (needs_histograms(o.method))
    for (int i = 0; i < n; ++i) {
      cal.observe_histogram(feeds[size_t(i)]);
      if (o.progress) o.progress(method_name(o.method), i + 1, n);
    }
  r.samples = n;
  r.qdq = apply_qdq(*model.graph, r.plan, cal.ranges(o.method, o.percentile), o.qdq);
  return r;
}

}  // namespace polyinfer::quant
