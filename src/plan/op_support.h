// Which ONNX operators a toolchain accepts, and under what constraints: data files
// (data/op_support/*.json, embedded like the target catalog), each with its toolchain version and
// source, plus the polyinfer providers' own support read from the providers themselves.
//
// A profile lists operators as supported, supported with constraints, or unsupported. The
// constraints `plan` can check on a graph are a small vocabulary (an attribute's allowed values,
// an input that must be a constant, a bound on a constant input's value, static shapes, zero
// points that must be 0, …); a constraint outside it is kept as text and reported as "check by
// hand". An operator the profile does not list is reported as "not in <toolchain>'s list".
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace polyinfer::plan {

// One machine-checkable condition on a node. Kinds:
//   "attr_in"          attribute `name` (string or int) must be one of `values` (absent: its
//                      ONNX default, given as `default_value`)
//   "input_const"      input `index` must be an initializer / constant
//   "const_input_max"  every element of constant input `index` must be <= `max`
//   "static_shape"     every input and output shape must be fully known
//   "zero_point_zero"  Quantize/DequantizeLinear's zero point (input 2) must be all zeros
//   "positive_const"   every element of constant input `index` must be >= 0
//   "text"             not checkable; `text` is reported for the user to verify
struct Constraint {
  std::string kind;
  std::string name;                 // attr_in
  std::vector<std::string> values;  // attr_in (ints written as decimal strings)
  std::string default_value;        // attr_in
  int index = -1;                   // input_const, const_input_max, positive_const
  double max = 0;                   // const_input_max
  std::string text;                 // the source's own words, for every kind
};

struct OpRule {
  std::string op;  // "Resize"; a domain other than ai.onnx is written "com.microsoft:Gelu"
  bool supported = true;
  std::vector<Constraint> constraints;
};

struct OpSupportProfile {
  std::string id;         // "rknn-toolkit2-2.3.2", "tensorrt-10", "openvino-onnx", "qnn-ep"
  std::string toolchain;  // "RKNN-Toolkit2"
  std::string version;    // "2.3.2"
  std::string source;     // where the list comes from (repository file and revision, URL)
  int max_opset = 0;      // 0: not stated
  bool static_shapes_only = false;
  std::vector<std::string> notes;  // "NPU computes in fp16", …
  // Another profile whose operator list this one starts from (its own `ops` override entries):
  // a device plugin that takes what its toolchain's frontend takes, under stricter rules.
  std::string inherits;
  std::map<std::string, OpRule> ops;
};

// A node the profile would not run, and why (the constraint's own words where it has them).
struct Rejection {
  std::string node;  // node label: "TopK 'topk_0'"
  std::string op;
  std::string reason;   // "not supported by RKNN-Toolkit2 2.3.2", "K=5000 > 3840 (TopK K<3840)"
  bool certain = true;  // false for "text" constraints and unlisted ops: check by hand
};

std::vector<OpSupportProfile> parse_op_support(const std::string& json_text,
                                               const std::string& origin);
// Every data/op_support/*.json profile built into the library.
const std::vector<OpSupportProfile>& builtin_op_support();
const OpSupportProfile* find_op_support(const std::vector<OpSupportProfile>& profiles,
                                        const std::string& id);

// The graph's nodes the profile rules out (in graph order), empty when it takes them all.
std::vector<Rejection> check_graph(const OpSupportProfile& profile, const ir::Graph& graph);

}  // namespace polyinfer::plan
