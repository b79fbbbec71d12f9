// How the CPU provider chooses among an operator's kernels: one ordered table per operator
// (choice_tables.cpp), read top to bottom for each node. docs/design.md "Kernel choice" has
// the reasons; docs/kernels.md lists every row.
//
// A row names a kernel registered with PI_CPU_CANDIDATE. For a node, each row in turn is:
//   - skipped where the CPU lacks the row's instruction set, or where its `can` rule says the
//     kernel does not compute such shapes;
//   - passed over where its switch (CpuProviderOptions::kernels) is Off, where it is opt-in and
//     not switched On, or where its `prefer` rule says a later row is faster (a switch set On
//     ignores `prefer`);
//   - else constructed: the constructor refuses (UnsupportedOp) what only it can check (dtypes,
//     constant weights, activations), and the next row is tried.
// After the last row comes the operator's reference kernel. The chosen kernel's choice()
// names its row and the rows passed over, with the reasons (Placement's choice).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "polyinfer/provider_options.h"
#include "runtime/kernel.h"

namespace polyinfer::cpu {

// What this CPU runs, as the rules read it.
struct CpuFeatures {
  bool avx2 = false;           // AVX2 and FMA: the hand-written kernels' baseline
  bool avx512 = false;         // AVX-512F: the zmm kernels
  bool onednn_avx512 = false;  // oneDNN runs AVX-512 code here
  bool zmm_gemm = false;       // the packed GEMM runs zmm tiles (AVX-512, and gemm_tile allows)
  // oneDNN's int8 products are exact here (VNNI, AMX: onednn::int8_products_exact())
  bool onednn_int8_exact = true;

  static CpuFeatures of_this_cpu(const CpuProviderOptions& options);
};

// A convolution as the rules read it: its constant weights [M, C, kH, kW] and attributes.
struct ConvShape {
  int64_t m = 0, c = 0;  // outputs; inputs per group
  int64_t kh = 0, kw = 0, group = 1;
  int64_t stride = 1;  // the common stride of both axes; 0 where they differ
  bool undilated = true, unpadded = true;
  bool one_pixel = false;  // X is known to be [N, 1, 1, C]
  int64_t pixels = 0;      // X's H x W where static (0: not known)
  bool unit_strides() const { return stride == 1; }
  int64_t taps() const { return kh * kw; }
};

// An int8 product (QLinearConv, QLinearMatMul, MatMulInteger and the fused forms) as the rules
// read it: what decides whether oneDNN's int8 products are exact on a CPU without VNNI.
struct Int8Operands {
  bool signed_source = false;  // X (A) is int8: oneDNN halves the weights there
  int max_abs_weight = 0;      // of its constant int8 weights; above 64 a pair may saturate
  // Its sums run over several input channels (not a depthwise convolution's one): the products
  // oneDNN adds in pairs without VNNI.
  bool pairs = true;
};

// What the rules of a table read for one node.
struct ChoiceFacts {
  CpuFeatures cpu;
  // NhwcFusedConv with constant weights of rank 4 and well-formed attributes; nullopt otherwise
  // (the rules that need it then decline, and the constructors say why).
  std::optional<ConvShape> conv;
  // The int8 products with constant int8 weights and a source of known 8-bit type; nullopt
  // otherwise (the constructors say why).
  std::optional<Int8Operands> int8 = std::nullopt;
};
ChoiceFacts read_facts(const KernelInfo& info, const CpuFeatures& cpu);

enum class Isa { Any, Avx2, Avx512 };

// nullptr where the rule holds, else why not (the placement's words).
using Rule = const char* (*)(const ChoiceFacts&);

struct ChoiceRow {
  const char* kernel;  // its KernelDef::name and its switch's key
  Isa isa;             // what the CPU must run
  Rule can;            // the shapes it computes (null: what its constructor takes)
  Rule prefer;         // where it beats the rows below it (null: wherever it can)
  bool opt_in;         // Auto leaves it out; On takes it
  const char* why;     // why it stands in this row
};

struct ChoiceTable {
  std::vector<std::pair<const char*, const char*>> ops;  // (domain, op type) it decides for
  std::vector<ChoiceRow> rows;  // in order; the reference kernel follows the last
};

// Every table (choice_tables.cpp).
const std::vector<ChoiceTable>& choice_tables();
// The table for (domain, op_type), or nullptr where the operator has one fast kernel at most.
const ChoiceTable* choice_table(const std::string& domain, const std::string& op_type);

// A row's verdict for a node before any constructor runs.
struct RowVerdict {
  const ChoiceRow* row;
  bool try_it;         // construct it (its constructor may still refuse)
  std::string reason;  // why not, when not; "" where not worth a word (not its shapes, opt-in)
};
// The verdict of every row of `table`, in order.
std::vector<RowVerdict> judge(const ChoiceTable& table, const ChoiceFacts& facts,
                              const CpuProviderOptions& options);
// The first row judge() would try, or "reference": what the tests pin per shape.
std::string first_choice(const ChoiceTable& table, const ChoiceFacts& facts,
                         const CpuProviderOptions& options);

// The kernel for info.node() among `defs` (its operator's CPU kernels, find_kernels()): by the
// operator's table where it has one and `defs` holds fast kernels, else the first that takes
// it. Throws UnsupportedOp with the last candidate's reason where none takes the node.
std::unique_ptr<Kernel> choose_kernel(const std::vector<const KernelDef*>& defs,
                                      const KernelInfo& info);

// The names the tables give kernels, for checking CpuProviderOptions::kernels.
std::vector<std::string> kernel_switch_names();

}  // namespace polyinfer::cpu
