// polyinfer/status.h — the one error type of polyinfer.
//
// Every failure that a user can cause (a malformed model, a wrong shape, a missing file, an
// unsupported operator, an unusable provider) is reported as a polyinfer::Error whose message
// says what went wrong, where (node, input, file) and how to fix it. Nothing in polyinfer aborts
// on bad input; library calls throw Error, the C API returns its code, the CLI prints
// "error: <message>" and exits with the code's documented exit status.
//
//   try {
//     auto session = polyinfer::Session::load("model.onnx");
//   } catch (const polyinfer::Error& e) {
//     std::cerr << "error: " << e.what() << "\n";   // one line, names the thing and the fix
//     return polyinfer::exit_code(e.code());
//   }
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace polyinfer {

enum class ErrorCode {
  InvalidModel = 1,         // the model file is not valid ONNX, or breaks the spec
  InvalidArgument = 2,      // a bad option, input name, dtype or value from the caller
  UnsupportedOp = 3,        // no provider in the list can run a node
  ProviderUnavailable = 4,  // a requested provider is not usable on this machine
  ShapeMismatch = 5,        // an input or intermediate has a shape the model does not allow
  OutOfMemory = 6,          // an allocation failed or would exceed a limit
  Io = 7,                   // a file could not be read or written
  Internal = 8,             // a bug in polyinfer: please report it
};

// The short name of a code ("InvalidModel", ...).
const char* error_code_name(ErrorCode code);

// Process exit status the CLI uses for a code: 10 + the code's value (11..18). 1 is reserved for
// usage errors, 2 for a failed conformance/compare run.
int exit_code(ErrorCode code);

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

namespace detail {
template <class... Args> std::string concat(Args&&... args) {
  std::ostringstream os;
  (os << ... << std::forward<Args>(args));
  return os.str();
}
}  // namespace detail

// Throws Error(code, concatenation of the streamed arguments).
template <class... Args> [[noreturn]] void fail(ErrorCode code, Args&&... args) {
  throw Error(code, detail::concat(std::forward<Args>(args)...));
}

}  // namespace polyinfer

// Checks a condition on data that came from outside (model, tensor file, caller); on failure
// throws Error with the given code and message parts.
#define PI_CHECK(cond, code, ...)                                              \
  do {                                                                         \
    if (!(cond)) ::polyinfer::fail(::polyinfer::ErrorCode::code, __VA_ARGS__); \
  } while (0)
