// Target chips as data: the catalog `plan` predicts against.
//
// The catalog is JSON (data/targets/*.json in the repository, embedded into the library at build
// time so the binary needs no data files; `--catalog FILE` reads another). Every figure carries
// its source, and a figure the vendor states only with structured sparsity is marked so: its
// dense value is derived (÷2) and the report says so. The schema is in docs/plan.md.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace polyinfer::plan {

// Arithmetic precisions a peak can be given for.
enum class Precision { FP32, TF32, FP16, BF16, FP8, INT8, INT4 };
const char* precision_name(Precision p);  // "fp32", "tf32", …
// Parses "fp32" etc.; false when `s` is not a precision name.
bool parse_precision(const std::string& s, Precision* out);
// Bytes per element of weights stored at `p` (int4: 0.5, without block scales).
double precision_bytes(Precision p);

// One sourced figure. `value` is in base units (FLOP/s or OP/s, bytes, bytes/s, watts).
struct Figure {
  double value = 0;
  bool known = false;
  bool derived = false;  // computed from other figures (e.g. sparse ÷ 2); `note` says how
  std::string source;    // URL or document the figure comes from
  std::string note;
};

struct Target {
  std::string id;                    // "h100-sxm", "rk3588", "this"
  std::string name;                  // "NVIDIA H100 SXM"
  std::string kind;                  // "gpu", "npu", "cpu", "tpu", "soc", "mcu"
  std::map<Precision, Figure> peak;  // dense peak per precision
  Figure memory;                     // capacity, bytes
  Figure bandwidth;                  // main-memory bandwidth, bytes/s
  // Measured bandwidth by working set (bytes → bytes/s, ascending): a node whose bytes fit a
  // cache level streams at that level's rate. Empty for catalog targets (DRAM rate only).
  std::vector<std::pair<double, double>> bandwidth_tiers;
  Figure power;  // watts (TDP or board power as the source states)
  // Fixed cost per node (kernel launch / dispatch), seconds; 0 when unknown.
  Figure node_overhead;
  // Fractions of peak compute and bandwidth that real kernels reach, with their source; plan
  // uses 1.0 (the pure roofline) when a target gives none.
  Figure compute_efficiency, bandwidth_efficiency;
  std::string toolchain;   // how ONNX runs there ("TensorRT 10; ONNX Runtime CUDA/TensorRT EP")
  std::string op_support;  // id of an op-support profile (op_support.h), "" when none
  std::vector<std::string> notes;  // e.g. "NPU computes in fp16 only", "no ONNX path"
};

// Parses a catalog document; throws polyinfer::Error (InvalidArgument) naming `origin` and the
// entry and field at fault.
std::vector<Target> parse_catalog(const std::string& json_text, const std::string& origin);
// The catalog built into the library (every data/targets/*.json file).
const std::vector<Target>& builtin_catalog();
// Finds a target by id (case-insensitive; also accepts the name); nullptr when none.
const Target* find_target(const std::vector<Target>& catalog, const std::string& id);

}  // namespace polyinfer::plan
