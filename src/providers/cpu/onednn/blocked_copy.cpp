#include "providers/cpu/onednn/blocked_copy.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <utility>
#include <vector>

namespace polyinfer::cpu::onednn {
namespace {

using Offsets = std::vector<int64_t>;

// In a blocked layout, each logical dim's part of an element's offset depends on that dim's
// index alone: the index splits into the dim's inner blocks (innermost first, each scaled by
// the sizes of the blocks inside it) and the outer rest, scaled by the dim's stride. So the
// offset of (x0, x1, ...) is offsets(d=0)[x0] + offsets(d=1)[x1] + ..., in elements.
Offsets dim_offsets(const dnnl_memory_desc_t& md, int d) {
  const dnnl_blocking_desc_t& b = md.format_desc.blocking;
  Offsets t(static_cast<size_t>(md.dims[d]));
  for (int64_t x = 0; x < md.dims[d]; ++x) {
    int64_t rest = x, off = 0, inside = 1;
    for (int k = b.inner_nblks - 1; k >= 0; --k) {
      if (b.inner_idxs[k] == d) {
        off += rest % b.inner_blks[k] * inside;
        rest /= b.inner_blks[k];
      }
      inside *= b.inner_blks[k];
    }
    t[static_cast<size_t>(x)] = off + rest * b.strides[d];
  }
  return t;
}

// Whether offsets can be computed as above: a blocked layout with no offset and no extra data.
bool plain_blocked(const dnnl_memory_desc_t& md) {
  if (md.format_kind != dnnl_blocked || md.extra.flags != 0 || md.offset0 != 0 || md.ndims < 1)
    return false;
  for (int d = 0; d < md.ndims; ++d)
    if (md.dims[d] <= 0 || md.padded_offsets[d] != 0) return false;
  return true;
}

// Reads src in order (the mapped file's pages once each, front to back) and scatters: for
// every index of the outer dims (an odometer), one run of inner.size() elements.
template <size_t kSize>
void scatter(const unsigned char* src, unsigned char* dst, const std::vector<Offsets>& outer,
             const Offsets& inner) {
  std::vector<size_t> idx(outer.size(), 0);
  int64_t base = 0;
  for (const Offsets& t : outer) base += t[0];
  const size_t n = inner.size();
  for (;;) {
    for (size_t j = 0; j < n; ++j, src += kSize)
      std::memcpy(dst + (base + inner[j]) * static_cast<int64_t>(kSize), src, kSize);
    size_t d = outer.size();
    for (; d > 0; --d) {
      const Offsets& t = outer[d - 1];
      base -= t[idx[d - 1]];
      if (++idx[d - 1] < t.size()) {
        base += t[idx[d - 1]];
        break;
      }
      idx[d - 1] = 0;
      base += t[0];
    }
    if (d == 0) return;
  }
}

}  // namespace

bool copy_into_blocked(const void* src, const dnnl::memory::desc& src_desc,
                       const dnnl::memory& dst) {
  const dnnl::memory::desc dst_desc = dst.get_desc();
  const dnnl_memory_desc_t& md = dst_desc.data;
  const dnnl_memory_desc_t& sd = src_desc.data;
  if (!plain_blocked(md) || !plain_blocked(sd) || sd.format_desc.blocking.inner_nblks != 0 ||
      sd.ndims != md.ndims || sd.data_type != md.data_type)
    return false;
  const int nd = md.ndims;
  int64_t count = 1;
  bool padded = false;
  for (int d = 0; d < nd; ++d) {
    if (sd.dims[d] != md.dims[d] || sd.padded_dims[d] != sd.dims[d]) return false;
    count *= md.dims[d];
    padded = padded || md.padded_dims[d] != md.dims[d];
  }
  const size_t size = dnnl_data_type_size(md.data_type);
  if ((size != 1 && size != 2 && size != 4) ||
      src_desc.get_size() != static_cast<size_t>(count) * size)
    return false;

  // The dims in src's memory order (outermost first), so that src is read front to back: dense
  // strides then make each dim's step the product of the extents inside it.
  std::vector<int> order(static_cast<size_t>(nd));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return sd.format_desc.blocking.strides[a] > sd.format_desc.blocking.strides[b];
  });
  int64_t inside = 1;
  for (int k = nd - 1; k >= 0; --k) {
    const int d = order[static_cast<size_t>(k)];
    if (md.dims[d] > 1 && sd.format_desc.blocking.strides[d] != inside) return false;
    inside *= md.dims[d];
  }

  // Trailing dims merge into one inner run of at least a few dozen elements (a 3x3 kernel's
  // 9, a 1x1 convolution's input channels), so the odometer steps rarely.
  Offsets inner = dim_offsets(md, order.back());
  int k = nd - 2;
  for (; k >= 0 && inner.size() < 64; --k) {
    const Offsets t = dim_offsets(md, order[static_cast<size_t>(k)]);
    Offsets merged;
    merged.reserve(t.size() * inner.size());
    for (int64_t a : t)
      for (int64_t b : inner) merged.push_back(a + b);
    inner = std::move(merged);
  }
  std::vector<Offsets> outer;
  for (int j = 0; j <= k; ++j) outer.push_back(dim_offsets(md, order[static_cast<size_t>(j)]));

  auto* out = static_cast<unsigned char*>(dst.get_data_handle());
  if (padded) std::memset(out, 0, dst_desc.get_size());
  const auto* in = static_cast<const unsigned char*>(src);
  if (size == 4) scatter<4>(in, out, outer, inner);
  else if (size == 2)
    scatter<2>(in, out, outer, inner);
  else
    scatter<1>(in, out, outer, inner);
  return true;
}

}  // namespace polyinfer::cpu::onednn
