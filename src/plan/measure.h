// `plan --target this`: measures this machine instead of trusting a catalog — the FMA peak per
// precision with short register-bound loops, memory bandwidth with a STREAM-style triad at
// working sets from L1-sized to DRAM-sized, the fp32 GEMM rate real kernels reach (oneDNN), and
// the runtime's fixed cost per node — and caches the result, since measuring takes seconds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "plan/catalog.h"

namespace polyinfer::plan {

struct BandwidthPoint {
  size_t working_set = 0;   // bytes touched per pass (all arrays together)
  double bytes_per_s = 0;   // read + write traffic per second, best of several passes
};

struct MachineMeasurement {
  std::string cpu_model;     // from hw::probe_cpu
  std::string isa;           // the loop the peak came from: "avx512", "avx2", "sse2", "neon", …
  int threads = 1;
  double fp32_flops = 0;     // FMA peak at `threads`, FLOP/s (multiply-add = 2)
  double bf16_flops = 0;     // 0 when the CPU has no bf16 dot product instruction
  double int8_ops = 0;       // VNNI/dotprod peak, OP/s; 0 when absent
  double gemm_fp32_flops = 0;  // oneDNN sgemm on a cache-friendly mid size, FLOP/s
  std::vector<BandwidthPoint> bandwidth;  // ascending working set; the last is DRAM-sized
  double node_overhead_s = 0;  // the CPU provider's per-node dispatch cost (a chain of tiny ops)
  uint64_t memory_total = 0, memory_available = 0;  // bytes, from the doctor's probe
  std::string measured_at;   // ISO 8601 UTC
  std::string polyinfer_version;
};

// Runs every probe (a few seconds) at `threads` threads.
MachineMeasurement measure_this_machine(int threads);

// The cached measurement for this CPU model, thread count and polyinfer version, measuring (and
// writing the cache) when there is none or `refresh` is set. The cache is one JSON file per
// (CPU, threads) under $XDG_CACHE_HOME/polyinfer (or ~/.cache/polyinfer); `cache_path` receives
// its path. An unreadable or stale cache is measured again, never an error.
MachineMeasurement cached_measurement(int threads, bool refresh, std::string* cache_path = nullptr);

// JSON round trip of a measurement (the cache's format).
std::string to_json(const MachineMeasurement& m);
MachineMeasurement measurement_from_json(const std::string& text, const std::string& origin);

// The measurement as a Target with id "this": peaks, DRAM bandwidth, memory, node overhead,
// compute efficiency = gemm_fp32_flops / fp32_flops; every figure's source says "measured".
Target this_machine_target(const MachineMeasurement& m);

}  // namespace polyinfer::plan
