// hw/cpu.cpp: probe_cpu and probe_memory on faked /proc and /sys trees written the way the
// kernel writes them (x86 and arm64 /proc/cpuinfo, sysfs topology, caches, cpufreq, NUMA, DMI),
// and a sanity check on the real machine.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "hw/report.h"
#include "hw_fake.h"

namespace polyinfer::hw {
namespace {

using testing::FakeRoot;
using Strings = std::vector<std::string>;

// One /proc/cpuinfo block in the x86 kernel's layout (tabs before the colon).
std::string x86_block(int cpu, const std::string& vendor, const std::string& model, int phys,
                      int core, const std::string& flags) {
  return "processor\t: " + std::to_string(cpu) + "\nvendor_id\t: " + vendor +
         "\ncpu family\t: 25\nmodel\t\t: 17\nmodel name\t: " + model +
         "\nstepping\t: 1\ncpu MHz\t\t: 2599.998\ncache size\t: 1024 KB\nphysical id\t: " +
         std::to_string(phys) + "\nsiblings\t: 4\ncore id\t\t: " + std::to_string(core) +
         "\ncpu cores\t: 2\nfpu\t\t: yes\nflags\t\t: " + flags +
         "\nbogomips\t: 5199.99\naddress sizes\t: 48 bits physical, 57 bits virtual\npower "
         "management:\n\n";
}

// One arm64 /proc/cpuinfo block (no model name, no MHz: that is how arm64 kernels write it).
std::string arm_block(int cpu, const std::string& impl, const std::string& part,
                      const std::string& features) {
  return "processor\t: " + std::to_string(cpu) + "\nBogoMIPS\t: 50.00\nFeatures\t: " + features +
         "\nCPU implementer\t: " + impl +
         "\nCPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: " + part +
         "\nCPU revision\t: 1\n\n";
}

void topology(FakeRoot& r, int cpu, int pkg, int core, int cluster = -2) {
  const std::string t = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
  r.write(t + "physical_package_id", std::to_string(pkg) + "\n");
  r.write(t + "core_id", std::to_string(core) + "\n");
  if (cluster != -2) r.write(t + "cluster_id", std::to_string(cluster) + "\n");
}

void cache(FakeRoot& r, int cpu, int index, int level, const std::string& type,
           const std::string& size, const std::string& shared) {
  const std::string c = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cache/index" +
                        std::to_string(index) + "/";
  r.write(c + "level", std::to_string(level) + "\n");
  r.write(c + "type", type + "\n");
  r.write(c + "size", size + "\n");
  r.write(c + "shared_cpu_list", shared + "\n");
}

const char* kEpycFlags =
    "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse "
    "sse2 "
    "ht syscall nx mmxext fxsr_opt pdpe1gb rdtscp lm constant_tsc rep_good nopl nonstop_tsc cpuid "
    "extd_apicid aperfmperf pni pclmulqdq monitor ssse3 fma cx16 pcid sse4_1 sse4_2 x2apic movbe "
    "popcnt "
    "aes xsave avx f16c rdrand lahf_lm cmp_legacy svm extapic cr8_legacy abm sse4a misalignsse "
    "3dnowprefetch osvw ibs skinit wdt tce topoext perfctr_core bmi1 avx2 smep bmi2 erms invpcid "
    "cqm "
    "rdt_a avx512f avx512dq rdseed adx smap avx512ifma clflushopt clwb avx512cd sha_ni avx512bw "
    "avx512vl xsaveopt xsavec xgetbv1 xsaves avx_vnni avx512_bf16 clzero irperf xsaveerptr rdpru "
    "wbnoinvd amd_ppin cppc arat npt lbrv svm_lock nrip_save avx512vbmi umip pku ospke "
    "avx512_vbmi2 "
    "gfni vaes vpclmulqdq avx512_vnni avx512_bitalg avx512_vpopcntdq rdpid movdiri movdir64b "
    "overflow_recov "
    "succor smca fsrm avx512_vp2intersect flush_l1d";

// AMD EPYC, bare metal: 1 socket, 2 cores x 2 threads (SMT siblings 0,2 and 1,3), 2 NUMA nodes,
// cpufreq, thermal throttle counters. The DMI says "Amazon EC2" (a .metal instance) but the
// hypervisor flag is absent, so it is not virtualized.
TEST(HwCpu, AmdEpycBareMetal) {
  FakeRoot r;
  const std::string model = "AMD EPYC 9B45 128-Core Processor";
  r.write("/proc/cpuinfo", x86_block(0, "AuthenticAMD", model, 0, 0, kEpycFlags) +
                               x86_block(1, "AuthenticAMD", model, 0, 1, kEpycFlags) +
                               x86_block(2, "AuthenticAMD", model, 0, 0, kEpycFlags) +
                               x86_block(3, "AuthenticAMD", model, 0, 1, kEpycFlags));
  r.write("/sys/devices/system/cpu/online", "0-3\n");
  r.mkdir("/sys/devices/system/cpu/cpufreq");  // not a CPU: must not be counted
  r.mkdir("/sys/devices/system/cpu/cpuidle");
  const std::string per_core[] = {"0,2", "1,3", "0,2", "1,3"};
  for (int c = 0; c < 4; ++c) {
    topology(r, c, 0, c % 2);
    cache(r, c, 0, 1, "Data", "48K", per_core[c]);
    cache(r, c, 1, 1, "Instruction", "32K", per_core[c]);
    cache(r, c, 2, 2, "Unified", "1024K", per_core[c]);
    cache(r, c, 3, 3, "Unified", "32M", "0-3");
    const std::string t = "/sys/devices/system/cpu/cpu" + std::to_string(c) + "/thermal_throttle/";
    r.write(t + "core_throttle_count", c % 2 == 0 ? "3\n" : "4\n");  // shared by SMT siblings
    r.write(t + "package_throttle_count", "10\n");                   // shared by the package
  }
  r.write("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "performance\n");
  r.write("/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", "3500123\n");
  r.write("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "3700000\n");
  r.mkdir("/sys/devices/system/node/node0");
  r.mkdir("/sys/devices/system/node/node1");
  r.mkdir("/sys/devices/system/node/power");
  r.write("/sys/devices/system/node/online", "0-1\n");
  r.write("/sys/class/dmi/id/sys_vendor", "Amazon EC2\n");
  r.write("/sys/class/dmi/id/product_name", "c7a.metal-48xl\n");

  const CpuInfo cpu = probe_cpu(r.fs());
  EXPECT_FALSE(cpu.arch.empty());
  EXPECT_EQ(cpu.vendor, "AuthenticAMD");
  EXPECT_EQ(cpu.model, model);
  EXPECT_EQ(cpu.threads, 4);
  EXPECT_EQ(cpu.cores, 2);
  EXPECT_EQ(cpu.sockets, 1);
  EXPECT_EQ(cpu.features,
            (Strings{"avx", "avx2", "avx512_bf16", "avx512_vnni", "avx512bw", "avx512dq", "avx512f",
                     "avx512vl", "avx_vnni", "f16c", "fma", "sse4_2"}));
  EXPECT_TRUE(cpu.has("avx512_vnni"));
  EXPECT_TRUE(cpu.has("avx512_bf16"));
  EXPECT_FALSE(cpu.has("amx_tile"));
  EXPECT_FALSE(cpu.has("avx512ifma"));  // a kernel flag polyinfer does not list
  ASSERT_EQ(cpu.caches.size(), 4u);
  EXPECT_EQ(cpu.caches[0].level, 1);
  EXPECT_EQ(cpu.caches[0].type, "Data");
  EXPECT_EQ(cpu.caches[0].size_bytes, 48 * 1024);
  EXPECT_EQ(cpu.caches[0].instances, 2);
  EXPECT_EQ(cpu.caches[1].type, "Instruction");
  EXPECT_EQ(cpu.caches[2].size_bytes, 1024 * 1024);
  EXPECT_EQ(cpu.caches[3].level, 3);
  EXPECT_EQ(cpu.caches[3].size_bytes, 32 * 1024 * 1024);
  EXPECT_EQ(cpu.caches[3].instances, 1);
  EXPECT_EQ(cpu.numa_nodes, 2);
  EXPECT_EQ(cpu.governor, "performance");
  EXPECT_EQ(cpu.cur_mhz, 3500);
  EXPECT_EQ(cpu.max_mhz, 3700);
  EXPECT_EQ(cpu.hypervisor, "");
  EXPECT_EQ(cpu.throttle_events, 3 + 4 + 10);  // once per core and once per package
}

// Intel Sapphire Rapids-class KVM guest: AMX flags, the hypervisor flag, QEMU's DMI strings, no
// sysfs topology (cores from cpuinfo's physical/core id), no cpufreq (MHz from cpuinfo), no
// NUMA folder (one node), no throttle counters.
TEST(HwCpu, IntelAmxKvmGuest) {
  FakeRoot r;
  const std::string flags =
      "fpu sse sse2 ssse3 fma sse4_1 sse4_2 avx f16c hypervisor avx2 avx512f avx512dq avx512bw "
      "avx512vl avx_vnni avx512_bf16 avx512_vnni amx_bf16 avx512_fp16 amx_tile amx_int8";
  const std::string model = "Intel(R) Xeon(R) Platinum 8480+";
  r.write("/proc/cpuinfo", x86_block(0, "GenuineIntel", model, 0, 0, flags) +
                               x86_block(1, "GenuineIntel", model, 0, 1, flags) +
                               x86_block(2, "GenuineIntel", model, 1, 0, flags));
  r.write("/sys/devices/system/cpu/online", "0-2\n");
  r.write("/sys/class/dmi/id/sys_vendor", "QEMU\n");
  r.write("/sys/class/dmi/id/product_name", "Standard PC (Q35 + ICH9, 2009)\n");

  const CpuInfo cpu = probe_cpu(r.fs());
  EXPECT_EQ(cpu.vendor, "GenuineIntel");
  EXPECT_EQ(cpu.model, model);
  EXPECT_EQ(cpu.threads, 3);
  EXPECT_EQ(cpu.cores, 3);  // (0,0) (0,1) (1,0)
  EXPECT_EQ(cpu.sockets, 2);
  EXPECT_TRUE(cpu.has("amx_tile"));
  EXPECT_TRUE(cpu.has("amx_int8"));
  EXPECT_TRUE(cpu.has("amx_bf16"));
  EXPECT_TRUE(cpu.has("avx512_fp16"));
  EXPECT_FALSE(cpu.has("hypervisor"));
  EXPECT_TRUE(std::is_sorted(cpu.features.begin(), cpu.features.end()));
  EXPECT_TRUE(cpu.caches.empty());
  EXPECT_EQ(cpu.numa_nodes, 1);
  EXPECT_EQ(cpu.governor, "");
  EXPECT_EQ(cpu.cur_mhz, 2600);  // "cpu MHz : 2599.998", rounded
  EXPECT_EQ(cpu.max_mhz, -1);
  EXPECT_EQ(cpu.hypervisor, "QEMU");
  EXPECT_EQ(cpu.throttle_events, -1);
}

// The hypervisor flag alone says "virtualized"; the platform strings only name it.
TEST(HwCpu, HypervisorNames) {
  auto guest = [](const std::string& vendor, const std::string& product, const std::string& xen,
                  const std::string& clocks = "") {
    FakeRoot r;
    if (!clocks.empty())
      r.write("/sys/devices/system/clocksource/clocksource0/available_clocksource", clocks + " \n");
    r.write("/proc/cpuinfo", x86_block(0, "GenuineIntel", "x", 0, 0, "fpu sse4_2 hypervisor avx"));
    if (!vendor.empty()) r.write("/sys/class/dmi/id/sys_vendor", vendor + "\n");
    if (!product.empty()) r.write("/sys/class/dmi/id/product_name", product + "\n");
    if (!xen.empty()) r.write("/sys/hypervisor/type", xen + "\n");
    return probe_cpu(r.fs()).hypervisor;
  };
  EXPECT_EQ(guest("", "", ""), "unknown hypervisor");
  EXPECT_EQ(guest("Microsoft Corporation", "Virtual Machine", ""), "Hyper-V");
  EXPECT_EQ(guest("VMware, Inc.", "VMware7,1", ""), "VMware");
  EXPECT_EQ(guest("Google", "Google Compute Engine", ""), "Google");
  EXPECT_EQ(guest("Amazon EC2", "m7i.large", ""), "Amazon EC2");
  EXPECT_EQ(guest("Red Hat", "KVM", ""), "KVM");
  EXPECT_EQ(guest("", "", "xen"), "Xen");
  EXPECT_EQ(guest("Some Vendor", "Some Box", ""), "unknown hypervisor");
  // No DMI (a microVM): the paravirtual clock names it; a plain TSC does not.
  EXPECT_EQ(guest("", "", "", "tsc kvm-clock"), "KVM");
  EXPECT_EQ(guest("", "", "", "tsc hyperv_clocksource_tsc_page"), "Hyper-V");
  EXPECT_EQ(guest("", "", "", "tsc hpet acpi_pm"), "unknown hypervisor");
}

const char* kNeoverseV1Features =
    "fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma "
    "lrcpc "
    "dcpop sha3 sm3 sm4 asimddp sha512 sve asimdfhm dit uscat ilrcpc flagm ssbs paca pacg dcpodp "
    "svei8mm svebf16 i8mm bf16 dgh rng";

// AWS Graviton3 (Neoverse-V1) guest: arm64 cpuinfo, no hypervisor flag exists on arm64, so the
// DMI strings decide; a ".metal" instance is not called virtual.
TEST(HwCpu, ArmNeoverse) {
  auto probe = [](const std::string& product) {
    FakeRoot r;
    std::string info;
    for (int c = 0; c < 4; ++c) {
      info += arm_block(c, "0x41", "0xd40", kNeoverseV1Features);
      topology(r, c, 0, c, 0);
      cache(r, c, 0, 1, "Data", "64K", std::to_string(c));
      cache(r, c, 1, 2, "Unified", "1024K", std::to_string(c));
      cache(r, c, 2, 3, "Unified", "32768K", "0-3");
    }
    r.write("/proc/cpuinfo", info);
    r.write("/sys/devices/system/cpu/online", "0-3\n");
    r.mkdir("/sys/devices/system/node/node0");
    r.write("/sys/class/dmi/id/sys_vendor", "Amazon EC2\n");
    r.write("/sys/class/dmi/id/product_name", product + "\n");
    r.write("/proc/meminfo", "MemTotal:        8000000 kB\n");
    return probe_cpu(r.fs());
  };
  const CpuInfo cpu = probe("c7g.xlarge");
  EXPECT_EQ(cpu.vendor, "ARM");
  EXPECT_EQ(cpu.model, "Neoverse-V1");
  EXPECT_EQ(cpu.threads, 4);
  EXPECT_EQ(cpu.cores, 4);
  EXPECT_EQ(cpu.sockets, 1);
  // svei8mm / svebf16 are different hwcaps and must not be read as i8mm / bf16 twice or as sve2.
  EXPECT_EQ(cpu.features, (Strings{"bf16", "dotprod", "fp16", "i8mm", "neon", "sve"}));
  EXPECT_FALSE(cpu.has("sve2"));
  EXPECT_FALSE(cpu.has("avx2"));
  ASSERT_EQ(cpu.caches.size(), 3u);
  EXPECT_EQ(cpu.caches[0].instances, 4);
  EXPECT_EQ(cpu.caches[2].size_bytes, int64_t{32} << 20);
  EXPECT_EQ(cpu.caches[2].instances, 1);
  EXPECT_EQ(cpu.numa_nodes, 1);
  EXPECT_EQ(cpu.cur_mhz, -1);  // arm64 cpuinfo has no MHz and cpufreq is absent
  EXPECT_EQ(cpu.hypervisor, "Amazon EC2");
  EXPECT_EQ(probe("c7g.metal").hypervisor, "");
}

// RK3588-like big.LITTLE: core_id restarts in every cluster, so (package, core) alone would
// count 4 cores instead of 8; the model lists both core types.
TEST(HwCpu, ArmBigLittleClusters) {
  FakeRoot r;
  std::string info;
  const int cluster[] = {0, 0, 0, 0, 1, 1, 2, 2};
  const int core[] = {0, 1, 2, 3, 0, 1, 0, 1};
  for (int c = 0; c < 8; ++c) {
    info += arm_block(c, "0x41", c < 4 ? "0xd05" : "0xd0b", "fp asimd evtstrm aes asimdhp asimddp");
    topology(r, c, 0, core[c], cluster[c]);
  }
  r.write("/proc/cpuinfo", info);
  r.write("/sys/devices/system/cpu/online", "0-7\n");
  const CpuInfo cpu = probe_cpu(r.fs());
  EXPECT_EQ(cpu.threads, 8);
  EXPECT_EQ(cpu.cores, 8);
  EXPECT_EQ(cpu.model, "Cortex-A55 + Cortex-A76");
  EXPECT_EQ(cpu.features, (Strings{"dotprod", "fp16", "neon"}));
  EXPECT_EQ(cpu.hypervisor, "");
}

// An implementer polyinfer knows with a part it does not: vendor named, model not guessed.
TEST(HwCpu, ArmUnknownPart) {
  FakeRoot r;
  r.write("/proc/cpuinfo",
          arm_block(0, "0x51", "0x001", "fp asimd") + arm_block(1, "0x51", "0x001", "fp asimd"));
  const CpuInfo cpu = probe_cpu(r.fs());
  EXPECT_EQ(cpu.vendor, "Qualcomm");
  EXPECT_EQ(cpu.model, "");
  EXPECT_EQ(cpu.threads, 2);  // no sysfs: the cpuinfo blocks
  EXPECT_EQ(cpu.cores, 2);    // no topology at all: one core per thread
  EXPECT_TRUE(cpu.has("neon"));
}

// Online CPUs come from the kernel's list even when cpuinfo is absent; without any topology the
// cores fall back to the threads, and offline CPUs' folders are not counted.
TEST(HwCpu, OnlineListWithoutTopology) {
  FakeRoot r;
  r.write("/sys/devices/system/cpu/online", "0-2,4\n");
  for (int c = 0; c < 6; ++c) r.mkdir("/sys/devices/system/cpu/cpu" + std::to_string(c));
  const CpuInfo cpu = probe_cpu(r.fs());
  EXPECT_EQ(cpu.threads, 4);
  EXPECT_EQ(cpu.cores, 4);
  EXPECT_EQ(cpu.numa_nodes, 1);
  EXPECT_TRUE(cpu.features.empty());
  EXPECT_EQ(cpu.vendor, "");
}

// Nothing exposed: every field at its "unknown" value, no crash.
TEST(HwCpu, EmptyRoot) {
  FakeRoot r;
  const CpuInfo cpu = probe_cpu(r.fs());
  EXPECT_FALSE(cpu.arch.empty());  // from the build, not the files
  EXPECT_EQ(cpu.threads, 0);
  EXPECT_EQ(cpu.cores, 0);
  EXPECT_EQ(cpu.sockets, 0);
  EXPECT_EQ(cpu.numa_nodes, 0);
  EXPECT_TRUE(cpu.features.empty());
  EXPECT_TRUE(cpu.caches.empty());
  EXPECT_EQ(cpu.cur_mhz, -1);
  EXPECT_EQ(cpu.max_mhz, -1);
  EXPECT_EQ(cpu.throttle_events, -1);
  EXPECT_EQ(cpu.hypervisor, "");
  EXPECT_FALSE(cpu.has("avx"));
  const MemoryInfo mem = probe_memory(r.fs());
  EXPECT_EQ(mem.total_bytes, -1);
  EXPECT_EQ(mem.available_bytes, -1);
  EXPECT_EQ(mem.swap_total_bytes, -1);
  EXPECT_EQ(mem.swap_free_bytes, -1);
}

TEST(HwCpu, Memory) {
  FakeRoot r;
  r.write("/proc/meminfo",
          "MemTotal:       24683584 kB\nMemFree:        22264884 kB\nMemAvailable:   23963704 kB\n"
          "Buffers:           24976 kB\nCached:          1823420 kB\nSwapCached:            0 kB\n"
          "SwapTotal:       2097148 kB\nSwapFree:        2000000 kB\nHugePages_Total:       0\n");
  const MemoryInfo mem = probe_memory(r.fs());
  EXPECT_EQ(mem.total_bytes, int64_t{24683584} * 1024);
  EXPECT_EQ(mem.available_bytes, int64_t{23963704} * 1024);
  EXPECT_EQ(mem.swap_total_bytes, int64_t{2097148} * 1024);
  EXPECT_EQ(mem.swap_free_bytes, int64_t{2000000} * 1024);
}

// Kernels before 3.14 have no MemAvailable: free + buffers + page cache stands in.
TEST(HwCpu, MemoryWithoutMemAvailable) {
  FakeRoot r;
  r.write("/proc/meminfo",
          "MemTotal:        1000 kB\nMemFree:          100 kB\nBuffers:           20 kB\nCached:   "
          "        300 kB\n");
  const MemoryInfo mem = probe_memory(r.fs());
  EXPECT_EQ(mem.total_bytes, 1000 * 1024);
  EXPECT_EQ(mem.available_bytes, (100 + 20 + 300) * 1024);
  EXPECT_EQ(mem.swap_total_bytes, -1);
}

// The real machine: only what holds on every Linux machine.
TEST(HwCpu, RealSystem) {
  const CpuInfo cpu = probe_cpu(system_files());
  EXPECT_FALSE(cpu.arch.empty());
  EXPECT_GE(cpu.threads, 1);
  EXPECT_GE(cpu.cores, 1);
  EXPECT_LE(cpu.cores, cpu.threads);
  EXPECT_GE(cpu.sockets, 1);
  EXPECT_LE(cpu.sockets, cpu.cores);
  EXPECT_GE(cpu.numa_nodes, 1);
  EXPECT_TRUE(std::is_sorted(cpu.features.begin(), cpu.features.end()));
  for (const auto& c : cpu.caches) {
    EXPECT_GE(c.level, 1);
    EXPECT_GT(c.size_bytes, 0);
    EXPECT_GE(c.instances, 1);
    EXPECT_LE(c.instances, cpu.threads);
  }
  const MemoryInfo mem = probe_memory(system_files());
  EXPECT_GT(mem.total_bytes, 0);
  EXPECT_GE(mem.available_bytes, 0);
  EXPECT_LE(mem.available_bytes, mem.total_bytes);
}

}  // namespace
}  // namespace polyinfer::hw
