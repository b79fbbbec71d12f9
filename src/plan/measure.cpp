// `plan --target this`: the probes (measure.h). The JSON form, the cache and the Target built
// from a measurement are in measure_cache.cpp; the machine-bound loops in peak_loops_*.cpp.
//
// Every rate is the best of a few repeats, not the mean: another process, a VM neighbour, a
// page fault or a frequency ramp only ever slows a run down, so the fastest repeat is the
// closest to what the hardware does. Nothing is pinned: plan predicts runs that are not pinned
// either, and the OS keeps busy threads where they are well enough for loops this short.
#include <omp.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "hw/report.h"
#include "plan/measure.h"
#include "plan/peak_loops.h"
#include "polyinfer/session.h"
#include "polyinfer/status.h"
#include "providers/cpu/onednn/onednn.h"

namespace polyinfer::plan {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// A value the optimizer must assume is read, so the loops' results count as used.
volatile float g_sink = 0;

// How long each probe runs. Full: long enough that timer resolution, thread start-up and the
// first frequency ramp are small against the run (≈ 0.1–0.2 s per repeat); quick: for tests.
struct Budget {
  double peak_s;  // one repeat of a peak loop
  int peak_repeats;
  double triad_s;  // one trial of a bandwidth working set
  int triad_trials;
  double gemm_s;  // timed matmul calls per size
  double node_s;  // timed runs of the node chain
  int node_min_runs;
};

Budget budget(bool quick) {
  if (quick) return {0.01, 2, 0.004, 3, 0.01, 0.01, 5};
  return {0.15, 3, 0.03, 5, 0.15, 0.2, 30};
}

// Sets OpenMP's thread count for the probes and restores the caller's on exit: oneDNN and the
// session read omp_get_max_threads(), and measuring must not change what the caller runs at.
class OmpThreads {
 public:
  explicit OmpThreads(int n) : saved_(omp_get_max_threads()) { omp_set_num_threads(n); }
  ~OmpThreads() { omp_set_num_threads(saved_); }
  OmpThreads(const OmpThreads&) = delete;
  OmpThreads& operator=(const OmpThreads&) = delete;

 private:
  int saved_;
};

// ---- Compute peaks -------------------------------------------------------------------------

// Iterations of `loop` that take one thread about `seconds` (the last timing is also a warm-up:
// wide units powered up, the frequency settled).
long calibrate(const detail::PeakLoop& loop, double seconds) {
  long iters = 1 << 10;
  for (;;) {
    const auto t0 = Clock::now();
    g_sink = loop.run(iters);
    const double s = seconds_since(t0);
    if (s > 0.01 || iters > (1L << 40))
      return std::max(1L, static_cast<long>(static_cast<double>(iters) * seconds / s));
    iters *= 4;
  }
}

// Operations per second of `threads` threads each running `iters` iterations from a common
// start, timed until the last one finishes.
double loop_rate(const detail::PeakLoop& loop, int threads, long iters) {
  double t0 = 0, t1 = 0;
  int team = 1;
  float sink = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sink)
  {
#pragma omp single
    {
      team = omp_get_num_threads();
      t0 = omp_get_wtime();
    }  // the barrier that ends `single` releases every thread together
    sink += loop.run(iters);
#pragma omp barrier
#pragma omp single
    t1 = omp_get_wtime();
  }
  g_sink = sink;
  return loop.ops_per_iter * static_cast<double>(iters) * team / std::max(t1 - t0, 1e-9);
}

double peak(const detail::PeakLoop& loop, int threads, const Budget& b) {
  if (!loop.run) return 0;
  const long iters = calibrate(loop, b.peak_s);
  double best = 0;
  for (int r = 0; r < b.peak_repeats; ++r) best = std::max(best, loop_rate(loop, threads, iters));
  return best;
}

// ---- Bandwidth -----------------------------------------------------------------------------

constexpr size_t KiB = 1024, MiB = 1024 * KiB;

// The working sets (all three arrays together). 16 KiB sits in any L1d (32–48 KiB today);
// 256 KiB in L2 (≥ 512 KiB per core on current x86 and Arm server cores); 1 MiB in L2 on big
// cores and L3 elsewhere; 8 MiB in L3; 64 MiB in the L3 of large server parts and DRAM on small
// ones. The last one is DRAM for sure: at least 512 MiB and 4× the largest cache (this VM's L3
// says 480 MiB), so that at most a quarter of it can be served from cache. It is capped at a
// quarter of the available memory, and sizes at or above the cap are dropped before it.
std::vector<size_t> working_sets(const hw::CpuInfo& cpu, const hw::MemoryInfo& mem, bool quick) {
  if (quick) return {16 * KiB, 256 * KiB, 1 * MiB, 8 * MiB};
  size_t dram = 512 * MiB;
  for (const auto& c : cpu.caches)
    if (c.type != "Instruction" && c.size_bytes > 0)
      dram = std::max(dram, 4 * static_cast<size_t>(c.size_bytes) * std::max(1, c.instances));
  // Without /proc/meminfo, stay at the smallest size that is still likely to be DRAM.
  const size_t cap =
      mem.available_bytes > 0 ? static_cast<size_t>(mem.available_bytes) / 4 : 512 * MiB;
  dram = std::min(dram, cap);
  std::vector<size_t> sizes;
  for (size_t s : {16 * KiB, 256 * KiB, 1 * MiB, 8 * MiB, 64 * MiB})
    if (s < dram) sizes.push_back(s);
  sizes.push_back(dram);
  return sizes;
}

struct FreeDeleter {
  void operator()(double* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<double, FreeDeleter>;

Buffer allocate(size_t n) {
  const size_t bytes = (n * sizeof(double) + 63) / 64 * 64;
  return Buffer(static_cast<double*>(std::aligned_alloc(64, bytes)));
}

// STREAM's triad, a = b + s·c, over `working_set` bytes with `threads` threads. Each thread owns
// one contiguous slice of the arrays — the same slice when the pages are first touched (so they
// sit on its NUMA node) and on every pass (so a cache-sized slice stays in that core's caches) —
// and runs many passes in one parallel region, since starting a region costs more than a pass
// over 16 KiB. Bytes counted per element: 24, two 8-byte reads and one 8-byte write, as STREAM
// counts them. The write-allocate read of `a`'s lines (a plain store reads the line first) is
// NOT counted, so DRAM actually moves up to 4/3 of this figure; the kernels plan predicts do the
// same plain stores, so this is the rate they see. Returns 0 when the arrays cannot be allocated.
BandwidthPoint triad_rate(size_t working_set, int threads, const Budget& b) {
  const size_t n = working_set / (3 * sizeof(double));
  BandwidthPoint point{3 * n * sizeof(double), 0};
  Buffer a = allocate(n), bb = allocate(n), c = allocate(n);
  if (!a || !bb || !c || n == 0) return point;
  double *pa = a.get(), *pb = bb.get(), *pc = c.get();

  // Runs `reps` passes (reps == 0: first touch); returns the seconds from the common start
  // until the last thread is done.
  auto region = [&](long reps) {
    double t0 = 0, t1 = 0;
#pragma omp parallel num_threads(threads)
    {
      const size_t team = static_cast<size_t>(omp_get_num_threads());
      const size_t t = static_cast<size_t>(omp_get_thread_num());
      // Slice edges on 64-byte lines (8 doubles): a line written by two threads would bounce
      // between their caches on every pass, and at 16 KiB that costs more than the pass.
      auto edge = [&](size_t k) { return k == team ? n : n * k / team / 8 * 8; };
      const size_t lo = edge(t), hi = edge(t + 1);
      if (reps == 0) {
        for (size_t i = lo; i < hi; ++i) pa[i] = 0, pb[i] = 1, pc[i] = 2;
      } else {
#pragma omp single
        t0 = omp_get_wtime();
        for (long r = 0; r < reps; ++r) detail::triad(pa + lo, pb + lo, pc + lo, 0.5, hi - lo);
#pragma omp barrier
#pragma omp single
        t1 = omp_get_wtime();
      }
    }
    return std::max(t1 - t0, 1e-9);
  };
  region(0);
  const double pass = region(1);  // also brings a cache-sized working set into the caches
  const long reps = std::clamp(static_cast<long>(b.triad_s / pass), 1L, 100'000'000L);
  for (int trial = 0; trial < b.triad_trials; ++trial)
    point.bytes_per_s =
        std::max(point.bytes_per_s, static_cast<double>(point.working_set) * reps / region(reps));
  g_sink = static_cast<float>(pa[n / 2]);
  return point;
}

// ---- GEMM ----------------------------------------------------------------------------------

// The fp32 rate real kernels reach: oneDNN's matmul (what the CPU provider runs MatMul and Gemm
// with), weights reordered once into the layout it prefers, as the provider does for constant
// weights. Square sizes that fit in L2/L3 — 512 (1 MiB per operand) and 1024 — where it runs
// near its best; the better of the two. 0 when oneDNN fails, which the report shows as unknown.
double gemm_rate(bool quick, const Budget& b) {
  using dnnl::memory;
  using tag = memory::format_tag;
  using dt = memory::data_type;
  double best = 0;
  try {
    dnnl::engine& eng = cpu::onednn::engine();
    dnnl::stream strm(eng);
    const std::vector<int64_t> sizes =
        quick ? std::vector<int64_t>{256} : std::vector<int64_t>{512, 1024};
    for (const int64_t n : sizes) {
      const memory::desc plain({n, n}, dt::f32, tag::ab), any({n, n}, dt::f32, tag::any);
      const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(plain, any, plain), eng);
      memory src(plain, eng), w_plain(plain, eng), w(pd.weights_desc(), eng), dst(plain, eng);
      auto* ps = static_cast<float*>(src.get_data_handle());
      auto* pw = static_cast<float*>(w_plain.get_data_handle());
      for (int64_t i = 0; i < n * n; ++i) {
        ps[i] = 0.5f + 0.01f * static_cast<float>(i % 7);
        pw[i] = 0.25f - 0.01f * static_cast<float>(i % 5);
      }
      dnnl::reorder(w_plain, w).execute(strm, w_plain, w);
      const dnnl::matmul mm(pd);
      const std::unordered_map<int, memory> args{
          {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, dst}};
      for (int i = 0; i < 2; ++i) mm.execute(strm, args);  // warm-up: JIT, caches, threads
      strm.wait();
      double fastest = 1e30;
      const auto start = Clock::now();
      for (int calls = 0; calls < 3 || seconds_since(start) < b.gemm_s; ++calls) {
        const auto t0 = Clock::now();
        mm.execute(strm, args);
        strm.wait();
        fastest = std::min(fastest, seconds_since(t0));
      }
      best = std::max(best, 2.0 * static_cast<double>(n * n * n) / fastest);
    }
  } catch (const dnnl::error&) {
  }
  return best;
}

// ---- Per-node overhead ---------------------------------------------------------------------

// The CPU provider's fixed cost per node: a chain of Relu nodes on 8 floats, where the arithmetic
// is nothing and the time is dispatch, the executor's bookkeeping and buffer reuse. Optimization
// level 0 keeps every node (no pass may fold the chain); the median run divided by the nodes.
// The median rather than the best: this is a cost paid on every run, jitter included.
double node_overhead(int threads, const Budget& b) {
  constexpr int kNodes = 200;
  onnx::ModelProto model;
  model.set_ir_version(8);
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  auto* g = model.mutable_graph();
  g->set_name("node_overhead");
  auto value = [](onnx::ValueInfoProto* v, const std::string& name) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_value(1);
    t->mutable_shape()->add_dim()->set_dim_value(8);
  };
  value(g->add_input(), "x");
  value(g->add_output(), "y");
  for (int i = 0; i < kNodes; ++i) {
    auto* node = g->add_node();
    node->set_op_type("Relu");
    node->set_name("relu_" + std::to_string(i));
    node->add_input(i == 0 ? "x" : "t" + std::to_string(i - 1));
    node->add_output(i == kNodes - 1 ? "y" : "t" + std::to_string(i));
  }
  const std::string bytes = model.SerializeAsString();
  SessionOptions opts;
  opts.providers = {"cpu"};
  opts.threads = threads;
  opts.optimization_level = 0;
  Session session = Session::load_bytes(bytes.data(), bytes.size(), opts);
  const int nodes = std::max(1, session.placement().total_nodes);
  const std::map<std::string, Value> feeds{
      {"x", Tensor::from_vector<float>({1, 8}, {-1, 2, -3, 4, -5, 6, -7, 8})}};
  for (int i = 0; i < 10; ++i) session.run(feeds);  // warm-up: kernels, buffer pool, arena
  std::vector<double> runs;
  const auto start = Clock::now();
  while (runs.size() < 10'000 &&
         (static_cast<int>(runs.size()) < b.node_min_runs || seconds_since(start) < b.node_s)) {
    const auto t0 = Clock::now();
    session.run(feeds);
    runs.push_back(seconds_since(t0));
  }
  std::nth_element(runs.begin(), runs.begin() + runs.size() / 2, runs.end());
  return runs[runs.size() / 2] / nodes;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

MachineMeasurement measure_this_machine(int threads, const MeasureOptions& options) {
  PI_CHECK(threads >= 1 && threads <= 1024, InvalidArgument,
           "measuring this machine: threads must be 1..1024, got ", threads);
  const Budget b = budget(options.quick);
  const hw::CpuInfo cpu = hw::probe_cpu(hw::system_files());
  const hw::MemoryInfo mem = hw::probe_memory(hw::system_files());
  OmpThreads omp_threads(threads);

  MachineMeasurement m;
  m.cpu_model = cpu.model;
  m.threads = threads;
  m.quick = options.quick;
  m.polyinfer_version = version();
  m.memory_total = mem.total_bytes > 0 ? static_cast<uint64_t>(mem.total_bytes) : 0;
  m.memory_available = mem.available_bytes > 0 ? static_cast<uint64_t>(mem.available_bytes) : 0;

  // Compute first, on a quiet machine; the DRAM-sized bandwidth pass (large allocations, page
  // faults) last.
  const detail::PeakLoop fp32 = detail::fp32_peak_loop(), bf16 = detail::bf16_peak_loop(),
                         int8 = detail::int8_peak_loop();
  m.isa = fp32.isa;
  m.bf16_isa = bf16.isa ? bf16.isa : "";
  m.int8_isa = int8.isa ? int8.isa : "";
  m.fp32_flops = peak(fp32, threads, b);
  m.bf16_flops = peak(bf16, threads, b);
  m.int8_ops = peak(int8, threads, b);
  m.gemm_fp32_flops = gemm_rate(options.quick, b);
  m.node_overhead_s = node_overhead(threads, b);
  for (size_t ws : working_sets(cpu, mem, options.quick)) {
    const BandwidthPoint p = triad_rate(ws, threads, b);
    if (p.bytes_per_s > 0) m.bandwidth.push_back(p);
  }
  m.measured_at = utc_now();
  return m;
}

double fp32_fma_peak(int threads, double seconds, std::string* isa) {
  PI_CHECK(threads >= 1 && threads <= 1024, InvalidArgument, "threads must be 1..1024, got ",
           threads);
  const detail::PeakLoop loop = detail::fp32_peak_loop();
  if (isa) *isa = loop.isa;
  Budget b = budget(false);
  b.peak_s = seconds / b.peak_repeats;
  return peak(loop, threads, b);
}

}  // namespace polyinfer::plan
