// The C API (include/polyinfer/c_api.h) over the C++ one: every entry point catches what the
// C++ side throws and returns it as a PiStatus, so no exception crosses into C.
#include "polyinfer/c_api.h"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <string>
#include <vector>

#include "polyinfer/session.h"

struct PiStatus {
  PiErrorCode code;
  std::string message;
};

struct PiSessionOptions {
  polyinfer::SessionOptions options;
};

struct PiSession {
  polyinfer::Session session;
  // Runs hold it shared; placement reads exclusively, as first runs fill in what they learn.
  mutable std::shared_mutex mu;
};

struct PiTensor {
  polyinfer::Tensor tensor;
};

namespace {

using polyinfer::DType;
using polyinfer::Error;
using polyinfer::ErrorCode;
using polyinfer::Tensor;

PiStatus* make_status(PiErrorCode code, std::string message) {
  // A status for an allocation failure must not need an allocation that can fail.
  static PiStatus out_of_memory{PI_OUT_OF_MEMORY, ""};
  try {
    return new PiStatus{code, std::move(message)};
  } catch (const std::bad_alloc&) {
    return &out_of_memory;
  }
}

PiStatus* invalid(const std::string& message) { return make_status(PI_INVALID_ARGUMENT, message); }

// Runs `body`; what it throws becomes a status.
template <class F> PiStatus* guarded(F&& body) {
  try {
    body();
    return nullptr;
  } catch (const Error& e) {
    return make_status(static_cast<PiErrorCode>(e.code()), e.what());
  } catch (const std::bad_alloc&) {
    return make_status(PI_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return make_status(PI_INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) {
    return make_status(PI_INTERNAL, "internal error: an unknown exception");
  }
}

// The C API's dtypes: whole-byte types of dtype.h; strings and the packed types are refused.
bool c_dtype(PiDType d) {
  if (d <= 0 || d > polyinfer::kMaxDType) return false;
  const auto t = static_cast<DType>(d);
  return t != DType::String && t != DType::Complex64 && t != DType::Complex128 &&
         !polyinfer::is_packed(t);
}

std::string dtype_text(PiDType d) {
  return d > 0 && d <= polyinfer::kMaxDType ? polyinfer::dtype_name(static_cast<DType>(d))
                                            : "number " + std::to_string(d);
}

polyinfer::Shape shape_of(const int64_t* shape, size_t rank) {
  if (rank > 0 && !shape)
    polyinfer::fail(ErrorCode::InvalidArgument, "shape is NULL for rank ", rank);
  polyinfer::Shape s(shape, shape + rank);
  for (size_t i = 0; i < rank; ++i)
    if (s[i] < 0)
      polyinfer::fail(ErrorCode::InvalidArgument, "dimension ", i, " is ", s[i],
                      ": a tensor's dimensions are 0 or more");
  return s;
}

const polyinfer::ValueSpec* spec(const PiSession* s, int is_output, size_t index) {
  if (!s) return nullptr;
  const auto& list = is_output ? s->session.outputs() : s->session.inputs();
  return index < list.size() ? &list[index] : nullptr;
}

}  // namespace

extern "C" {

uint32_t pi_api_version(void) { return PI_API_VERSION; }
const char* pi_version(void) { return polyinfer::version(); }
const char* pi_dtype_name(PiDType dtype) {
  return dtype > 0 && dtype <= polyinfer::kMaxDType
             ? polyinfer::dtype_name(static_cast<DType>(dtype))
             : "";
}

PiErrorCode pi_status_code(const PiStatus* status) { return status ? status->code : PI_OK; }
const char* pi_status_message(const PiStatus* status) {
  if (!status) return "";
  return status->code == PI_OUT_OF_MEMORY && status->message.empty() ? "out of memory"
                                                                     : status->message.c_str();
}
void pi_status_release(PiStatus* status) {
  if (status && !(status->code == PI_OUT_OF_MEMORY && status->message.empty())) delete status;
}

PiStatus* pi_options_create(PiSessionOptions** out) {
  if (!out) return invalid("pi_options_create: out is NULL");
  *out = nullptr;
  return guarded([&] { *out = new PiSessionOptions(); });
}
void pi_options_release(PiSessionOptions* options) { delete options; }

PiStatus* pi_options_set_providers(PiSessionOptions* options, const char* providers) {
  if (!options || !providers)
    return invalid("pi_options_set_providers: options or providers is NULL");
  return guarded([&] {
    std::vector<std::string> list;
    std::string item;
    for (const char* p = providers;; ++p) {
      if (*p == ',' || *p == '\0') {
        PI_CHECK(!item.empty(), InvalidArgument, "providers '", providers,
                 "' has an empty entry; give names separated by commas, e.g. \"vulkan,cpu\"");
        list.push_back(item);
        item.clear();
        if (*p == '\0') break;
      } else if (*p != ' ') {
        item += *p;
      }
    }
    options->options.providers = list;
  });
}

PiStatus* pi_options_set_allow_fallback(PiSessionOptions* options, int allow) {
  if (!options) return invalid("pi_options_set_allow_fallback: options is NULL");
  options->options.allow_missing = allow != 0;
  return nullptr;
}

PiStatus* pi_options_set_threads(PiSessionOptions* options, int threads) {
  if (!options) return invalid("pi_options_set_threads: options is NULL");
  if (threads < 0)
    return invalid("threads is " + std::to_string(threads) +
                   "; give 1 or more, or 0 for one per physical core");
  options->options.threads = threads;
  return nullptr;
}

PiStatus* pi_options_set_optimization_level(PiSessionOptions* options, int level) {
  if (!options) return invalid("pi_options_set_optimization_level: options is NULL");
  if (level < 0 || level > 3)
    return invalid("optimization level " + std::to_string(level) +
                   " is out of range; give 0 (none) to 3 (all)");
  options->options.optimization_level = level;
  return nullptr;
}

PiStatus* pi_options_set_precision(PiSessionOptions* options, const char* precision) {
  if (!options || !precision)
    return invalid("pi_options_set_precision: options or precision is NULL");
  return guarded([&] { options->options.precision = polyinfer::parse_precision(precision); });
}

PiStatus* pi_session_create(const char* path, const PiSessionOptions* options, PiSession** out) {
  if (!out) return invalid("pi_session_create: out is NULL");
  *out = nullptr;
  if (!path) return invalid("pi_session_create: path is NULL; give the model file's path");
  return guarded([&] {
    const polyinfer::SessionOptions opts = options ? options->options : polyinfer::SessionOptions{};
    *out = new PiSession{polyinfer::Session::load(path, opts), {}};
  });
}

PiStatus* pi_session_create_from_bytes(const void* data, size_t size,
                                       const PiSessionOptions* options, PiSession** out) {
  if (!out) return invalid("pi_session_create_from_bytes: out is NULL");
  *out = nullptr;
  if (!data && size) return invalid("pi_session_create_from_bytes: data is NULL");
  return guarded([&] {
    const polyinfer::SessionOptions opts = options ? options->options : polyinfer::SessionOptions{};
    *out = new PiSession{polyinfer::Session::load_bytes(data, size, opts), {}};
  });
}

void pi_session_release(PiSession* session) { delete session; }

size_t pi_session_io_count(const PiSession* session, int is_output) {
  if (!session) return 0;
  return (is_output ? session->session.outputs() : session->session.inputs()).size();
}

const char* pi_session_io_name(const PiSession* session, int is_output, size_t index) {
  const polyinfer::ValueSpec* s = spec(session, is_output, index);
  return s ? s->name.c_str() : nullptr;
}

PiDType pi_session_io_dtype(const PiSession* session, int is_output, size_t index) {
  const polyinfer::ValueSpec* s = spec(session, is_output, index);
  return s ? static_cast<PiDType>(s->dtype) : PI_DTYPE_UNDEFINED;
}

int64_t pi_session_io_rank(const PiSession* session, int is_output, size_t index) {
  const polyinfer::ValueSpec* s = spec(session, is_output, index);
  return s && s->has_shape ? static_cast<int64_t>(s->shape.size()) : -1;
}

int64_t pi_session_io_dim(const PiSession* session, int is_output, size_t index, size_t axis) {
  const polyinfer::ValueSpec* s = spec(session, is_output, index);
  if (!s || !s->has_shape || axis >= s->shape.size()) return -1;
  return s->shape[axis] < 0 ? -1 : s->shape[axis];
}

const char* pi_session_io_dim_name(const PiSession* session, int is_output, size_t index,
                                   size_t axis) {
  const polyinfer::ValueSpec* s = spec(session, is_output, index);
  if (!s || !s->has_shape || axis >= s->shape.size()) return nullptr;
  return axis < s->dims.size() ? s->dims[axis].c_str() : "";
}

PiStatus* pi_session_run(PiSession* session, const char* const* input_names,
                         const PiTensor* const* inputs, size_t n_inputs,
                         const char* const* output_names, size_t n_outputs, PiTensor** outputs,
                         size_t n_outputs_room) {
  if (!session) return invalid("pi_session_run: session is NULL");
  if (n_inputs && (!input_names || !inputs))
    return invalid("pi_session_run: input_names or inputs is NULL for " + std::to_string(n_inputs) +
                   " inputs");
  if (n_outputs && !output_names)
    return invalid("pi_session_run: output_names is NULL for " + std::to_string(n_outputs) +
                   " outputs; pass 0 outputs for all of them");
  const std::vector<polyinfer::ValueSpec>& specs = session->session.outputs();
  const size_t wanted = n_outputs ? n_outputs : specs.size();
  if (!outputs || n_outputs_room < wanted)
    return invalid("pi_session_run: room for " + std::to_string(n_outputs_room) +
                   " outputs, and the run gives " + std::to_string(wanted));
  return guarded([&] {
    std::map<std::string, polyinfer::Value> feeds;
    for (size_t i = 0; i < n_inputs; ++i) {
      PI_CHECK(input_names[i], InvalidArgument, "pi_session_run: input name ", i, " is NULL");
      PI_CHECK(inputs[i], InvalidArgument, "pi_session_run: input '", input_names[i],
               "' is a NULL tensor");
      PI_CHECK(feeds.emplace(input_names[i], inputs[i]->tensor).second, InvalidArgument, "input '",
               input_names[i], "' is given twice");
    }
    // Which outputs, by their index in the model's list: checked before the run.
    std::vector<size_t> which;
    for (size_t k = 0; k < wanted; ++k) {
      if (!n_outputs) {
        which.push_back(k);
        continue;
      }
      PI_CHECK(output_names[k], InvalidArgument, "pi_session_run: output name ", k, " is NULL");
      size_t i = 0;
      while (i < specs.size() && specs[i].name != output_names[k]) ++i;
      if (i == specs.size()) {
        std::string names;
        for (const auto& s : specs) names += (names.empty() ? "'" : ", '") + s.name + "'";
        polyinfer::fail(ErrorCode::InvalidArgument, "the model has no output named '",
                        output_names[k], "'; its outputs are: ", names);
      }
      which.push_back(i);
    }
    std::vector<polyinfer::Value> all;
    {
      std::shared_lock<std::shared_mutex> lock(session->mu);
      all = session->session.run(feeds);
    }
    // Every result is checked before any slot is written, so that a failure sets none.
    std::vector<Tensor> results;
    for (size_t k = 0; k < wanted; ++k) {
      const polyinfer::Value& v = all[which[k]];
      const std::string& name = specs[which[k]].name;
      PI_CHECK(v.is_tensor(), InvalidArgument, "output '", name, "' is a ", v.describe(),
               ", which the C API cannot pass yet (tensors only)");
      const Tensor& t = v.tensor();
      PI_CHECK(c_dtype(static_cast<PiDType>(t.dtype())), InvalidArgument, "output '", name,
               "' is a ", t.describe(), ", a dtype the C API cannot pass yet");
      if (const PiTensor* dst = outputs[k])
        PI_CHECK(dst->tensor.dtype() == t.dtype() && dst->tensor.shape() == t.shape(),
                 ShapeMismatch, "output '", name, "' is ", t.describe(),
                 " but the tensor given for it is ", dst->tensor.describe(),
                 "; give a tensor of that dtype and shape, or NULL to have one made");
      results.push_back(t);
    }
    all.clear();
    // A result that shares memory (a view of an input or of a weight, or an output asked for
    // twice) is copied: the caller may write to what it gets and free what it lent.
    for (size_t k = 0; k < wanted; ++k)
      if (!outputs[k] && !results[k].sole_owner()) results[k] = results[k].clone();
    std::vector<PiTensor*> made;
    try {
      for (size_t k = 0; k < wanted; ++k)
        if (!outputs[k]) made.push_back(new PiTensor{results[k]});
    } catch (...) {
      for (PiTensor* t : made) delete t;
      throw;
    }
    size_t m = 0;
    for (size_t k = 0; k < wanted; ++k) {
      if (outputs[k]) outputs[k]->tensor.copy_from(results[k]);
      else
        outputs[k] = made[m++];
    }
  });
}

char* pi_session_placement_json(const PiSession* session) {
  if (!session) return nullptr;
  try {
    std::string text;
    {
      std::unique_lock<std::shared_mutex> lock(session->mu);
      text = session->session.placement().to_json();
    }
    char* out = static_cast<char*>(std::malloc(text.size() + 1));
    if (out) std::memcpy(out, text.c_str(), text.size() + 1);
    return out;
  } catch (...) {
    return nullptr;
  }
}

void pi_string_release(char* text) { std::free(text); }

PiStatus* pi_tensor_create(PiDType dtype, const int64_t* shape, size_t rank, PiTensor** out) {
  if (!out) return invalid("pi_tensor_create: out is NULL");
  *out = nullptr;
  if (!c_dtype(dtype))
    return invalid("pi_tensor_create: dtype " + dtype_text(dtype) +
                   " cannot pass through the C API; use a whole-byte numeric or bool type");
  return guarded([&] {
    *out = new PiTensor{Tensor::empty(static_cast<DType>(dtype), shape_of(shape, rank))};
  });
}

PiStatus* pi_tensor_borrow(PiDType dtype, const int64_t* shape, size_t rank, void* data,
                           size_t nbytes, PiTensor** out) {
  if (!out) return invalid("pi_tensor_borrow: out is NULL");
  *out = nullptr;
  if (!c_dtype(dtype))
    return invalid("pi_tensor_borrow: dtype " + dtype_text(dtype) +
                   " cannot pass through the C API; use a whole-byte numeric or bool type");
  return guarded([&] {
    *out = new PiTensor{
        Tensor::borrow(static_cast<DType>(dtype), shape_of(shape, rank), data, nbytes)};
  });
}

void pi_tensor_release(PiTensor* tensor) { delete tensor; }

PiDType pi_tensor_dtype(const PiTensor* tensor) {
  return tensor ? static_cast<PiDType>(tensor->tensor.dtype()) : PI_DTYPE_UNDEFINED;
}
size_t pi_tensor_rank(const PiTensor* tensor) {
  return tensor ? static_cast<size_t>(tensor->tensor.rank()) : 0;
}
const int64_t* pi_tensor_shape(const PiTensor* tensor) {
  return tensor ? tensor->tensor.shape().data() : nullptr;
}
size_t pi_tensor_nbytes(const PiTensor* tensor) { return tensor ? tensor->tensor.nbytes() : 0; }
void* pi_tensor_data(PiTensor* tensor) { return tensor ? tensor->tensor.raw_data() : nullptr; }

}  // extern "C"
