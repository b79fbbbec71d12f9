// The CPU provider's kernel choice: one table per operator with several fast kernels, rows in
// the order they are tried (choice.h says how a row is judged). A row's `can` rule is the
// shapes its kernel computes; its `prefer` rule is where it was measured faster than the rows
// below it on the machines these tables were tuned on (docs/kernels.md has each kernel's
// figures, bench/README.md the models'). tests/unit/cpu_choice_test.cpp pins the choice for
// representative shapes on AVX-512, AVX2 and plain x86-64 machines.
#include "providers/cpu/choice.h"
#include "providers/cpu/onednn/onednn.h"

namespace polyinfer::cpu {
namespace {

constexpr const char* kNotConv = "not a convolution with constant 4-D weights";
// A feature map this small (8x8) runs in a few microseconds, about what a oneDNN primitive costs
// a call beyond its sums: there polyinfer's own kernels win where oneDNN's wins on larger maps.
constexpr int64_t kSmallMapPixels = 64;

// ---- NhwcFusedConv ----

// 1-4 input channels (an image's RGB), 2-9 taps, group 1, undilated; more than 16 outputs
// except on small maps (16 or fewer fill half a zmm panel: oneDNN's elsewhere).
const char* stem_can(const ChoiceFacts& f) {
  if (!f.conv) return kNotConv;
  const ConvShape& c = *f.conv;
  if (c.group != 1 || c.c > 4 || c.taps() < 2 || c.taps() > 9 || !c.undilated) return "not a stem";
  // Up to 16 outputs fill half the tile's 32 columns; oneDNN's call costs more only on a small
  // map (the digits CNN's 1 -> 16 on 8x8: 3 us on brgconv).
  if (c.m <= 16 && !(c.pixels > 0 && c.pixels <= kSmallMapPixels))
    return "16 outputs or fewer on a map over 64 pixels";
  return nullptr;
}

// One input channel per output channel, a square 3x3 or 5x5 window, equal strides of 1 or 2.
const char* depthwise_can(const ChoiceFacts& f) {
  if (!f.conv) return kNotConv;
  const ConvShape& c = *f.conv;
  if (c.c != 1 || c.group != c.m || c.kh != c.kw || (c.kh != 3 && c.kh != 5) || !c.undilated ||
      (c.stride != 1 && c.stride != 2))
    return "not a 3x3 or 5x5 depthwise convolution";
  return nullptr;
}

// As many outputs as inputs per group, 4, 8, 16 or 32 of them, windows up to 7x7.
const char* grouped_avx512_can(const ChoiceFacts& f) {
  if (!f.conv) return kNotConv;
  const ConvShape& c = *f.conv;
  if (c.group <= 1 || c.m % c.group != 0) return "not grouped";
  const int64_t ci = c.c, co = c.m / c.group;
  if (ci != co || (ci != 4 && ci != 8 && ci != 16 && ci != 32) || c.kh > 7 || c.kw > 7)
    return "not 4, 8, 16 or 32 channels per group in and out";
  return nullptr;
}

// 4 channels per group in pairs of groups, or 8 or 16 outputs per group of 2, 4, 8 or 16
// inputs: where oneDNN's jit kernels are slow (32 per group they run well; depthwise is theirs).
const char* grouped_can(const ChoiceFacts& f) {
  if (!f.conv) return kNotConv;
  const ConvShape& c = *f.conv;
  if (c.group <= 1 || c.m % c.group != 0) return "not grouped";
  const int64_t ci = c.c, co = c.m / c.group;
  const bool pairs = ci == 4 && co == 4 && c.group % 2 == 0;
  const bool wide = (co == 8 || co == 16) && (ci == 2 || ci == 4 || ci == 8 || ci == 16);
  if (!pairs && !wide) return "not a group size it takes";
  return nullptr;
}

// 3x3, stride 1, undilated, group 1, channel counts multiples of 8.
const char* winograd_can(const ChoiceFacts& f) {
  if (!f.conv) return kNotConv;
  const ConvShape& c = *f.conv;
  if (c.kh != 3 || c.kw != 3 || !c.unit_strides() || !c.undilated || c.group != 1 || c.c % 8 != 0 ||
      c.m % 8 != 0)
    return "not 3x3 stride 1";
  return nullptr;
}

// Fewer than 64 input channels: the transforms weigh more against a short sum, and oneDNN's
// AVX-512 direct convolution wins (onednn.h: kWinogradMinChannels) -- except on maps of 64
// pixels or fewer, where oneDNN's few microseconds a call outweigh its faster sums (the digits
// CNN's 16 -> 32 on 8x8: 7 us on brgconv, less on Winograd).
const char* winograd_prefer(const ChoiceFacts& f) {
  const ConvShape& c = *f.conv;
  if (c.c < onednn::kWinogradMinChannels && f.cpu.onednn_avx512 &&
      !(c.pixels > 0 && c.pixels <= kSmallMapPixels))
    return "fewer than 64 input channels on a map over 64 pixels, where oneDNN's AVX-512 direct "
           "convolution is faster";
  return nullptr;
}

// 1x1, unit strides, unpadded, group 1: a GEMM over the pixels. The ymm tile stores whole
// vectors, so there the outputs come in multiples of 8.
const char* pointwise_can(const ChoiceFacts& f) {
  if (!f.conv) return kNotConv;
  const ConvShape& c = *f.conv;
  if (c.taps() != 1 || !c.unit_strides() || !c.unpadded || c.group != 1)
    return "not an unpadded 1x1 at stride 1";
  if (c.m % 8 != 0 && !f.cpu.zmm_gemm) return "outputs not a multiple of 8 on the ymm tile";
  return nullptr;
}

// Measured against oneDNN's AVX-512 brgconv_1x1 only; there it wins from 16 input channels
// (below, K is too short for the tile's fixed cost) and on a 1x1 map (squeeze-and-excitation:
// rows are images) at any depth, and spares its JIT at creation.
const char* pointwise_prefer(const ChoiceFacts& f) {
  const ConvShape& c = *f.conv;
  if (!f.cpu.avx512 || !f.cpu.onednn_avx512)
    return "measured only against oneDNN's AVX-512 kernels";
  if (c.m <= 16) return "16 or fewer outputs: im2col's narrow form";
  if (c.c < 16 && !c.one_pixel) return "fewer than 16 input channels on a map larger than 1x1";
  if (c.m % 8 != 0 && !c.one_pixel) return "outputs not a multiple of 8 on a map larger than 1x1";
  return nullptr;
}

// Group 1, outputs in multiples of 8: any window, stride, padding and dilation.
const char* im2col_can(const ChoiceFacts& f) {
  if (!f.conv) return kNotConv;
  const ConvShape& c = *f.conv;
  if (c.group != 1 || c.m % 8 != 0) return "grouped, or outputs not a multiple of 8";
  return nullptr;
}

// Where oneDNN runs AVX2 only (its jit:avx2 ran strided 3x3 layers at 57-77 GFLOP/s), and one
// 1x1 form where it runs AVX-512: unit strides, unpadded, at most 16 outputs (brgconv_1x1 is
// at its weakest there), X itself the GEMM's A. With fewer than 16 input channels the copy of
// each pixel's taps costs more than oneDNN's convolution; 3x3 stride 1 is Winograd's.
const char* im2col_prefer(const ChoiceFacts& f) {
  const ConvShape& c = *f.conv;
  if (c.c < 16) return "fewer than 16 input channels";
  if (c.taps() == 1) {
    if (!f.cpu.onednn_avx512) return "1x1 where oneDNN runs AVX2: oneDNN's";
    if (!c.unit_strides() || !c.unpadded || c.m > 16)
      return "1x1 other than unpadded, stride 1, 16 or fewer outputs";
    return nullptr;
  }
  if (f.cpu.onednn_avx512) return "oneDNN's AVX-512 kernels are faster here";
  if (c.kh == 3 && c.kw == 3 && c.unit_strides()) return "3x3 stride 1: Winograd's or oneDNN's";
  return nullptr;
}

// Group 1, at least 8 input channels, windows larger than 1x1.
const char* direct_can(const ChoiceFacts& f) {
  if (!f.conv) return kNotConv;
  const ConvShape& c = *f.conv;
  if (c.group != 1 || c.c < 8 || c.taps() == 1) return "grouped, 1x1 or fewer than 8 inputs";
  return nullptr;
}

const ChoiceTable kNhwcFusedConv = {
    {{"ai.polyinfer", "NhwcFusedConv"}},
    {
        {"stem", Isa::Avx512, stem_can, nullptr, false,
         "1-4 input channels, 2-9 taps: oneDNN JITs each stem and runs it no faster"},
        {"depthwise", Isa::Avx512, depthwise_can, nullptr, false,
         "3x3 and 5x5 depthwise: rows shared among threads as the layers around it share them"},
        {"grouped_avx512", Isa::Avx512, grouped_avx512_can, nullptr, false,
         "4-32 channels per group in and out: several groups per zmm vector"},
        {"grouped", Isa::Avx2, grouped_can, nullptr, false,
         "small groups where oneDNN's jit kernels are slow"},
        {"winograd", Isa::Avx2, winograd_can, winograd_prefer, false,
         "3x3 stride 1 as Winograd F(2x2, 3x3): 2.25x fewer multiplies, no JIT"},
        {"pointwise_gemm", Isa::Avx2, pointwise_can, pointwise_prefer, false,
         "1x1 as the packed GEMM over the pixels: as fast as brgconv_1x1, no JIT at creation"},
        {"im2col", Isa::Avx2, im2col_can, im2col_prefer, false,
         "strided and larger windows where oneDNN runs AVX2; narrow 1x1 layers on AVX-512"},
        {"direct", Isa::Avx2, direct_can, nullptr, true,
         "direct AVX2 convolution, kept for measurement: level with oneDNN in the model"},
        {"onednn_conv", Isa::Any, nullptr, nullptr, false,
         "oneDNN: every window, group, stride and dilation"},
    }};

// ---- the others ----

const ChoiceTable kMatMul = {
    {{"", "MatMul"}, {"", "Gemm"}, {"ai.polyinfer", "FusedMatMul"}, {"ai.polyinfer", "FusedGemm"}},
    {
        {"packed_matmul", Isa::Avx2, nullptr, nullptr, false,
         "constant 2-D weights packed once into the register tiles' panels"},
        {"onednn_matmul", Isa::Any, nullptr, nullptr, false,
         "oneDNN: computed operands, batched products"},
    }};

const ChoiceTable kPointwiseDepthwise = {
    {{"ai.polyinfer", "NhwcPointwiseDepthwiseConv"}},
    {
        {"pointwise_depthwise", Isa::Avx2, nullptr, nullptr, false,
         "the expansion and its 3x3 depthwise together: the expanded rows stay in cache"},
        {"pointwise_then_depthwise", Isa::Any, nullptr, nullptr, false,
         "the two convolutions one after the other, each by NhwcFusedConv's table"},
    }};

const ChoiceTable kAttention = {{{"", "Attention"}, {"ai.polyinfer", "Attention"}},
                                {
                                    {"attention", Isa::Avx2, nullptr, nullptr, false,
                                     "packed keys and values, softmax between the two GEMMs"},
                                }};

const ChoiceTable kGlobalAveragePool = {
    {{"ai.polyinfer", "NhwcGlobalAveragePool"}},
    {
        {"global_average_pool", Isa::Any, nullptr, nullptr, false,
         "threads sum their own runs of pixels: oneDNN's got slower at 2 threads on AVX2"},
        {"onednn_pool", Isa::Any, nullptr, nullptr, false, "oneDNN's global pooling"},
    }};

const ChoiceTable kGlobalPool = {
    {{"", "GlobalAveragePool"}, {"", "GlobalMaxPool"}},
    {
        {"global_pool", Isa::Any, nullptr, nullptr, false,
         "float32 NCHW: each channel's pixels are contiguous, one vectorized reduction a "
         "channel, threads over channels (oneDNN has only its scalar simple_nchw there)"},
        {"onednn_pool", Isa::Any, nullptr, nullptr, false, "oneDNN's global pooling"},
    }};

// ---- int8 products ----

// Without VNNI (onednn::int8_products_exact), oneDNN's int8 products are off the model's: an
// int8 source runs through halved weights, and the u8 x s8 products of a sum over input
// channels are added in pairs that saturate at 16 bits once a weight exceeds 64 in magnitude
// (2 x 255 x 65 > 32767). Depthwise convolutions (one input channel per group) have no such
// pairs: measured exact on oneDNN's AVX2 and AVX-512 kernels (int8_exact_test.cpp).
const char* onednn_int8_prefer(const ChoiceFacts& f) {
  if (f.cpu.onednn_int8_exact || !f.int8) return nullptr;
  if (f.int8->signed_source)
    return "no VNNI here: oneDNN would run the int8 source through halved weights, off the "
           "model's results";
  if (f.int8->max_abs_weight > 64 && f.int8->pairs)
    return "no VNNI here: oneDNN's u8 x s8 products, added in pairs, could saturate at 16 bits "
           "with these 8-bit weights";
  return nullptr;
}

const ChoiceTable kInt8 = {
    {{"", "QLinearConv"},
     {"ai.polyinfer", "NhwcQLinearConv"},
     {"ai.polyinfer", "QLinearConvAdd"},
     {"ai.polyinfer", "NhwcQLinearConvAdd"},
     {"", "QLinearMatMul"},
     {"ai.polyinfer", "QLinearGemm"},
     {"", "MatMulInteger"}},
    {
        {"onednn_int8", Isa::Any, nullptr, onednn_int8_prefer, false,
         "oneDNN's int8 kernels as they are: exact with VNNI or AMX, or with a uint8 source and "
         "weights within +-64 (on: also where they are not)"},
        {"onednn_int8_exact", Isa::Any, nullptr, nullptr, false,
         "oneDNN's int8 kernels on an exact form: an int8 source shifted to uint8 and, for "
         "8-bit weights, a zero channel after each input channel, so that no pair of products "
         "can saturate (twice the products)"},
    }};

}  // namespace

const std::vector<ChoiceTable>& choice_tables() {
  static const std::vector<ChoiceTable> tables = {
      kNhwcFusedConv, kMatMul, kPointwiseDepthwise, kAttention, kGlobalAveragePool,
      kGlobalPool,    kInt8};
  return tables;
}

}  // namespace polyinfer::cpu
