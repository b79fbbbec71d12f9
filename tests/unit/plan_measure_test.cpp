// `plan --target this` (src/plan/measure.h): the JSON form, the cache (hit, refresh, stale,
// garbage, unwritable), the Target, and a quick real measurement checked for sanity — ratios
// and orderings the hardware guarantees, never timing thresholds.
//
// To see the full measurement of this machine (a few seconds per thread count):
//   build/tests/unit_tests --gtest_also_run_disabled_tests --gtest_filter='*PrintFullMeasurement'
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "hw/report.h"
#include "plan/measure.h"
#include "polyinfer/session.h"
#include "polyinfer/status.h"

namespace polyinfer::plan {
namespace {

namespace fs = std::filesystem;

MachineMeasurement sample() {
  MachineMeasurement m;
  m.cpu_model = "Example CPU 9000 (R)";
  m.isa = "avx512f";
  m.bf16_isa = "";
  m.int8_isa = "avx512_vnni (vpdpbusd)";
  m.threads = 2;
  m.fp32_flops = 4.5e11;
  m.bf16_flops = 0;
  m.int8_ops = 1.75e12;
  m.gemm_fp32_flops = 4.0e11;
  m.bandwidth = {{16368, 9.5e11}, {268416, 4.25e11}, {536870904, 1.5e10}};
  m.node_overhead_s = 2.5e-6;
  m.memory_total = 25'000'000'000ull;
  m.memory_available = 24'000'000'000ull;
  m.measured_at = "2000-01-02T03:04:05Z";
  m.polyinfer_version = "0.1.0";
  m.quick = false;
  return m;
}

void expect_same(const MachineMeasurement& a, const MachineMeasurement& b) {
  EXPECT_EQ(a.cpu_model, b.cpu_model);
  EXPECT_EQ(a.isa, b.isa);
  EXPECT_EQ(a.bf16_isa, b.bf16_isa);
  EXPECT_EQ(a.int8_isa, b.int8_isa);
  EXPECT_EQ(a.threads, b.threads);
  EXPECT_DOUBLE_EQ(a.fp32_flops, b.fp32_flops);
  EXPECT_DOUBLE_EQ(a.bf16_flops, b.bf16_flops);
  EXPECT_DOUBLE_EQ(a.int8_ops, b.int8_ops);
  EXPECT_DOUBLE_EQ(a.gemm_fp32_flops, b.gemm_fp32_flops);
  ASSERT_EQ(a.bandwidth.size(), b.bandwidth.size());
  for (size_t i = 0; i < a.bandwidth.size(); ++i) {
    EXPECT_EQ(a.bandwidth[i].working_set, b.bandwidth[i].working_set);
    EXPECT_DOUBLE_EQ(a.bandwidth[i].bytes_per_s, b.bandwidth[i].bytes_per_s);
  }
  EXPECT_DOUBLE_EQ(a.node_overhead_s, b.node_overhead_s);
  EXPECT_EQ(a.memory_total, b.memory_total);
  EXPECT_EQ(a.memory_available, b.memory_available);
  EXPECT_EQ(a.measured_at, b.measured_at);
  EXPECT_EQ(a.polyinfer_version, b.polyinfer_version);
  EXPECT_EQ(a.quick, b.quick);
}

TEST(PlanMeasure, JsonRoundTrip) {
  const MachineMeasurement m = sample();
  expect_same(measurement_from_json(to_json(m), "test"), m);
  MachineMeasurement q = m;
  q.quick = true;
  q.bandwidth.clear();
  expect_same(measurement_from_json(to_json(q), "test"), q);
}

TEST(PlanMeasure, FromJsonRejectsWhatIsNotAMeasurement) {
  const std::string good = to_json(sample());
  auto rejects = [](const std::string& text, const std::string& words) {
    try {
      measurement_from_json(text, "cache.json");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
      EXPECT_NE(std::string(e.what()).find("cache.json"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  auto edited = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    const size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  };
  rejects("{not json", "not valid JSON");
  rejects("[1, 2]", "not a JSON object");
  rejects(edited("\"fp32_flops\"", "\"fp32_flop\""), "no 'fp32_flops'");
  rejects(edited("\"threads\": 2", "\"threads\": \"2\""), "'threads'");
  rejects(edited("\"threads\": 2", "\"threads\": 0"), "'threads' must be 1..1024");
  rejects(edited("\"node_overhead_s\": 2.5e-06", "\"node_overhead_s\": -1.0"), "node_overhead_s");
  rejects(edited("\"quick\": false", "\"quick\": 0"), "'quick'");
  rejects(edited("\"working_set\": 268416", "\"working_set\": 1"), "ascend");
}

// Each test gets its own $XDG_CACHE_HOME, so nothing touches the user's cache.
class PlanMeasureCache : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/polyinfer_measure_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    if (const char* old = std::getenv("XDG_CACHE_HOME")) saved_ = old, had_ = true;
    setenv("XDG_CACHE_HOME", dir_.c_str(), 1);
    path_ = measurement_cache_path(1);
    ASSERT_EQ(path_.rfind(dir_ + "/polyinfer/", 0), 0u) << path_;
  }
  void TearDown() override {
    if (had_) setenv("XDG_CACHE_HOME", saved_.c_str(), 1);
    else
      unsetenv("XDG_CACHE_HOME");
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // A cache entry that is valid for this machine at 1 thread, with figures no real measurement
  // would produce.
  static MachineMeasurement fake() {
    MachineMeasurement m = sample();
    m.cpu_model = hw::probe_cpu(hw::system_files()).model;
    m.threads = 1;
    m.polyinfer_version = version();
    m.fp32_flops = 1.25e15;
    return m;
  }
  void write(const std::string& text) const {
    fs::create_directories(fs::path(path_).parent_path());
    std::ofstream(path_) << text;
  }
  std::string read() const {
    std::ifstream in(path_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  // A measurement that is not the fake one was measured, and the file now holds it.
  void expect_measured_and_written(const MachineMeasurement& m) const {
    EXPECT_NE(m.measured_at, fake().measured_at);
    EXPECT_NE(m.fp32_flops, fake().fp32_flops);
    EXPECT_EQ(m.polyinfer_version, version());
    expect_same(measurement_from_json(read(), path_), m);
    for (const auto& entry : fs::directory_iterator(fs::path(path_).parent_path()))
      EXPECT_EQ(entry.path().string(), path_) << "left behind: " << entry.path();
  }

  std::string dir_, path_, saved_;
  bool had_ = false;
  const MeasureOptions quick_{true};
};

TEST_F(PlanMeasureCache, HitReturnsTheStoredFiguresWithoutMeasuring) {
  write(to_json(fake()));
  std::string where;
  const MachineMeasurement m = cached_measurement(1, false, &where);  // a full request: no probe
  EXPECT_EQ(where, path_);
  expect_same(m, fake());
}

TEST_F(PlanMeasureCache, QuickEntryServesQuickRequestsOnly) {
  MachineMeasurement q = fake();
  q.quick = true;
  write(to_json(q));
  expect_same(cached_measurement(1, false, nullptr, quick_), q);
}

TEST_F(PlanMeasureCache, RefreshMeasuresAgain) {
  write(to_json(fake()));
  expect_measured_and_written(cached_measurement(1, true, nullptr, quick_));
}

TEST_F(PlanMeasureCache, StaleVersionMeasuresAgain) {
  MachineMeasurement old = fake();
  old.polyinfer_version = "0.0.1";
  write(to_json(old));
  expect_measured_and_written(cached_measurement(1, false, nullptr, quick_));
}

TEST_F(PlanMeasureCache, OtherCpuOrThreadCountMeasuresAgain) {
  MachineMeasurement other = fake();
  other.cpu_model += " (another one)";
  write(to_json(other));
  expect_measured_and_written(cached_measurement(1, false, nullptr, quick_));
  other = fake();
  other.threads = 2;  // in the 1-thread file: not ours
  write(to_json(other));
  expect_measured_and_written(cached_measurement(1, false, nullptr, quick_));
}

TEST_F(PlanMeasureCache, GarbageMeasuresAgain) {
  write("{\"polyinfer_version\": tru");
  expect_measured_and_written(cached_measurement(1, false, nullptr, quick_));
  write("");
  expect_measured_and_written(cached_measurement(1, false, nullptr, quick_));
}

TEST_F(PlanMeasureCache, UnwritableCacheIsNotAnError) {
  // The cache directory's place is taken by a file: nothing can be created under it.
  std::ofstream(dir_ + "/polyinfer") << "a file, not a folder";
  std::string where;
  const MachineMeasurement m = cached_measurement(1, false, &where, quick_);
  EXPECT_EQ(where, path_);
  EXPECT_GT(m.fp32_flops, 0);
  EXPECT_FALSE(fs::is_directory(dir_ + "/polyinfer"));
}

TEST(PlanMeasure, RejectsBadThreadCounts) {
  EXPECT_THROW(measure_this_machine(0, {true}), Error);
  EXPECT_THROW(cached_measurement(-1, false), Error);
}

TEST(PlanMeasure, ThisMachineTarget) {
  const Target t = this_machine_target(sample());
  EXPECT_EQ(t.id, "this");
  EXPECT_EQ(t.name, "this machine (Example CPU 9000 (R), 2 threads)");
  EXPECT_EQ(t.kind, "cpu");
  ASSERT_TRUE(t.peak.count(Precision::FP32));
  EXPECT_DOUBLE_EQ(t.peak.at(Precision::FP32).value, 4.5e11);
  EXPECT_TRUE(t.peak.at(Precision::FP32).known);
  EXPECT_EQ(t.peak.at(Precision::FP32).source, "measured 2000-01-02T03:04:05Z");
  EXPECT_FALSE(t.peak.count(Precision::BF16));  // 0: the CPU has no bf16 dot product
  ASSERT_TRUE(t.peak.count(Precision::INT8));
  EXPECT_DOUBLE_EQ(t.peak.at(Precision::INT8).value, 1.75e12);
  EXPECT_DOUBLE_EQ(t.bandwidth.value, 1.5e10);  // the DRAM-sized (last) point
  EXPECT_TRUE(t.bandwidth.known);
  EXPECT_DOUBLE_EQ(t.memory.value, 25e9);
  EXPECT_DOUBLE_EQ(t.node_overhead.value, 2.5e-6);
  EXPECT_DOUBLE_EQ(t.compute_efficiency.value, 4.0e11 / 4.5e11);
  EXPECT_TRUE(t.compute_efficiency.known);
  EXPECT_DOUBLE_EQ(t.bandwidth_efficiency.value, 1.0);
  EXPECT_EQ(t.bandwidth_efficiency.source.rfind("measured", 0), 0u);

  MachineMeasurement one = sample();
  one.threads = 1;
  one.gemm_fp32_flops = 0;  // oneDNN failed: no efficiency rather than a made-up one
  const Target t1 = this_machine_target(one);
  EXPECT_EQ(t1.name, "this machine (Example CPU 9000 (R), 1 thread)");
  EXPECT_FALSE(t1.compute_efficiency.known);
}

// A real, quick measurement: every figure present and consistent with the others.
TEST(PlanMeasure, QuickRealMeasurementIsSane) {
  const MachineMeasurement m = measure_this_machine(1, {true});
  std::cout << describe(m);
  EXPECT_TRUE(m.quick);
  EXPECT_EQ(m.threads, 1);
  EXPECT_EQ(m.polyinfer_version, version());
  EXPECT_FALSE(m.isa.empty());
  EXPECT_GT(m.fp32_flops, 0);
  EXPECT_EQ(m.bf16_flops > 0, !m.bf16_isa.empty());
  EXPECT_EQ(m.int8_ops > 0, !m.int8_isa.empty());
  // Every working set measured (quick: 16 KiB .. 8 MiB), ascending, each at a positive rate.
  ASSERT_EQ(m.bandwidth.size(), 4u);
  for (size_t i = 0; i < m.bandwidth.size(); ++i) {
    EXPECT_GT(m.bandwidth[i].bytes_per_s, 0) << i;
    if (i) {
      EXPECT_GT(m.bandwidth[i].working_set, m.bandwidth[i - 1].working_set) << i;
    }
  }
  // Only that the GEMM rate was measured: comparing it with the FMA peak compares two timings
  // taken at different moments of a shared machine (under ctest -j2 a neighbour halved the peak
  // loop's time slice and the GEMM looked 1.7x faster than the peak). tools/check_plan.sh and
  // `polyinfer plan --measure` show both figures on a quiet machine.
  EXPECT_GT(m.gemm_fp32_flops, 0);
  EXPECT_GT(m.node_overhead_s, 0);
  if (m.memory_total > 0) {
    EXPECT_LE(m.memory_available, m.memory_total);
  }
  EXPECT_EQ(m.cpu_model, hw::probe_cpu(hw::system_files()).model);
  expect_same(measurement_from_json(to_json(m), "round trip"), m);
}

// The full measurement for a human (run by hand; see the top of the file).
TEST(PlanMeasure, DISABLED_PrintFullMeasurement) {
  const int n = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int threads : {1, n}) {
    const MachineMeasurement m = measure_this_machine(threads);
    std::cout << describe(m) << to_json(m);
    EXPECT_LE(m.gemm_fp32_flops, 1.5 * m.fp32_flops);
    if (n == 1) break;
  }
}

}  // namespace
}  // namespace polyinfer::plan
