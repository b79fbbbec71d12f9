#include "providers/cpu/choice.h"

#include <algorithm>
#include <cstdlib>

#include "providers/cpu/fast/avx512_math.h"
#include "providers/cpu/onednn/onednn.h"

namespace polyinfer::cpu {
namespace {

bool all_equal(const std::vector<int64_t>& v, int64_t x) {
  return std::all_of(v.begin(), v.end(), [&](int64_t e) { return e == x; });
}

// NhwcFusedConv's shape from its constant weights and attributes; nullopt where the weights
// are not a constant of rank 4 or an attribute has the wrong type (the constructors say why).
std::optional<ConvShape> read_conv(const KernelInfo& info) {
  const Tensor* w = info.has_input(1) ? info.constant_input(1) : nullptr;
  if (!w || w->rank() != 4) return std::nullopt;
  ConvShape c;
  c.m = w->shape()[0];
  c.c = w->shape()[1];
  c.kh = w->shape()[2];
  c.kw = w->shape()[3];
  const ir::Node& n = info.node();
  const ir::Attribute* group = n.attr("group");
  const ir::Attribute* strides = n.attr("strides");
  const ir::Attribute* dilations = n.attr("dilations");
  const ir::Attribute* pads = n.attr("pads");
  using T = ir::Attribute::Type;
  if ((group && group->type != T::Int) || (strides && strides->type != T::Ints) ||
      (dilations && dilations->type != T::Ints) || (pads && pads->type != T::Ints))
    return std::nullopt;
  if (group) c.group = group->i;
  if (strides && !strides->ints.empty())
    c.stride = all_equal(strides->ints, strides->ints[0]) ? strides->ints[0] : 0;
  c.undilated = !dilations || all_equal(dilations->ints, 1);
  c.unpadded = !pads || all_equal(pads->ints, 0);
  const ir::TypeInfo* x = info.input_type(0);
  c.one_pixel = x && x->has_shape && x->dims.size() == 4 && x->dims[1] == 1 && x->dims[2] == 1;
  if (x && x->has_shape && x->dims.size() == 4 && x->dims[1] > 0 && x->dims[2] > 0)
    c.pixels = x->dims[1] * x->dims[2];
  return c;
}

// An int8 product's operands: its constant int8 weights (B: input 1 of MatMulInteger, 3 of the
// QLinear* operators) and its source's type (X's, or its zero point's); nullopt where either is
// not of that form (the constructors refuse those nodes and say why).
std::optional<Int8Operands> read_int8(const KernelInfo& info) {
  const bool integer = info.node().op_type == "MatMulInteger";
  const size_t wi = integer ? 1 : 3, zi = 2;
  const Tensor* w = info.has_input(wi) ? info.constant_input(wi) : nullptr;
  if (!w || w->dtype() != DType::Int8) return std::nullopt;
  DType source = DType::Undefined;
  if (const ir::TypeInfo* x = info.input_type(0)) source = x->elem;
  if (source == DType::Undefined && info.has_input(zi))
    if (const ir::TypeInfo* z = info.input_type(zi)) source = z->elem;
  if (source != DType::Int8 && source != DType::UInt8) return std::nullopt;
  Int8Operands o;
  o.signed_source = source == DType::Int8;
  // The sum's length: a convolution's W is [M, C/group, ...], a product's B [K, N].
  const bool conv = info.node().op_type.find("QLinearConv") != std::string::npos;
  o.pairs = w->rank() < 2 || w->dim(conv ? 1 : 0) > 1;
  // Read in place (int8 has no alignment to keep), never copied whole.
  const int8_t* p = static_cast<const int8_t*>(w->peek_bytes());
  for (int64_t i = 0; i < w->numel(); ++i)
    o.max_abs_weight = std::max(o.max_abs_weight, std::abs(int(p[i])));
  return o;
}

bool runs(Isa isa, const CpuFeatures& cpu) {
  switch (isa) {
    case Isa::Any: return true;
    case Isa::Avx2: return cpu.avx2;
    case Isa::Avx512: return cpu.avx2 && cpu.avx512;
  }
  return false;
}

KernelSwitch switch_of(const CpuProviderOptions& options, const char* kernel) {
  const auto it = options.kernels.find(kernel);
  return it == options.kernels.end() ? KernelSwitch::Auto : it->second;
}

// A refusal's text without the node's label in front (the placement names the node already).
std::string refusal(const Error& e, const std::string& label) {
  std::string s = e.what();
  if (s.rfind(label + ": ", 0) == 0) s.erase(0, label.size() + 2);
  return s;
}

}  // namespace

CpuFeatures CpuFeatures::of_this_cpu(const CpuProviderOptions& options) {
  CpuFeatures f;
  f.avx2 = fast::avx2::supported();
#ifdef PI_X86_AVX512
  f.avx512 = fast::avx512::supported();
#endif
  f.onednn_avx512 = onednn::avx512_kernels();
  f.zmm_gemm = f.avx512 && options.gemm_tile != GemmTile::Avx2;
  f.onednn_int8_exact = onednn::int8_products_exact();
  return f;
}

ChoiceFacts read_facts(const KernelInfo& info, const CpuFeatures& cpu) {
  ChoiceFacts f;
  f.cpu = cpu;
  const std::string& op = info.node().op_type;
  if (op == "NhwcFusedConv") f.conv = read_conv(info);
  if (op.find("QLinearConv") != std::string::npos || op == "QLinearMatMul" || op == "QLinearGemm" ||
      op == "MatMulInteger")
    f.int8 = read_int8(info);
  return f;
}

const ChoiceTable* choice_table(const std::string& domain, const std::string& op_type) {
  const std::string dom = domain == "ai.onnx" ? "" : domain;
  for (const ChoiceTable& t : choice_tables())
    for (const auto& [d, op] : t.ops)
      if (dom == d && op_type == op) return &t;
  return nullptr;
}

std::vector<RowVerdict> judge(const ChoiceTable& table, const ChoiceFacts& facts,
                              const CpuProviderOptions& options) {
  std::vector<RowVerdict> out;
  for (const ChoiceRow& row : table.rows) {
    RowVerdict v{&row, false, ""};
    const KernelSwitch sw = switch_of(options, row.kernel);
    if (row.can && row.can(facts)) {
      // Not its shapes: nothing to report.
    } else if (sw == KernelSwitch::Off) {
      v.reason = "turned off";
    } else if (!runs(row.isa, facts.cpu)) {
      v.reason = row.isa == Isa::Avx512 ? "needs AVX-512" : "needs AVX2 and FMA";
    } else if (sw == KernelSwitch::Auto && row.opt_in) {
      // Not worth a word in every placement: an opt-in row is off unless switched on.
    } else if (const char* why =
                   sw == KernelSwitch::Auto && row.prefer ? row.prefer(facts) : nullptr) {
      v.reason = why;
    } else {
      v.try_it = true;
    }
    out.push_back(std::move(v));
  }
  return out;
}

std::string first_choice(const ChoiceTable& table, const ChoiceFacts& facts,
                         const CpuProviderOptions& options) {
  for (const RowVerdict& v : judge(table, facts, options))
    if (v.try_it) return v.row->kernel;
  return "reference";
}

std::unique_ptr<Kernel> choose_kernel(const std::vector<const KernelDef*>& defs,
                                      const KernelInfo& info) {
  const ir::Node& n = info.node();
  const ChoiceTable* table = choice_table(n.domain, n.op_type);
  const bool fast = std::any_of(defs.begin(), defs.end(),
                                [](const KernelDef* d) { return d->tier == KernelTier::Fast; });
  if (!table || !fast) return make_first_taker(defs, info);
  const CpuProviderOptions& options = info.options().cpu;
  const ChoiceFacts facts = read_facts(info, CpuFeatures::of_this_cpu(options));
  std::string passed;  // the rows passed over, with why
  auto pass = [&](const char* kernel, const std::string& why) {
    passed += (passed.empty() ? "" : "; ") + std::string(kernel) + " (" + why + ")";
  };
  auto chosen = [&](std::unique_ptr<Kernel> k, const std::string& row) {
    k->set_choice(row + (passed.empty() ? "" : "; passed over: " + passed));
    return k;
  };
  for (const RowVerdict& v : judge(*table, facts, options)) {
    if (!v.try_it) {
      if (!v.reason.empty()) pass(v.row->kernel, v.reason);
      continue;
    }
    const auto def = std::find_if(defs.begin(), defs.end(), [&](const KernelDef* d) {
      return d->tier == KernelTier::Fast && d->name == v.row->kernel;
    });
    if (def == defs.end()) {
      pass(v.row->kernel, "not in this build");
      continue;
    }
    try {
      return chosen((*def)->make(info), std::string(v.row->kernel) + ": " + v.row->why);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::UnsupportedOp) throw;
      pass(v.row->kernel, refusal(e, n.label()));
    }
  }
  const auto ref = std::find_if(defs.begin(), defs.end(), [](const KernelDef* d) {
    return d->tier == KernelTier::Reference;
  });
  PI_CHECK(ref != defs.end(), UnsupportedOp, n.label(), ": no cpu kernel takes it (", passed, ")");
  return chosen((*ref)->make(info), "reference: no faster kernel takes it");
}

std::vector<std::string> kernel_switch_names() {
  std::vector<std::string> out;
  for (const ChoiceTable& t : choice_tables())
    for (const ChoiceRow& r : t.rows)
      if (std::find(out.begin(), out.end(), r.kernel) == out.end()) out.push_back(r.kernel);
  return out;
}

}  // namespace polyinfer::cpu
