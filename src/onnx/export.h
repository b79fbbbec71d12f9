// ONNX export: an ir::Graph (imported, optimized or quantized) → a standard .onnx model that
// ONNX Runtime and polyinfer load again. Weights are written inline (models under 2 GiB).
#pragma once

#include <string>

#include "onnx/import.h"

namespace polyinfer {

// Serializes `model` (its graph, opsets, IR version and producer) to ONNX protobuf bytes.
std::string export_onnx_bytes(const Model& model);
// Writes export_onnx_bytes(model) to `path`; throws Io when the file cannot be written.
void export_onnx_file(const Model& model, const std::string& path);

}  // namespace polyinfer
