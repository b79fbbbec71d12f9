// Constant weights written straight into a oneDNN primitive's blocked layout, from the plain
// layout (oihw, ab, ba...) a model stores them in, at any address.
//
// Why not oneDNN's reorder: its reorders read through typed pointers, so a weight still in the
// mapped model file at an address that is not a multiple of its element size (most of them:
// raw_data offsets are arbitrary) first had to be copied into an aligned buffer; that copy and
// the reorder primitive's own creation (a JIT) were about half the time the reorders took.
// Writing each weight once, wherever it is, cut up to a tenth of the kernel phase of session
// creation (docs/kernels.md has the figures). What stays is mostly the fresh pages the packed
// weights need, which the staging copies used to pre-fault for them.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

namespace polyinfer::cpu::onednn {

// Writes the elements of `src` — laid out as `src_md` says, at any byte address — into `dst` in
// dst's layout, zeroing the padding of padded dims. `src_md` must be dense and plain (strides
// only: oihw, ab, ba...) with dst's dims and data type. Returns false, writing nothing, where
// either layout is outside that (Winograd or other opaque formats, extra data such as int8
// compensation, an offset): the caller reorders with oneDNN then.
bool copy_into_blocked(const void* src, const dnnl::memory::desc& src_md, const dnnl::memory& dst);

}  // namespace polyinfer::cpu::onednn
