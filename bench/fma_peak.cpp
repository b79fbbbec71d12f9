// fma_peak — this machine's fp32 fused-multiply-add peak, in GFLOP/s, for 1..N threads.
//
// Why: `bench/compare_ort.py` reports each runtime's achieved GFLOP/s as a share of what the
// cores can do, which tells "the kernels are slow" apart from "the machine is slow". The probe
// is the library's (plan::fp32_fma_peak, the same loops `plan --target this` measures with:
// src/plan/peak_loops_*.cpp): long chains of independent FMAs with no memory traffic, at the
// widest instruction set the CPU has (AVX-512, AVX2+FMA or SSE2 on x86-64; NEON on AArch64),
// chosen at run time. Each thread count is the best of three runs.
//
//   fma_peak                     # table for 1..hardware threads
//   fma_peak --json --threads 1,2 --seconds 0.5
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "plan/measure.h"

namespace {

std::vector<int> parse_threads(const char* text) {
  std::vector<int> out;
  std::string cur;
  for (const char* p = text;; ++p) {
    if (*p == ',' || *p == '\0') {
      const int n = std::atoi(cur.c_str());
      if (n < 1 || n > 1024) {
        std::fprintf(stderr, "fma_peak: error: --threads takes a list like 1,2,4, got '%s'\n",
                     text);
        std::exit(1);
      }
      out.push_back(n);
      cur.clear();
      if (*p == '\0') break;
    } else {
      cur += *p;
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false;
  double seconds = 0.3;
  std::vector<int> threads;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--json")) json = true;
    else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc)
      threads = parse_threads(argv[++i]);
    else if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc)
      seconds = std::atof(argv[++i]);
    else {
      std::fprintf(stderr, "usage: fma_peak [--threads 1,2,...] [--seconds S] [--json]\n");
      return 1;
    }
  }
  if (!(seconds > 0 && seconds < 60)) {
    std::fprintf(stderr, "fma_peak: error: --seconds must be between 0 and 60\n");
    return 1;
  }
  if (threads.empty())
    for (int t = 1; t <= static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); ++t)
      threads.push_back(t);

  std::string isa;
  std::vector<double> best;
  for (int t : threads) best.push_back(polyinfer::plan::fp32_fma_peak(t, seconds, &isa) * 1e-9);

  if (json) {
    std::printf("{\"isa\": \"%s\", \"peak_gflops\": {", isa.c_str());
    for (size_t i = 0; i < threads.size(); ++i)
      std::printf("%s\"%d\": %.2f", i ? ", " : "", threads[i], best[i]);
    std::printf("}}\n");
  } else {
    std::printf("fp32 FMA peak (%s)\n%8s %12s %12s\n", isa.c_str(), "threads", "GFLOP/s",
                "per thread");
    for (size_t i = 0; i < threads.size(); ++i)
      std::printf("%8d %12.1f %12.1f\n", threads[i], best[i], best[i] / threads[i]);
  }
  return 0;
}
