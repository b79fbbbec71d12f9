// fma_peak — this machine's fp32 fused-multiply-add peak, in GFLOP/s, for 1..N threads.
//
// Why: `bench/compare_ort.py` reports each runtime's achieved GFLOP/s as a share of what the
// cores can do, which tells "the kernels are slow" apart from "the machine is slow". The probe
// runs long chains of independent FMAs (no memory traffic): 16 accumulators cover the latency
// (4 cycles) times the FMA pipes (2) of current x86 cores with room to spare. It picks AVX-512
// when the CPU has it, else AVX2+FMA, at run time; each function carries its own target
// attribute, so the rest of the build needs no -m flags.
//
//   fma_peak                     # table for 1..hardware threads
//   fma_peak --json --threads 1,2 --seconds 0.5
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kAcc = 16;  // independent accumulator chains

// acc = acc * a + b converges to b / (1 - a) without overflow or denormals.
__attribute__((target("avx512f"))) float chains_avx512(long iters) {
  __m512 acc[kAcc];
  for (int k = 0; k < kAcc; ++k) acc[k] = _mm512_set1_ps(1.0f + 0.01f * static_cast<float>(k));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  // Fully unrolled, so that the chains live in registers rather than in memory.
  for (long i = 0; i < iters; ++i) {
#pragma GCC unroll 16
    for (int k = 0; k < kAcc; ++k) acc[k] = _mm512_fmadd_ps(acc[k], a, b);
  }
  __m512 s = acc[0];
  for (int k = 1; k < kAcc; ++k) s = _mm512_add_ps(s, acc[k]);
  // Through memory: GCC 12's _mm512_reduce_add_ps trips -Wuninitialized (a false positive).
  float out[16];
  _mm512_storeu_ps(out, s);
  return out[0] + out[15];
}

__attribute__((target("avx2,fma"))) float chains_avx2(long iters) {
  // 16 ymm registers in all: 12 chains leave room for a, b.
  constexpr int kAcc2 = 12;
  __m256 acc[kAcc2];
  for (int k = 0; k < kAcc2; ++k) acc[k] = _mm256_set1_ps(1.0f + 0.01f * static_cast<float>(k));
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (long i = 0; i < iters; ++i) {
#pragma GCC unroll 16
    for (int k = 0; k < kAcc2; ++k) acc[k] = _mm256_fmadd_ps(acc[k], a, b);
  }
  __m256 s = acc[0];
  for (int k = 1; k < kAcc2; ++k) s = _mm256_add_ps(s, acc[k]);
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0] + out[7];
}

struct Isa {
  const char* name;
  float (*run)(long);
  double flops_per_iter;  // chains x lanes x 2 (multiply and add)
};

Isa pick_isa() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return {"avx512f", chains_avx512, kAcc * 16 * 2.0};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return {"avx2+fma", chains_avx2, 12 * 8 * 2.0};
  return {"none", nullptr, 0};
}

using Clock = std::chrono::steady_clock;

// GFLOP/s of `threads` threads each running `iters` iterations, timed from a common start.
double measure(const Isa& isa, int threads, long iters) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  std::vector<float> sink(threads);
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load()) std::this_thread::yield();
      sink[t] = isa.run(iters);
    });
  while (ready.load() < threads) std::this_thread::yield();
  const auto t0 = Clock::now();
  go.store(true);
  for (auto& th : pool) th.join();
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  volatile float keep = sink[0];  // the result must look used
  (void)keep;
  return isa.flops_per_iter * static_cast<double>(iters) * threads / s * 1e-9;
}

std::vector<int> parse_threads(const char* text) {
  std::vector<int> out;
  std::string cur;
  for (const char* p = text;; ++p) {
    if (*p == ',' || *p == '\0') {
      const int n = std::atoi(cur.c_str());
      if (n < 1 || n > 1024) {
        std::fprintf(stderr, "fma_peak: error: --threads takes a list like 1,2,4, got '%s'\n", text);
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
    else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) threads = parse_threads(argv[++i]);
    else if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = std::atof(argv[++i]);
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

  const Isa isa = pick_isa();
  if (!isa.run) {
    std::fprintf(stderr, "fma_peak: error: this CPU has neither AVX-512F nor AVX2+FMA\n");
    return 1;
  }
  // Calibrate one thread to about `seconds`, then take the best of three tries per count.
  long iters = 1 << 16;
  for (;;) {
    const auto t0 = Clock::now();
    isa.run(iters);
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (s > 0.05) {
      iters = static_cast<long>(static_cast<double>(iters) * seconds / s / 3) + 1;
      break;
    }
    iters *= 4;
  }
  std::vector<double> best;
  for (int t : threads) {
    double b = 0;
    for (int k = 0; k < 3; ++k) b = std::max(b, measure(isa, t, iters));
    best.push_back(b);
  }

  if (json) {
    std::printf("{\"isa\": \"%s\", \"peak_gflops\": {", isa.name);
    for (size_t i = 0; i < threads.size(); ++i)
      std::printf("%s\"%d\": %.2f", i ? ", " : "", threads[i], best[i]);
    std::printf("}}\n");
  } else {
    std::printf("fp32 FMA peak (%s, %d chains per thread)\n%8s %12s %12s\n", isa.name, kAcc,
                "threads", "GFLOP/s", "per thread");
    for (size_t i = 0; i < threads.size(); ++i)
      std::printf("%8d %12.1f %12.1f\n", threads[i], best[i], best[i] / threads[i]);
  }
  return 0;
}
