// What the Python package reads or writes of a model file itself, beside running it: the
// metadata onnxruntime's get_modelmeta() gives, and the optimized model that
// SessionOptions.optimized_model_filepath asks for.
#pragma once

#include <nanobind/nanobind.h>

#include <string>

namespace polyinfer::python {

// ModelProto's producer_name, graph_name, domain, description (doc_string), graph_description,
// version and custom_metadata_map, from a path (str) or the model's bytes.
nanobind::dict model_metadata(nanobind::object model);
// Writes the model optimized at `level` (0..3, `polyinfer optimize --level`) to `path`.
void save_optimized(nanobind::object model, int level, const std::string& path);

}  // namespace polyinfer::python
