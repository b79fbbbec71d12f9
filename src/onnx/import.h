// ONNX model import: a .onnx file or buffer → an ir::Graph ready for the runtime.
//
// Checks the model enough that nothing later can crash on it: types and counts of tensor data,
// external data paths (never outside the model's folder), node inputs that nothing produces,
// cycles. The graph keeps the types the model declares; src/infer/ infers the others
// (infer::infer_types, which every caller runs next).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace polyinfer {

class DeferredSource;

struct Model {
  std::shared_ptr<ir::Graph> graph;
  int64_t ir_version = 0;
  std::string producer;               // "pytorch 1.13.0"
  std::map<std::string, int> opsets;  // domain ("" = ai.onnx) → version
  std::vector<std::string> notes;     // what import and inference could not do
  // With ImportOptions::defer_weights: where the weights left in the model file are read from
  // (core/deferred.h); null when none were.
  std::shared_ptr<DeferredSource> deferred;
};

struct ImportOptions {
  // Graph input shapes to use instead of the model's (name → dims); the shapes the model
  // declares for other values are dropped, so every value's shape follows from the inputs'. A
  // name the graph does not take is an error.
  std::map<std::string, Shape> input_shapes;
  // Values for symbolic dimensions ("batch" → 8, "past_sequence_length" → 4096) in every graph
  // input.
  std::map<std::string, int64_t> dim_values;
  // false: external-data weights are checked but not read (their tensors hold garbage); for
  // tools that look only at the graph and its shapes.
  bool read_external_data = true;
  // Leave the main graph's weights of more than 4 KiB (model_split.h) in the mapped model file
  // instead of copying them (core/deferred.h; Model::deferred). Only import_onnx_file defers,
  // and only when the file can be mapped. Whoever keeps such a model for long calls
  // Model::deferred->materialize_all(): until then, its weights read the file.
  bool defer_weights = false;
};

// Loads a model file; external data is read from the file's folder.
Model import_onnx_file(const std::string& path, const ImportOptions& options = {});
// Loads a model from memory; external data is read from `base_dir` (empty: not allowed).
Model import_onnx_bytes(const void* data, size_t size, const std::string& base_dir,
                        const ImportOptions& options = {});

// The highest default-domain opset polyinfer knows the semantics of.
constexpr int kMaxOpset = 28;

}  // namespace polyinfer
