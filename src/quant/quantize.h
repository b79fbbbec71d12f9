// Static post-training INT8 quantization of a whole model: simplify to standard ONNX, calibrate
// on sample inputs, rewrite into QDQ form — and, given an accuracy target, keep the layers that
// break it in float. `polyinfer quantize` is this plus file handling.
//
//   Model m = import_onnx_file("resnet50.onnx");
//   quant::StaticOptions o;
//   o.method = quant::Method::Entropy;
//   o.qdq.per_channel = true;
//   quant::StaticReport r = quant::quantize_static(m, feeds, o);   // feeds: calibration inputs
//   export_onnx_file(m, "resnet50.int8.onnx");
//
//   o.target = quant::parse_target("cosine=0.995");                // mixed precision
//   r = quant::quantize_static(m, feeds, o, validation_feeds);     // r.search says what stayed
//   float
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "onnx/import.h"
#include "opt/optimizer.h"
#include "quant/calibration.h"
#include "quant/qdq.h"

namespace polyinfer::quant {

// An accuracy the quantized model must keep against the float model on the same inputs:
// "top1" (share of samples whose top-1 class agrees), "cosine" (of the outputs seen as one
// vector over all samples) or "snr" (dB). The worst of the model's outputs counts.
struct AccuracyTarget {
  std::string metric;  // "" when there is no target
  double value = 0;
};
// "top1=0.99", "cosine=0.995", "snr=30" → AccuracyTarget; InvalidArgument naming the forms.
AccuracyTarget parse_target(const std::string& text);

struct StaticOptions {
  QdqOptions qdq;
  Method method = Method::MinMax;
  double percentile = 99.999;  // for Method::Percentile
  int threads = 0;             // calibration and evaluation runs; 0: one per core
  AccuracyTarget target;       // none: quantize everything that can be
  // Layers the target search may return to float before giving up (0: as many as it takes).
  int max_excluded = 0;
  // Called after each run: phase ("calibrating", the method's histogram pass, "evaluating"),
  // runs done and runs in the phase.
  std::function<void(const char* phase, int done, int total)> progress;
};

// One step of the target search: the metric with the layers excluded so far.
struct SearchStep {
  std::string excluded;  // the node returned to float before this evaluation ("" first)
  std::string op;
  double metric = 0;
};

struct StaticReport {
  opt::OptimizeReport simplified;  // the level-1 rewrites made before calibration
  QdqPlan plan;                    // of the model written
  QdqReport qdq;
  std::map<std::string, int> quantized_ops;  // op type → nodes quantized
  int samples = 0;
  // With a target: every evaluation in order (the first is the fully quantized model), whether
  // the last one met the target, and the median latency (ms, first validation sample) of the
  // fully quantized model and of the one written: the speed the kept-float layers cost.
  std::vector<SearchStep> search;
  bool target_met = true;
  double all_int8_ms = 0, written_ms = 0;
};

// Quantizes `model` in place. `feeds` are the calibration inputs (each a full feed of the
// model's inputs; checked by Session::run); `validation` judges a target (empty: `feeds`).
// Throws InvalidArgument when there are no feeds, nothing to quantize, or an excluded name
// matches no node; calibration errors as Calibrator. A target that cannot be met is not an
// error: the report says so (target_met false) and the model is the last one tried.
StaticReport quantize_static(Model& model, const std::vector<std::map<std::string, Value>>& feeds,
                             const StaticOptions& options,
                             const std::vector<std::map<std::string, Value>>& validation = {});

}  // namespace polyinfer::quant
