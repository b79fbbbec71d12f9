// onednn::copy_into_blocked, which writes constant weights from the model's plain bytes, at any
// address, straight into a oneDNN primitive's blocked layout (the session-creation path of the
// oneDNN Conv and MatMul kernels). The reference is oneDNN's own reorder from an aligned copy:
// every byte of the destination, the zeroed padding of padded dims included, must agree.
#include <gtest/gtest.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "providers/cpu/onednn/blocked_copy.h"
#include "providers/cpu/onednn/onednn.h"

namespace polyinfer::cpu::onednn {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

// Random bytes for `src_md`, placed one byte past an aligned address (as most weights in a
// model file are), then copied into `dst_md` by copy_into_blocked and by oneDNN's reorder.
void expect_same_as_reorder(const memory::desc& src_md, const memory::desc& dst_md) {
  const size_t n = src_md.get_size();
  std::vector<unsigned char> aligned(n), shifted(n + 1);
  std::mt19937 rng(7);
  for (auto& b : aligned) b = static_cast<unsigned char>(rng());
  std::memcpy(shifted.data() + 1, aligned.data(), n);

  // Both destinations start as garbage, so zeroed padding is checked too.
  std::vector<unsigned char> got(dst_md.get_size(), 0xAB), want(dst_md.get_size(), 0xCD);
  memory got_m(dst_md, engine(), got.data()), want_m(dst_md, engine(), want.data());
  ASSERT_TRUE(copy_into_blocked(shifted.data() + 1, src_md, got_m));

  dnnl::stream s(engine());
  memory src_m(src_md, engine(), aligned.data());
  dnnl::reorder(src_m, want_m).execute(s, src_m, want_m);
  s.wait();
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(got[i], want[i]) << "byte " << i << " of " << got.size();
}

struct Layout {
  const char* name;
  memory::dims dims;
  dt type;
  tag src, dst;
};

void PrintTo(const Layout& l, std::ostream* os) { *os << l.name; }

class BlockedCopy : public ::testing::TestWithParam<Layout> {};

TEST_P(BlockedCopy, MatchesOnednnReorderFromAnyAddress) {
  const Layout& l = GetParam();
  expect_same_as_reorder(memory::desc(l.dims, l.type, l.src), memory::desc(l.dims, l.type, l.dst));
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, BlockedCopy,
    ::testing::Values(
        // brgconv_1x1's weights on AVX-512: output channels in blocks of 64 innermost.
        Layout{"acdb64a_1x1", {128, 96, 1, 1}, dt::f32, tag::oihw, tag::Acdb64a},
        // Output channels not a multiple of the block: padding zeroed.
        Layout{"acdb64a_padded_3x3", {40, 24, 3, 3}, dt::f32, tag::oihw, tag::Acdb64a},
        Layout{"acdb16a_5x5", {48, 16, 5, 5}, dt::f32, tag::oihw, tag::Acdb16a},
        // Two dims blocked, both padded (10 and 7 of 16).
        Layout{"oihw16i16o_padded", {10, 7, 3, 3}, dt::f32, tag::oihw, tag::OIhw16i16o},
        // A dim blocked twice (8i ... 2i).
        Layout{"oihw8i16o2i", {32, 32, 3, 3}, dt::f32, tag::oihw, tag::OIhw8i16o2i},
        // Grouped and depthwise weights [G, O/G, I/G, kH, kW].
        Layout{"goihw16i16o", {2, 32, 16, 1, 1}, dt::f32, tag::goihw, tag::gOIhw16i16o},
        Layout{"depthwise_goihw16g", {72, 1, 1, 5, 5}, dt::f32, tag::goihw, tag::Goihw16g},
        // MatMul weights [K, N]: row-major and transposed sources.
        Layout{"matmul_ab", {100, 130}, dt::f32, tag::ab, tag::BA16a64b},
        Layout{"matmul_ba", {100, 130}, dt::f32, tag::ba, tag::AB16b64a},
        // 1- and 2-byte elements (int8 VNNI and bfloat16 layouts).
        Layout{"s8_ba16a64b4a", {70, 80}, dt::s8, tag::ab, tag::BA16a64b4a},
        Layout{"bf16_oihw16i16o", {32, 20, 3, 3}, dt::bf16, tag::oihw, tag::OIhw16i16o},
        // A plain destination (a transpose).
        Layout{"plain_transpose", {33, 17}, dt::f32, tag::ab, tag::ba}),
    [](const auto& info) { return std::string(info.param.name); });

// The layout a real primitive picks on this CPU (brgconv, jit_avx2, ... whichever it is), for a
// 1x1 and a 3x3 convolution.
TEST(BlockedCopy, MatchesReorderForTheLayoutsConvolutionsChooseHere) {
  for (const memory::dims& w : {memory::dims{96, 40, 1, 1}, memory::dims{30, 20, 3, 3}}) {
    SCOPED_TRACE(w[2]);
    const memory::dims src{1, w[1], 14, 14}, dst{1, w[0], 14 - w[2] + 1, 14 - w[3] + 1};
    const dnnl::convolution_forward::primitive_desc pd(
        dnnl::convolution_forward::desc(
            dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
            memory::desc(src, dt::f32, tag::nhwc), memory::desc(w, dt::f32, tag::any),
            memory::desc(), memory::desc(dst, dt::f32, tag::nhwc), {1, 1}, {0, 0}, {0, 0}),
        engine());
    expect_same_as_reorder(memory::desc(w, dt::f32, tag::oihw), pd.weights_desc());
  }
}

// What it does not handle, it leaves to the caller's reorder, writing nothing.
TEST(BlockedCopy, DeclinesBlockedSourcesAndMismatchedDescriptions) {
  std::vector<float> src(16 * 16 * 9, 1.f), dst(16 * 16 * 9, 2.f);
  const memory::dims d{16, 16, 3, 3};
  memory out(memory::desc(d, dt::f32, tag::OIhw16i16o), engine(), dst.data());
  EXPECT_FALSE(copy_into_blocked(src.data(), memory::desc(d, dt::f32, tag::OIhw16i16o), out));
  EXPECT_FALSE(
      copy_into_blocked(src.data(), memory::desc({16, 16, 9, 1}, dt::f32, tag::oihw), out));
  EXPECT_FALSE(copy_into_blocked(src.data(), memory::desc(d, dt::s32, tag::oihw), out));
  for (float v : dst) ASSERT_EQ(v, 2.f);
}

}  // namespace
}  // namespace polyinfer::cpu::onednn
