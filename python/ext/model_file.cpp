#include "model_file.h"

#include <nanobind/stl/string.h>
#include <onnx/onnx_pb.h>

#include <fstream>
#include <limits>
#include <sstream>

#include "infer/infer.h"
#include "onnx/export.h"
#include "onnx/import.h"
#include "opt/optimize_model.h"
#include "polyinfer/status.h"

namespace nb = nanobind;

namespace polyinfer::python {
namespace {

std::string read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  PI_CHECK(f, Io, "cannot open the model file '", path, "'");
  std::ostringstream s;
  s << f.rdbuf();
  return std::move(s).str();
}

}  // namespace

nb::dict model_metadata(nb::object model) {
  onnx::ModelProto m;
  bool ok = false;
  std::string what;
  if (nb::isinstance<nb::bytes>(model)) {
    const nb::bytes b = nb::borrow<nb::bytes>(model);
    ok = m.ParseFromArray(b.c_str(), static_cast<int>(b.size()));
    what = "the model's bytes";
  } else {
    const std::string path = nb::cast<std::string>(model);
    ok = m.ParseFromString(read_all(path));
    what = "'" + path + "'";
  }
  PI_CHECK(ok, InvalidModel, what, " is not an ONNX model (ModelProto did not parse)");
  nb::dict custom;
  for (const auto& e : m.metadata_props()) custom[nb::str(e.key().c_str())] = e.value();
  nb::dict d;
  d["producer_name"] = m.producer_name();
  d["graph_name"] = m.graph().name();
  d["domain"] = m.domain();
  d["description"] = m.doc_string();
  d["graph_description"] = m.graph().doc_string();
  // ONNX Runtime's value for a model that sets no version: the largest int64.
  d["version"] = m.has_model_version() ? m.model_version() : std::numeric_limits<int64_t>::max();
  d["custom_metadata_map"] = custom;
  return d;
}

void save_optimized(nb::object model, int level, const std::string& path) {
  PI_CHECK(level >= 0 && level <= 3, InvalidArgument, "optimization level ", level, " is not 0..3");
  Model m;
  if (nb::isinstance<nb::bytes>(model)) {
    const nb::bytes b = nb::borrow<nb::bytes>(model);
    m = import_onnx_bytes(b.c_str(), b.size(), "");
  } else {
    m = import_onnx_file(nb::cast<std::string>(model));
  }
  nb::gil_scoped_release unlocked;
  infer::infer_types(m);
  opt::optimize_model(m, level);
  for (const auto& [domain, version] : m.graph->opsets) m.opsets[domain] = version;
  export_onnx_file(m, path);
}

}  // namespace polyinfer::python
