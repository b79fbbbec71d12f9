#include "polyinfer/status.h"

namespace polyinfer {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::InvalidModel: return "InvalidModel";
    case ErrorCode::InvalidArgument: return "InvalidArgument";
    case ErrorCode::UnsupportedOp: return "UnsupportedOp";
    case ErrorCode::ProviderUnavailable: return "ProviderUnavailable";
    case ErrorCode::ShapeMismatch: return "ShapeMismatch";
    case ErrorCode::OutOfMemory: return "OutOfMemory";
    case ErrorCode::Io: return "Io";
    case ErrorCode::Internal: return "Internal";
  }
  return "Unknown";
}

int exit_code(ErrorCode code) { return 10 + static_cast<int>(code); }

}  // namespace polyinfer
