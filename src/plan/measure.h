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
  size_t working_set = 0;  // bytes touched per pass (all arrays together)
  double bytes_per_s = 0;  // read + write traffic per second, best of several passes
};

struct MachineMeasurement {
  std::string cpu_model;  // from hw::probe_cpu
  std::string isa;        // the fp32 loop: "avx512f", "avx2+fma", "sse2 (mul+add)", "neon"
  // The bf16 and int8 loops ("avx512_bf16 (vdpbf16ps)", "dotprod (sdot)"); "" when absent.
  std::string bf16_isa, int8_isa;
  int threads = 1;
  double fp32_flops = 0;                  // FMA peak at `threads`, FLOP/s (multiply-add = 2)
  double bf16_flops = 0;                  // 0 when the CPU has no bf16 dot product instruction
  double int8_ops = 0;                    // VNNI/dotprod peak, OP/s; 0 when absent
  double gemm_fp32_flops = 0;             // oneDNN sgemm on a cache-friendly mid size, FLOP/s
  std::vector<BandwidthPoint> bandwidth;  // ascending working set; the last is DRAM-sized
  double node_overhead_s = 0;  // the CPU provider's per-node dispatch cost (a chain of tiny ops)
  uint64_t memory_total = 0, memory_available = 0;  // bytes, from the doctor's probe
  std::string measured_at;                          // ISO 8601 UTC
  std::string polyinfer_version;
  bool quick = false;  // made with MeasureOptions::quick (never served to a full request)
};

struct MeasureOptions {
  // Short loops, fewer repeats, no DRAM-sized working set and a smaller GEMM: well under 2 s, for
  // tests. The figures are rougher, and bandwidth ends at a cache-sized working set.
  bool quick = false;
};

// Runs every probe (a few seconds) at `threads` threads (1..1024; InvalidArgument otherwise).
// OpenMP's thread count is restored afterwards.
MachineMeasurement measure_this_machine(int threads, const MeasureOptions& options = {});

// The cached measurement for this CPU model, thread count and polyinfer version, measuring (and
// writing the cache) when there is none or `refresh` is set. The cache is one JSON file per
// (CPU, threads) under $XDG_CACHE_HOME/polyinfer (or ~/.cache/polyinfer); `cache_path` receives
// its path. An unreadable or stale cache is measured again, never an error.
// A cache that cannot be written is skipped silently: the measurement is still returned.
MachineMeasurement cached_measurement(int threads, bool refresh, std::string* cache_path = nullptr,
                                      const MeasureOptions& options = {});

// The cache file cached_measurement reads and writes for `threads` threads on this CPU:
// <cache dir>/<cpu model slug>-<threads>t.json; "" when neither $XDG_CACHE_HOME (absolute) nor
// $HOME is set, and then nothing is cached.
std::string measurement_cache_path(int threads);

// JSON round trip of a measurement (the cache's format). measurement_from_json throws
// polyinfer::Error (InvalidArgument) naming `origin` and the field when the text is not one.
std::string to_json(const MachineMeasurement& m);
MachineMeasurement measurement_from_json(const std::string& text, const std::string& origin);

// The measurement for a human: one figure a line, bandwidth as a small table.
std::string describe(const MachineMeasurement& m);

// The fp32 FMA peak alone (bench/fma_peak): FLOP/s at `threads` threads, best of three runs of
// about `seconds` / 3 each; `isa` receives the loop's instruction set.
double fp32_fma_peak(int threads, double seconds, std::string* isa = nullptr);

// The measurement as a Target with id "this": peaks, DRAM bandwidth, memory, node overhead,
// compute efficiency = gemm_fp32_flops / fp32_flops; every figure's source says "measured".
Target this_machine_target(const MachineMeasurement& m);

}  // namespace polyinfer::plan
