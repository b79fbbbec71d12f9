// ONNX operator schemas, built one at a time as the import asks for them.
//
// libonnx's OpSchemaRegistry builds every schema of every opset and domain (~1900) the first time
// any one is looked up: ~11 ms of each process's first import here, and more under sanitizers,
// for a model that needs a dozen. Each schema is defined in libonnx by a function
// GetOpSchema<Name_Domain_verN>() (onnx/defs/schema.h's ONNX_OPERATOR_SET_SCHEMA_CLASS_NAME),
// which the shared library exports; this registry finds and calls only the ones asked for.
// Whatever it cannot find that way (a symbol missing from the library, a domain it does not
// map) it takes from libonnx's full registry, so its answers are libonnx's
// (tests/unit/schemas_test.cpp compares every schema of the full registry).
#pragma once

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

namespace polyinfer::onnx_io {

// Thread-safe; schemas live for the process, as libonnx's do.
const onnx::ISchemaRegistry* lazy_schemas();

}  // namespace polyinfer::onnx_io
