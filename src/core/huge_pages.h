// Transparent huge pages for the host buffers that every run walks through again.
#pragma once

#include <cstddef>

namespace polyinfer {

// Asks the system to back the whole 2 MiB ranges inside [p, p + bytes) with transparent huge
// pages (advice only; a no-op where THP is off). Linux's default THP mode, "madvise", grants
// them only to regions marked so.
//
// Only the session's arena is marked (runtime/memory_pool.cpp): its activations are rewritten
// on every run, where one TLB entry per 2 MiB pays. Weights are not: on a virtual machine a
// huge page is a whole free 2 MiB block, which the balloon driver's free-page reporting hands
// back to the host within seconds of being freed, and the first touch of such a block costs
// about 1 ms (the host backs it 4 KiB at a time): weights in huge pages made session creation
// up to twice as long (docs/kernels.md, "Outside the kernels").
void advise_huge_pages(void* p, size_t bytes);

// Host buffers of at least this size are aligned to it, so that they can take huge pages.
constexpr size_t kHugePage = size_t{2} << 20;

}  // namespace polyinfer
