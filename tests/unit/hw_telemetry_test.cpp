// hw/telemetry.cpp on a faked system: utilization from /proc/stat deltas, frequency from cpufreq
// or /proc/cpuinfo, the hottest CPU sensor, memory, and the min/avg/max summary.
#include <gtest/gtest.h>

#include "hw/telemetry.h"
#include "hw_fake.h"

namespace polyinfer::hw {
namespace {

// user nice system idle iowait irq softirq steal
std::string stat(int u0, int i0, int u1, int i1) {
  auto line = [](const std::string& name, int user, int idle) {
    return name + " " + std::to_string(user) + " 0 0 " + std::to_string(idle) + " 0 0 0 0 0 0\n";
  };
  return line("cpu", u0 + u1, i0 + i1) + line("cpu0", u0, i0) + line("cpu1", u1, i1) +
         "intr 12345 0 0\nctxt 999\n";
}

const char* kMeminfo =
    "MemTotal:       16384000 kB\nMemFree:         1000000 kB\nMemAvailable:    4096000 kB\n";

TEST(HwTelemetry, UtilizationIsTheDeltaBetweenSamples) {
  testing::FakeRoot root;
  root.write("/proc/stat", stat(100, 900, 50, 950));
  root.write("/proc/meminfo", kMeminfo);
  testing::FakeLoader libs;
  Sampler sampler(root.fs(), libs);  // primes with the counters above
  root.write("/proc/stat", stat(100 + 75, 900 + 25, 50 + 10, 950 + 90));
  Sample s = sampler.sample();
  ASSERT_EQ(s.core_util_pct.size(), 2u);
  EXPECT_DOUBLE_EQ(s.core_util_pct[0], 75.0);
  EXPECT_DOUBLE_EQ(s.core_util_pct[1], 10.0);
  EXPECT_DOUBLE_EQ(s.cpu_util_pct, 42.5);
  EXPECT_EQ(s.memory_total_bytes, int64_t{16384000} * 1024);
  EXPECT_EQ(s.memory_used_bytes, int64_t{16384000 - 4096000} * 1024);
  EXPECT_TRUE(s.gpus.empty());  // no NVML here
  // No tick passed: unknown, not 0%.
  s = sampler.sample();
  EXPECT_EQ(s.cpu_util_pct, -1);
  // 100 ticks of iowait on cpu0 and nothing else: iowait counts as idle. The aggregate line's
  // total went backwards (a CPU went offline): unknown.
  root.write("/proc/stat", "cpu 175 0 0 925 100 0 0 0\ncpu0 175 0 0 925 100 0 0 0\n");
  s = sampler.sample();
  ASSERT_EQ(s.core_util_pct.size(), 1u);
  EXPECT_DOUBLE_EQ(s.core_util_pct[0], 0.0);
  EXPECT_EQ(s.cpu_util_pct, -1);
}

TEST(HwTelemetry, FrequencyFromCpufreqElseCpuinfo) {
  testing::FakeRoot root;
  root.write("/proc/stat", stat(1, 1, 1, 1));
  root.write("/proc/cpuinfo",
             "processor\t: 0\ncpu MHz\t\t: 2599.998\n\nprocessor\t: 1\ncpu MHz\t\t: 1800.2\n");
  testing::FakeLoader libs;
  {
    Sampler sampler(root.fs(), libs);
    EXPECT_EQ(sampler.sample().core_mhz, (std::vector<int64_t>{2600, 1800}));
  }
  root.write("/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", "3500000\n");
  root.write("/sys/devices/system/cpu/cpu1/cpufreq/scaling_cur_freq", "1200000\n");
  Sampler sampler(root.fs(), libs);
  EXPECT_EQ(sampler.sample().core_mhz, (std::vector<int64_t>{3500, 1200}));
}

TEST(HwTelemetry, HottestCpuSensor) {
  testing::FakeLoader libs;
  {
    testing::FakeRoot root;  // no sensors: unknown
    EXPECT_EQ(Sampler(root.fs(), libs).sample().temperature_c, -1);
  }
  {
    testing::FakeRoot root;  // thermal zones: only CPU-type zones count
    root.write("/sys/class/thermal/thermal_zone0/type", "x86_pkg_temp\n");
    root.write("/sys/class/thermal/thermal_zone0/temp", "61000\n");
    root.write("/sys/class/thermal/thermal_zone1/type", "iwlwifi_1\n");
    root.write("/sys/class/thermal/thermal_zone1/temp", "90000\n");
    EXPECT_DOUBLE_EQ(Sampler(root.fs(), libs).sample().temperature_c, 61.0);
  }
  {
    testing::FakeRoot root;  // hwmon CPU drivers win over thermal zones; the hottest input
    root.write("/sys/class/hwmon/hwmon0/name", "nvme\n");
    root.write("/sys/class/hwmon/hwmon0/temp1_input", "99000\n");
    root.write("/sys/class/hwmon/hwmon1/name", "k10temp\n");
    root.write("/sys/class/hwmon/hwmon1/temp1_input", "55500\n");
    root.write("/sys/class/hwmon/hwmon1/temp3_input", "71250\n");
    root.write("/sys/class/hwmon/hwmon1/temp1_label", "Tctl\n");
    root.write("/sys/class/thermal/thermal_zone0/type", "acpitz\n");
    root.write("/sys/class/thermal/thermal_zone0/temp", "40000\n");
    EXPECT_DOUBLE_EQ(Sampler(root.fs(), libs).sample().temperature_c, 71.25);
  }
}

TEST(HwTelemetry, SummarySkipsUnknownReadings) {
  std::vector<Sample> v(3);
  v[0].cpu_util_pct = 10;
  v[1].cpu_util_pct = -1;
  v[2].cpu_util_pct = 30;
  v[0].core_mhz = {1000, 3000};
  v[2].core_mhz = {4000, 4000};
  v[1].memory_used_bytes = int64_t{512} << 20;
  GpuSample g;
  g.utilization_pct = 80;
  g.power_w = 300;
  v[2].gpus = {g};
  const SampleSummary s = summarize(v);
  EXPECT_EQ(s.cpu_util_pct.count, 2);
  EXPECT_DOUBLE_EQ(s.cpu_util_pct.min, 10);
  EXPECT_DOUBLE_EQ(s.cpu_util_pct.avg, 20);
  EXPECT_DOUBLE_EQ(s.cpu_util_pct.max, 30);
  EXPECT_DOUBLE_EQ(s.cpu_mhz.min, 2000);  // per-sample average over cores
  EXPECT_DOUBLE_EQ(s.cpu_mhz.max, 4000);
  EXPECT_EQ(s.temperature_c.count, 0);
  EXPECT_DOUBLE_EQ(s.memory_used_mb.avg, 512);
  ASSERT_EQ(s.gpu_util_pct.size(), 1u);
  EXPECT_DOUBLE_EQ(s.gpu_util_pct[0].avg, 80);
  EXPECT_EQ(s.gpu_temperature_c[0].count, 0);
  EXPECT_DOUBLE_EQ(s.gpu_power_w[0].max, 300);
}

TEST(HwTelemetry, RealSystem) {
  Sampler sampler;
  const Sample s = sampler.sample();
  for (double u : s.core_util_pct) EXPECT_TRUE(u == -1 || (u >= 0 && u <= 100)) << u;
  EXPECT_GT(s.memory_total_bytes, 0);
  EXPECT_GE(s.memory_used_bytes, 0);
  EXPECT_LE(s.memory_used_bytes, s.memory_total_bytes);
}

}  // namespace
}  // namespace polyinfer::hw
