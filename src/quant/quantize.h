// Static post-training INT8 quantization of a whole model: simplify to standard ONNX, calibrate
// on sample inputs, rewrite into QDQ form. `polyinfer quantize` is this plus file handling.
//
//   Model m = import_onnx_file("resnet50.onnx");
//   quant::StaticOptions o;
//   o.method = quant::Method::Entropy;
//   o.qdq.per_channel = true;
//   quant::StaticReport r = quant::quantize_static(m, feeds, o);   // feeds: calibration inputs
//   export_onnx_file(m, "resnet50.int8.onnx");
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

struct StaticOptions {
  QdqOptions qdq;
  Method method = Method::MinMax;
  double percentile = 99.999;  // for Method::Percentile
  int threads = 0;             // calibration runs; 0: one per core
  // Called after each calibration run: phase ("calibrating", then the method's histogram
  // pass), runs done and runs in the phase.
  std::function<void(const char* phase, int done, int total)> progress;
};

struct StaticReport {
  opt::OptimizeReport simplified;  // the level-1 rewrites made before calibration
  QdqPlan plan;
  QdqReport qdq;
  std::map<std::string, int> quantized_ops;  // op type → nodes quantized
  int samples = 0;
};

// Quantizes `model` in place. `feeds` are the calibration inputs (each a full feed of the
// model's inputs; checked by Session::run). Throws InvalidArgument when there are no feeds,
// nothing to quantize, or an excluded name matches no node; calibration errors as Calibrator.
StaticReport quantize_static(Model& model, const std::vector<std::map<std::string, Value>>& feeds,
                             const StaticOptions& options);

}  // namespace polyinfer::quant
