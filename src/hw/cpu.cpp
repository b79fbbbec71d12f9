// The CPU and memory probes (hw/report.h): /proc/cpuinfo, /sys/devices/system/{cpu,node},
// /sys/hypervisor, /sys/class/dmi/id and /proc/meminfo, all read through hw::FileSystem.
// Both /proc/cpuinfo formats (x86 "flags", arm64 "Features") are parsed whatever the build's
// architecture, chosen by which fields the file has, so either can be tested on any machine.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "hw/report.h"

namespace polyinfer::hw {

namespace {

constexpr int kMaxCpus = 4096;        // bound on CPUs read from outside
constexpr int kMaxCacheIndices = 16;  // cpuN/cache/index0..15
constexpr int kMaxNodes = 4096;

const char* build_arch() {
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__aarch64__)
  return "aarch64";
#elif defined(__i386__)
  return "i386";
#elif defined(__arm__)
  return "arm";
#elif defined(__riscv) && __riscv_xlen == 64
  return "riscv64";
#elif defined(__powerpc64__)
  return "ppc64";
#else
  return "unknown";
#endif
}

// One "processor" block of /proc/cpuinfo: "key<TAB>: value" lines.
using CpuBlock = std::map<std::string, std::string>;

std::vector<CpuBlock> parse_cpuinfo(const std::string& text) {
  std::vector<CpuBlock> blocks;
  CpuBlock cur;
  size_t i = 0;
  while (i <= text.size()) {
    size_t j = text.find('\n', i);
    if (j == std::string::npos) j = text.size();
    const std::string line = text.substr(i, j - i);
    i = j + 1;
    const auto colon = line.find(':');
    if (trim(line).empty()) {
      if (!cur.empty() && blocks.size() < kMaxCpus) blocks.push_back(std::move(cur));
      cur.clear();
    } else if (colon != std::string::npos) {
      cur[trim(line.substr(0, colon))] = trim(line.substr(colon + 1));
    }
    if (j == text.size()) break;
  }
  if (!cur.empty() && blocks.size() < kMaxCpus) blocks.push_back(std::move(cur));
  return blocks;
}

std::string field(const CpuBlock& b, const char* key) {
  auto it = b.find(key);
  return it == b.end() ? "" : it->second;
}

std::optional<int64_t> parse_int(const std::string& s, int base = 10) {
  const std::string t = trim(s);
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  const long long v = std::strtoll(t.c_str(), &end, base);
  if (end == t.c_str()) return std::nullopt;
  return static_cast<int64_t>(v);
}

// A kernel CPU list ("0-3,8") as its members, at most kMaxCpus of them; empty when malformed.
std::vector<int> cpu_list_members(const std::string& list) {
  std::vector<int> out;
  if (cpu_list_count(list) <= 0) return out;
  const std::string s = trim(list);
  size_t i = 0;
  while (i < s.size()) {
    size_t j = s.find(',', i);
    if (j == std::string::npos) j = s.size();
    const std::string part = s.substr(i, j - i);
    const auto dash = part.find('-');
    const long a = std::strtol(part.c_str(), nullptr, 10);
    const long b =
        dash == std::string::npos ? a : std::strtol(part.c_str() + dash + 1, nullptr, 10);
    for (long c = a; c <= b && static_cast<int>(out.size()) < kMaxCpus; ++c)
      if (c >= 0 && c < kMaxCpus) out.push_back(static_cast<int>(c));
    i = j + 1;
  }
  return out;
}

// "cpu12" → 12; -1 for "cpufreq", "cpuidle", ...
int numbered(const std::string& name, const std::string& prefix) {
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return -1;
  int v = 0;
  for (size_t i = prefix.size(); i < name.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return -1;
    v = v * 10 + (name[i] - '0');
    if (v >= 1 << 20) return -1;
  }
  return v;
}

// sysfs cache sizes: "48K", "2048K", "32M", rarely a bare byte count.
int64_t parse_size(const std::string& s) {
  const auto v = parse_int(s);
  if (!v || *v < 0) return 0;
  const char unit =
      s.empty() ? 0 : static_cast<char>(std::toupper(static_cast<unsigned char>(trim(s).back())));
  const int64_t mul = unit == 'K'   ? 1024
                      : unit == 'M' ? 1024 * 1024
                      : unit == 'G' ? 1024 * 1024 * 1024
                                    : 1;
  if (*v > std::numeric_limits<int64_t>::max() / mul) return 0;
  return *v * mul;
}

// Kernel flag → normalized feature name (report.h). x86 names are the kernel's own.
const std::map<std::string, std::string>& feature_names() {
  static const std::map<std::string, std::string> m = {
      {"sse4_2", "sse4_2"},
      {"avx", "avx"},
      {"avx2", "avx2"},
      {"fma", "fma"},
      {"f16c", "f16c"},
      {"avx512f", "avx512f"},
      {"avx512bw", "avx512bw"},
      {"avx512vl", "avx512vl"},
      {"avx512dq", "avx512dq"},
      {"avx512_vnni", "avx512_vnni"},
      {"avx512_bf16", "avx512_bf16"},
      {"avx512_fp16", "avx512_fp16"},
      {"avx_vnni", "avx_vnni"},
      {"amx_tile", "amx_tile"},
      {"amx_int8", "amx_int8"},
      {"amx_bf16", "amx_bf16"},
      // arm64 hwcaps as /proc/cpuinfo "Features" spells them.
      {"asimd", "neon"},
      {"asimddp", "dotprod"},
      {"asimdhp", "fp16"},
      {"fphp", "fp16"},
      {"i8mm", "i8mm"},
      {"bf16", "bf16"},
      {"sve", "sve"},
      {"sve2", "sve2"},
      {"sme", "sme"}};
  return m;
}

// arm64 "CPU implementer" codes (Linux arch/arm64/include/asm/cputype.h).
std::string arm_implementer(int64_t code) {
  switch (code) {
    case 0x41: return "ARM";
    case 0x42: return "Broadcom";
    case 0x43: return "Cavium";
    case 0x46: return "Fujitsu";
    case 0x48: return "HiSilicon";
    case 0x4e: return "NVIDIA";
    case 0x50: return "APM";
    case 0x51: return "Qualcomm";
    case 0x53: return "Samsung";
    case 0x61: return "Apple";
    case 0x69: return "Intel";
    case 0x6d: return "Microsoft";
    case 0xc0: return "Ampere";
    default: return "";
  }
}

// (implementer, part) → core name, for the parts polyinfer is likely to meet; "" otherwise.
std::string arm_part(int64_t implementer, int64_t part) {
  static const std::map<std::pair<int64_t, int64_t>, const char*> parts = {
      {{0x41, 0xd03}, "Cortex-A53"},
      {{0x41, 0xd04}, "Cortex-A35"},
      {{0x41, 0xd05}, "Cortex-A55"},
      {{0x41, 0xd07}, "Cortex-A57"},
      {{0x41, 0xd08}, "Cortex-A72"},
      {{0x41, 0xd09}, "Cortex-A73"},
      {{0x41, 0xd0a}, "Cortex-A75"},
      {{0x41, 0xd0b}, "Cortex-A76"},
      {{0x41, 0xd0c}, "Neoverse-N1"},
      {{0x41, 0xd0d}, "Cortex-A77"},
      {{0x41, 0xd40}, "Neoverse-V1"},
      {{0x41, 0xd41}, "Cortex-A78"},
      {{0x41, 0xd44}, "Cortex-X1"},
      {{0x41, 0xd46}, "Cortex-A510"},
      {{0x41, 0xd47}, "Cortex-A710"},
      {{0x41, 0xd48}, "Cortex-X2"},
      {{0x41, 0xd49}, "Neoverse-N2"},
      {{0x41, 0xd4d}, "Cortex-A715"},
      {{0x41, 0xd4e}, "Cortex-X3"},
      {{0x41, 0xd4f}, "Neoverse-V2"},
      {{0x41, 0xd81}, "Cortex-A720"},
      {{0x41, 0xd82}, "Cortex-X4"},
      {{0x41, 0xd84}, "Neoverse-V3"},
      {{0x41, 0xd8e}, "Neoverse-N3"},
      {{0x48, 0xd01}, "Kunpeng-920 (TSV110)"},
      {{0xc0, 0xac3}, "AmpereOne"}};
  auto it = parts.find({implementer, part});
  return it == parts.end() ? "" : it->second;
}

// What the DMI / Xen entries say about the platform; "" when they name no known hypervisor.
// `strict`: without the x86 "hypervisor" flag to confirm, cloud vendors' bare-metal
// instances ("Amazon EC2" / "c7g.metal") must not be called virtual.
std::string platform_hypervisor(const FileSystem& fs, bool strict) {
  if (auto t = fs.read_line("/sys/hypervisor/type"); t && !t->empty())
    return *t == "xen" ? "Xen" : *t;
  const std::string vendor = fs.read_line("/sys/class/dmi/id/sys_vendor").value_or("");
  const std::string product = fs.read_line("/sys/class/dmi/id/product_name").value_or("");
  auto has = [](const std::string& s, const char* what) {
    return s.find(what) != std::string::npos;
  };
  if (has(product, "KVM") || has(vendor, "KVM")) return "KVM";
  if (has(vendor, "QEMU")) return "QEMU";
  if (has(vendor, "VMware") || has(product, "VMware")) return "VMware";
  if (has(vendor, "Microsoft") && (!strict || has(product, "Virtual"))) return "Hyper-V";
  if (has(vendor, "innotek") || has(product, "VirtualBox")) return "VirtualBox";
  if (has(vendor, "Xen") || has(product, "HVM domU")) return "Xen";
  if (has(vendor, "Parallels")) return "Parallels";
  if (has(vendor, "BHYVE")) return "bhyve";
  const bool metal = product.size() >= 6 && product.compare(product.size() - 6, 6, ".metal") == 0;
  if (has(vendor, "Amazon EC2") && !(strict && metal)) return "Amazon EC2";
  if (has(vendor, "Google") && has(product, "Compute Engine")) return "Google";
  if (has(vendor, "OpenStack") || has(product, "OpenStack")) return "OpenStack";
  return "";
}

}  // namespace

bool CpuInfo::has(const std::string& feature) const {
  return std::binary_search(features.begin(), features.end(), feature);
}

CpuInfo probe_cpu(const FileSystem& fs) {
  CpuInfo info;
  info.arch = build_arch();
  const std::string sys = "/sys/devices/system/cpu";
  const auto blocks = parse_cpuinfo(fs.read("/proc/cpuinfo").value_or(""));

  // Which format: x86 has "flags", arm64 "Features" (fields, not the build, decide).
  std::set<std::string> flags;
  bool x86_format = false;
  std::vector<std::string> arm_models;
  for (const auto& b : blocks) {
    if (b.count("flags")) {
      x86_format = true;
      if (flags.empty())
        for (auto& f : split_ws(field(b, "flags"))) flags.insert(f);
      if (info.vendor.empty()) info.vendor = field(b, "vendor_id");
      if (info.model.empty()) info.model = field(b, "model name");
    } else if (b.count("Features") || b.count("CPU implementer")) {
      if (flags.empty())
        for (auto& f : split_ws(field(b, "Features"))) flags.insert(f);
      const auto impl = parse_int(field(b, "CPU implementer"), 16);
      const auto part = parse_int(field(b, "CPU part"), 16);
      if (impl && info.vendor.empty()) info.vendor = arm_implementer(*impl);
      // big.LITTLE parts are listed in order of first appearance: "Cortex-A55 + Cortex-A76".
      const std::string name = impl && part ? arm_part(*impl, *part) : "";
      if (!name.empty() &&
          std::find(arm_models.begin(), arm_models.end(), name) == arm_models.end())
        arm_models.push_back(name);
    }
  }
  if (!x86_format) {
    for (const auto& m : arm_models) info.model += (info.model.empty() ? "" : " + ") + m;
    // 32-bit ARM kernels and some vendors write a "model name"; better than nothing.
    if (info.model.empty() && !blocks.empty()) info.model = field(blocks[0], "model name");
  }
  for (const auto& f : flags) {
    auto it = feature_names().find(f);
    if (it != feature_names().end()) info.features.push_back(it->second);
  }
  std::sort(info.features.begin(), info.features.end());
  info.features.erase(std::unique(info.features.begin(), info.features.end()), info.features.end());

  // Online CPUs: the kernel's list, else the cpuN folders, else the cpuinfo blocks.
  std::vector<int> cpus = cpu_list_members(fs.read_line(sys + "/online").value_or(""));
  if (cpus.empty())
    for (const auto& n : fs.list(sys))
      if (int c = numbered(n, "cpu"); c >= 0 && c < kMaxCpus && cpus.size() < kMaxCpus)
        cpus.push_back(c);
  if (cpus.empty())
    for (int i = 0; i < static_cast<int>(blocks.size()); ++i) cpus.push_back(i);
  info.threads = static_cast<int>(cpus.size());

  // Physical cores: distinct (package, cluster, core) from sysfs topology. cluster_id is in the
  // key because on arm64 device-tree systems core_id restarts at 0 in every cluster.
  std::set<std::tuple<int64_t, int64_t, int64_t>> cores;
  std::set<int64_t> packages;
  for (int c : cpus) {
    const std::string t = sys + "/cpu" + std::to_string(c) + "/topology/";
    const auto pkg = fs.read_int(t + "physical_package_id");
    const auto core = fs.read_int(t + "core_id");
    if (!pkg || !core) continue;
    const auto cluster = fs.read_int(t + "cluster_id").value_or(-1);
    cores.insert({*pkg, cluster, *core});
    packages.insert(*pkg);
  }
  if (cores.empty()) {  // no sysfs topology: /proc/cpuinfo "physical id" / "core id" (x86)
    for (const auto& b : blocks) {
      const auto pkg = parse_int(field(b, "physical id"));
      const auto core = parse_int(field(b, "core id"));
      if (!pkg || !core) continue;
      cores.insert({*pkg, -1, *core});
      packages.insert(*pkg);
    }
  }
  info.cores = cores.empty() ? info.threads : static_cast<int>(cores.size());
  info.sockets = !packages.empty() ? static_cast<int>(packages.size()) : (info.threads > 0 ? 1 : 0);

  // Caches, as cpu0 sees them; instances = distinct sharing sets over the online CPUs.
  if (!cpus.empty()) {
    const std::string c0 = sys + "/cpu" + std::to_string(cpus[0]) + "/cache/";
    for (const auto& idx : fs.list(c0)) {
      const int i = numbered(idx, "index");
      if (i < 0 || i >= kMaxCacheIndices) continue;
      CpuCache cache;
      cache.level = static_cast<int>(fs.read_int(c0 + idx + "/level").value_or(0));
      if (cache.level <= 0) continue;
      cache.type = fs.read_line(c0 + idx + "/type").value_or("");
      cache.size_bytes = parse_size(fs.read_line(c0 + idx + "/size").value_or(""));
      if (cache.size_bytes <= 0) continue;  // a cache of unknown size says nothing to `plan`
      std::set<std::string> sharing;
      for (int c : cpus)
        if (auto l = fs.read_line(sys + "/cpu" + std::to_string(c) + "/cache/" + idx +
                                  "/shared_cpu_list"))
          sharing.insert(*l);
      cache.instances = static_cast<int>(sharing.size());
      info.caches.push_back(cache);
    }
  }

  int nodes = 0;
  for (const auto& n : fs.list("/sys/devices/system/node"))
    if (numbered(n, "node") >= 0 && nodes < kMaxNodes) ++nodes;
  info.numa_nodes = nodes > 0 ? nodes : (info.threads > 0 ? 1 : 0);

  // Frequencies in kHz (cpufreq) → MHz; without cpufreq (VMs) the cpuinfo "cpu MHz".
  const std::string freq = sys + "/cpu" + std::to_string(cpus.empty() ? 0 : cpus[0]) + "/cpufreq/";
  info.governor = fs.read_line(freq + "scaling_governor").value_or("");
  if (auto khz = fs.read_int(freq + "scaling_cur_freq"); khz && *khz > 0)
    info.cur_mhz = *khz / 1000;
  if (auto khz = fs.read_int(freq + "cpuinfo_max_freq"); khz && *khz > 0)
    info.max_mhz = *khz / 1000;
  if (info.cur_mhz < 0 && !blocks.empty()) {
    const std::string mhz = field(blocks[0], "cpu MHz");
    char* end = nullptr;
    const double v = std::strtod(mhz.c_str(), &end);
    if (end != mhz.c_str() && v > 0 && v < 1e6) info.cur_mhz = static_cast<int64_t>(v + 0.5);
  }

  // Virtualized: the x86 "hypervisor" flag is authoritative; the platform strings name it.
  // arm64 has no such flag, so there only the platform strings can tell.
  if (x86_format) {
    if (flags.count("hypervisor")) {
      info.hypervisor = platform_hypervisor(fs, false);
      // Guests without DMI (microVMs, some clouds) still show the hypervisor's paravirtual clock.
      if (info.hypervisor.empty()) {
        const auto clocks = split_ws(
            fs.read_line("/sys/devices/system/clocksource/clocksource0/available_clocksource")
                .value_or(""));
        auto has_clock = [&](const char* c) {
          return std::find(clocks.begin(), clocks.end(), c) != clocks.end();
        };
        if (has_clock("kvm-clock")) info.hypervisor = "KVM";
        else if (has_clock("hyperv_clocksource_tsc_page"))
          info.hypervisor = "Hyper-V";
        else if (has_clock("xen"))
          info.hypervisor = "Xen";
      }
      if (info.hypervisor.empty()) info.hypervisor = "unknown hypervisor";
    }
  } else {
    info.hypervisor = platform_hypervisor(fs, true);
  }

  // Throttle counts: core counts are shared by a core's threads and package counts by the
  // package's CPUs, so each is counted once per core / package, not once per CPU.
  std::map<std::string, int64_t> counted;
  for (int c : cpus) {
    const std::string base = sys + "/cpu" + std::to_string(c);
    const std::string t = base + "/topology/";
    const auto pkg = fs.read_int(t + "physical_package_id");
    const auto core = fs.read_int(t + "core_id");
    const std::string pkg_key = pkg ? "p" + std::to_string(*pkg) : "cpu" + std::to_string(c);
    const std::string core_key =
        pkg && core ? pkg_key + "c" + std::to_string(*core) : "cpu" + std::to_string(c);
    if (auto v = fs.read_int(base + "/thermal_throttle/core_throttle_count"); v && *v >= 0)
      counted["core " + core_key] = *v;
    if (auto v = fs.read_int(base + "/thermal_throttle/package_throttle_count"); v && *v >= 0)
      counted["package " + pkg_key] = *v;
  }
  if (!counted.empty()) {
    info.throttle_events = 0;
    for (const auto& [k, v] : counted) info.throttle_events += v;
  }
  return info;
}

MemoryInfo probe_memory(const FileSystem& fs) {
  MemoryInfo mem;
  std::map<std::string, int64_t> kb;
  const std::string text = fs.read("/proc/meminfo").value_or("");
  size_t i = 0;
  while (i < text.size()) {
    size_t j = text.find('\n', i);
    if (j == std::string::npos) j = text.size();
    const std::string line = text.substr(i, j - i);
    i = j + 1;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    // "MemTotal:       24683584 kB": the kernel writes kB (KiB) for every size field.
    // Bounded at 2^50 kB (1 EiB) so sums of a few fields cannot overflow.
    if (auto v = parse_int(line.substr(colon + 1)); v && *v >= 0 && *v <= (int64_t{1} << 50))
      kb[trim(line.substr(0, colon))] = *v;
  }
  auto bytes = [&](const char* key) -> int64_t {
    auto it = kb.find(key);
    return it == kb.end() ? -1 : it->second * 1024;
  };
  mem.total_bytes = bytes("MemTotal");
  mem.available_bytes = bytes("MemAvailable");
  if (mem.available_bytes < 0 && kb.count("MemFree")) {  // kernels before 3.14
    mem.available_bytes = bytes("MemFree") + std::max<int64_t>(bytes("Buffers"), 0) +
                          std::max<int64_t>(bytes("Cached"), 0);
  }
  mem.swap_total_bytes = bytes("SwapTotal");
  mem.swap_free_bytes = bytes("SwapFree");
  return mem;
}

}  // namespace polyinfer::hw
