// polyinfer._polyinfer — the C++ Session as the Python package sees it (python/polyinfer/).
//
// A thin layer: the ONNX Runtime–compatible surface (InferenceSession, SessionOptions, the
// provider names) is written in Python over these functions, so that what a Python user reads
// in a traceback is Python. Here: loading, metadata, and run() with numpy arrays in and out.
//
// Memory: an input array is lent to the run (Tensor::borrow), not copied; the Python layer
// passes only C-contiguous, native-endian arrays. An output becomes a numpy array over the
// tensor's own memory when nothing else holds that memory; one that shares it (a view of an
// input or of a weight) is copied first, so the caller may write to what it gets. The GIL is
// released while the model runs.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "convert.h"
#include "errors.h"
#include "model_file.h"
#include "polyinfer/session.h"
#include "polyinfer/status.h"
#include "tensor.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace polyinfer::python {
namespace {

// A session that close() can end while another thread runs it: each run holds its own handle.
class PySession {
 public:
  explicit PySession(Session s) : session_(std::move(s)) {}

  Session get() const {
    std::lock_guard<std::mutex> lock(mu_);
    if (!session_)
      fail(ErrorCode::InvalidArgument,
           "this InferenceSession was closed; create a new one to run the model again");
    return *session_;
  }
  void close() {
    std::lock_guard<std::mutex> lock(mu_);
    session_.reset();
  }
  bool closed() const {
    std::lock_guard<std::mutex> lock(mu_);
    return !session_;
  }

 private:
  mutable std::mutex mu_;
  std::optional<Session> session_;
};

SessionOptions make_options(const std::vector<std::string>& providers, bool allow_missing,
                            int threads, int level, const std::string& precision, bool profile) {
  SessionOptions o;
  o.providers = providers;
  o.allow_missing = allow_missing;
  PI_CHECK(threads >= 0, InvalidArgument, "intra_op_num_threads is ", threads,
           "; give 0 (one per physical core) or a positive count");
  o.threads = threads;
  PI_CHECK(level >= 0 && level <= 3, InvalidArgument, "optimization level ", level, " is not 0..3");
  o.optimization_level = level;
  o.precision = parse_precision(precision);
  o.profile = profile;
  return o;
}

nb::dict spec_dict(const ValueSpec& s) {
  nb::dict d;
  d["name"] = s.name;
  d["kind"] = s.kind;
  d["dtype"] = static_cast<int>(s.dtype);
  d["key_dtype"] = static_cast<int>(s.key_dtype);
  if (s.has_shape) {
    nb::list shape;
    for (size_t i = 0; i < s.shape.size(); ++i) {
      if (s.shape[i] >= 0) shape.append(s.shape[i]);
      else if (i < s.dims.size() && !s.dims[i].empty())
        shape.append(s.dims[i]);
      else
        shape.append(nb::none());
    }
    d["shape"] = shape;
  } else {
    d["shape"] = nb::none();
  }
  d["type"] = s.type;
  return d;
}

nb::list specs(const std::vector<ValueSpec>& v) {
  nb::list out;
  for (const auto& s : v) out.append(spec_dict(s));
  return out;
}

// Runs with `feeds`; returns the outputs named (all when `outputs` is empty), in order.
nb::list run(const PySession& ps, const Feeds& feeds, const std::vector<std::string>& outputs) {
  Session s = ps.get();
  std::vector<Value> results;
  {
    nb::gil_scoped_release unlocked;
    results = outputs.empty() ? s.run(feeds.values()) : s.run(feeds.values(), outputs);
    // While the inputs are still held, a result that shares their memory (or a weight's) is
    // not its memory's sole owner: it is copied, so that what Python gets is its own.
    for (Value& v : results) own_memory(v);
  }
  nb::list out;
  for (Value& v : results) out.append(to_python(std::move(v)));
  return out;
}

nb::dict placement(const PySession& ps) {
  const Placement& p = ps.get().placement();
  nb::dict d;
  d["summary"] = p.summary();
  d["json"] = p.to_json();
  return d;
}

nb::dict creation_times(const PySession& ps) {
  const CreationTimes& t = ps.get().creation_times();
  nb::dict d;
  d["import_ms"] = t.import_ms;
  d["optimize_ms"] = t.optimize_ms;
  d["kernels_ms"] = t.kernels_ms;
  d["total_ms"] = t.total_ms;
  return d;
}

nb::list providers() {
  nb::list out;
  for (const ProviderInfo& p : available_providers()) {
    nb::dict d;
    d["name"] = p.name;
    d["device"] = p.device;
    d["usable"] = p.usable;
    d["reason"] = p.reason;
    d["detail"] = p.detail;
    out.append(d);
  }
  return out;
}

}  // namespace
}  // namespace polyinfer::python

NB_MODULE(_polyinfer, m) {
  using namespace polyinfer;
  using namespace polyinfer::python;
  m.doc() = "polyinfer's C++ runtime; use the polyinfer package, not this module";
  register_errors();
  register_tensor(m);

  nb::class_<Feeds>(m, "Feeds")
      .def(nb::init<>())
      .def("add_array", &Feeds::add_array, "name"_a, "array"_a, "dtype"_a)
      .def("add_strings", &Feeds::add_strings, "name"_a, "shape"_a, "items"_a)
      .def("add_sequence", &Feeds::add_sequence, "name"_a, "items"_a, "dtypes"_a, "elem"_a)
      .def("add_none", &Feeds::add_none, "name"_a)
      .def("add_map", &Feeds::add_map, "name"_a, "keys"_a, "values"_a)
      .def("add_map_sequence", &Feeds::add_map_sequence, "name"_a, "keys"_a, "values"_a, "key"_a,
           "value"_a);

  nb::class_<PySession>(m, "Session")
      .def_prop_ro("inputs", [](const PySession& s) { return specs(s.get().inputs()); })
      .def_prop_ro("outputs", [](const PySession& s) { return specs(s.get().outputs()); })
      .def_prop_ro("threads", [](const PySession& s) { return s.get().threads(); })
      .def_prop_ro("optimization_level",
                   [](const PySession& s) { return s.get().optimization_level(); })
      .def_prop_ro("closed", &PySession::closed)
      .def("placement", &placement)
      .def("creation_times", &creation_times)
      .def("run", &run, "feeds"_a, "outputs"_a)
      .def("close", &PySession::close);

  m.def(
      "load_file",
      [](const std::string& path, const std::vector<std::string>& providers, bool allow_missing,
         int threads, int level, const std::string& precision, bool profile) {
        const SessionOptions o =
            make_options(providers, allow_missing, threads, level, precision, profile);
        nb::gil_scoped_release unlocked;
        return new PySession(Session::load(path, o));
      },
      "path"_a, "providers"_a, "allow_missing"_a, "threads"_a, "level"_a, "precision"_a,
      "profile"_a);
  m.def(
      "load_bytes",
      [](nb::bytes model, const std::vector<std::string>& providers, bool allow_missing,
         int threads, int level, const std::string& precision, bool profile) {
        const SessionOptions o =
            make_options(providers, allow_missing, threads, level, precision, profile);
        // The bytes object stays referenced by the caller for the call's length.
        const char* data = model.c_str();
        const size_t size = model.size();
        nb::gil_scoped_release unlocked;
        return new PySession(Session::load_bytes(data, size, o));
      },
      "model"_a, "providers"_a, "allow_missing"_a, "threads"_a, "level"_a, "precision"_a,
      "profile"_a);
  m.def("model_metadata", &model_metadata, "model"_a);
  m.def("save_optimized", &save_optimized, "model"_a, "level"_a, "path"_a);
  m.def("available_providers", &providers);
  m.def("version", [] { return std::string(polyinfer::version()); });
  m.def("default_thread_count", &default_thread_count);
}
