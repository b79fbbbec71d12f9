// `polyinfer doctor`: what compute is here (CPU, memory, NVIDIA, Vulkan, OpenCL, NPUs), which
// providers can use it, and each known problem with its cause and fix. The probes and the checks
// are the library's (src/hw/), the same code the providers' probe() runs. docs/doctor.md documents
// the JSON schema and every diagnosis id.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "cli/cli.h"
#include "cli/json.h"
#include "hw/cuda_libs.h"
#include "hw/report.h"
#include "runtime/provider.h"

namespace polyinfer::cli {

namespace {

std::string bytes_str(int64_t b) {
  if (b < 0) return "not exposed";
  char buf[32];
  const double v = static_cast<double>(b);
  if (b >= (int64_t{1} << 30)) std::snprintf(buf, sizeof buf, "%.1f GiB", v / (1 << 30));
  else if (b >= (int64_t{1} << 20))
    std::snprintf(buf, sizeof buf, "%.0f MiB", v / (1 << 20));
  else
    std::snprintf(buf, sizeof buf, "%.0f KiB", v / 1024);
  return buf;
}

// A provider as doctor lists it: the built-in ones with their probe(), and the GPU providers this
// build was made without, with what their software stack would allow.
struct ProviderRow {
  std::string name;
  bool built = false;
  bool usable = false;
  std::string reason;  // why not usable
  std::string detail;  // what it runs on
};

std::vector<ProviderRow> provider_rows(const hw::SystemReport& r) {
  std::vector<ProviderRow> rows;
  for (const auto& p : available_providers())
    rows.push_back(
        {p.name, true, p.usable, p.reason, p.device + (p.detail.empty() ? "" : ": " + p.detail)});
  const std::vector<std::string> built = provider_names();
  // A GPU provider this binary was built without: how to get it, and what the stack here allows.
  auto add_missing = [&](const std::string& name, const char* how, const hw::StackCheck& stack) {
    for (const auto& b : built)
      if (b == name) return;
    ProviderRow row{name, false, false, "", ""};
    row.reason = std::string("not in this build (") + how + "); the " +
                 (name == "cuda" ? "NVIDIA" : "Vulkan") +
                 " stack here: " + (stack.usable ? "ready (" + stack.detail + ")" : stack.reason);
    rows.push_back(row);
  };
  add_missing("cuda", "configure with -DPOLYINFER_CUDA=ON, which needs the CUDA toolkit",
              hw::check_cuda_stack(r.nvidia));
  add_missing("vulkan",
              "configure with -DPOLYINFER_VULKAN=ON, which needs libvulkan-dev and glslang-tools",
              hw::check_vulkan_stack(r.vulkan));
  return rows;
}

std::string mark(bool ok) { return ok ? "✓" : "✗"; }

void print_text(const hw::SystemReport& r, const std::vector<ProviderRow>& providers,
                const std::vector<hw::Diagnosis>& diags, double probe_ms) {
  std::ostringstream o;
  const auto& c = r.cpu;
  o << "CPU\n  " << mark(c.threads > 0) << " " << (c.model.empty() ? "model not exposed" : c.model)
    << " (" << (c.vendor.empty() ? "vendor not exposed" : c.vendor) << ", " << c.arch << ")\n";
  o << "    " << c.sockets << (c.sockets == 1 ? " socket, " : " sockets, ") << c.cores << " cores, "
    << c.threads << " threads, " << c.numa_nodes
    << (c.numa_nodes == 1 ? " NUMA node" : " NUMA nodes") << "\n    ISA:";
  if (c.features.empty()) o << " none of interest exposed";
  for (const auto& f : c.features) o << " " << f;
  o << "\n";
  if (!c.caches.empty()) {
    o << "    caches:";
    for (const auto& k : c.caches) {
      const std::string kind = k.type == "Data" ? "d" : k.type == "Instruction" ? "i" : "";
      o << " L" << k.level << kind << " " << bytes_str(k.size_bytes) << " x" << k.instances << ";";
    }
    o.seekp(-1, std::ios_base::cur);
    o << "\n";
  }
  o << "    frequency: ";
  if (c.cur_mhz > 0) o << c.cur_mhz << " MHz";
  else
    o << "not exposed";
  if (c.max_mhz > 0) o << " of " << c.max_mhz << " MHz";
  if (!c.governor.empty()) o << " (governor " << c.governor << ")";
  if (!c.hypervisor.empty()) o << "; virtual machine (" << c.hypervisor << ")";
  o << "\n";

  o << "Memory\n  " << mark(r.memory.total_bytes > 0) << " " << bytes_str(r.memory.total_bytes)
    << " total, " << bytes_str(r.memory.available_bytes) << " available";
  if (r.memory.swap_total_bytes >= 0)
    o << "; swap " << bytes_str(r.memory.swap_total_bytes) << " ("
      << bytes_str(r.memory.swap_free_bytes) << " free)";
  o << "\n";

  const auto& nv = r.nvidia;
  const hw::StackCheck cuda = hw::check_cuda_stack(nv);
  o << "NVIDIA\n";
  if (nv.gpus.empty()) o << "  " << mark(false) << " " << cuda.reason << "\n";
  for (const auto& g : nv.gpus) {
    o << "  " << mark(true) << " GPU " << g.index << ": " << g.name;
    if (g.cc_major >= 0) o << ", compute capability " << g.cc_major << "." << g.cc_minor;
    o << ", " << bytes_str(g.memory_total_bytes) << " (" << bytes_str(g.memory_free_bytes)
      << " free)";
    if (g.temperature_c >= 0) o << ", " << g.temperature_c << " C";
    if (g.power_w >= 0) o << ", " << static_cast<int>(g.power_w) << " W";
    if (g.power_limit_w > 0) o << " of " << static_cast<int>(g.power_limit_w) << " W";
    if (g.utilization_pct >= 0) o << ", " << g.utilization_pct << "% busy";
    if (g.sm_clock_mhz >= 0) o << ", SM " << g.sm_clock_mhz << " MHz";
    if (g.sm_clock_max_mhz > 0) o << " of " << g.sm_clock_max_mhz;
    o << "\n";
  }
  if (!nv.driver_version.empty() || nv.cuda_driver_api > 0)
    o << "    driver " << (nv.driver_version.empty() ? "version unknown" : nv.driver_version)
      << (nv.cuda_driver_api > 0 ? ", CUDA " + hw::cuda_version_string(nv.cuda_driver_api) : "")
      << "\n";
  if (!nv.gpus.empty() && !cuda.usable) o << "    " << mark(false) << " " << cuda.reason << "\n";
  for (const hw::LibraryVersion* lib : {&nv.cudart, &nv.cublas, &nv.cudnn}) {
    o << "    " << lib->name << ": built with " << (lib->built.empty() ? "none" : lib->built)
      << ", here ";
    if (!lib->loaded.empty()) o << lib->loaded << " (" << lib->path << ")";
    else
      o << "does not load";
    o << "\n";
  }

  o << "Vulkan\n";
  const hw::StackCheck vk = hw::check_vulkan_stack(r.vulkan);
  if (!vk.usable) o << "  " << mark(false) << " " << vk.reason << "\n";
  // Numbered as `--providers vulkan:N` counts them (the loader's enumeration order).
  for (size_t i = 0; i < r.vulkan.devices.size(); ++i) {
    const hw::VulkanDevice& d = r.vulkan.devices[i];
    o << "  " << mark(d.type != "cpu") << " vulkan:" << i << " " << d.name << " (" << d.type
      << (d.type == "cpu" ? ": software, not a GPU" : "") << "), Vulkan " << d.api_version;
    if (!d.driver_name.empty()) o << ", driver " << d.driver_name << " " << d.driver_version;
    else
      o << ", driver " << d.driver_version;
    if (d.subgroup_size > 0) o << ", subgroup " << d.subgroup_size;
    o << ", fp16 " << (d.fp16 ? "yes" : "no") << ", int8 " << (d.int8 ? "yes" : "no");
    int64_t local = 0;
    for (const auto& h : d.heaps)
      if (h.device_local) local += h.size_bytes;
    if (local > 0) o << ", " << bytes_str(local) << " device-local";
    o << "\n";
  }

  o << "OpenCL\n";
  const hw::StackCheck cl = hw::check_opencl_stack(r.opencl);
  if (!cl.usable) o << "  " << mark(false) << " " << cl.reason << "\n";
  for (const auto& d : r.opencl.devices) {
    o << "  " << mark(true) << " " << d.name << " (" << d.type << ", " << d.platform << ", "
      << d.version;
    if (d.compute_units > 0) o << ", " << d.compute_units << " compute units";
    if (d.global_memory_bytes > 0) o << ", " << bytes_str(d.global_memory_bytes);
    o << ")\n";
  }

  o << "NPUs and other accelerators\n";
  if (r.npus.empty()) o << "  none found\n";
  for (const auto& n : r.npus)
    o << "  " << mark(n.module_loaded) << " " << n.kind << " (" << n.evidence << "), driver "
      << n.module << (n.module_loaded ? " loaded" : " NOT loaded")
      << "; no polyinfer provider yet, use " << n.toolchain << "\n";

  o << "Providers\n";
  for (const auto& p : providers) {
    o << "  " << mark(p.usable) << " " << p.name;
    if (p.usable) o << " (" << p.detail << ")";
    else
      o << ": " << p.reason;
    o << "\n";
  }

  o << "Diagnoses\n";
  if (diags.empty()) o << "  ✓ nothing to report\n";
  for (const auto& d : diags) {
    o << "  "
      << (d.severity == "error"     ? "✗"
          : d.severity == "warning" ? "!"
                                    : "i")
      << " " << d.severity << " [" << d.id << "] " << d.cause << "\n      fix: " << d.fix << "\n";
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "(probed in %.0f ms)\n", probe_ms);
  o << buf;
  std::cout << o.str();
}

void print_json(const hw::SystemReport& r, const std::vector<ProviderRow>& providers,
                const std::vector<hw::Diagnosis>& diags) {
  JsonWriter j;
  j.begin_object().key("polyinfer").value(version());
  const auto& c = r.cpu;
  j.key("cpu")
      .begin_object()
      .key("arch")
      .value(c.arch)
      .key("vendor")
      .value(c.vendor)
      .key("model")
      .value(c.model)
      .key("sockets")
      .value(c.sockets)
      .key("cores")
      .value(c.cores)
      .key("threads")
      .value(c.threads)
      .key("features")
      .strings(c.features)
      .key("caches")
      .begin_array();
  for (const auto& k : c.caches)
    j.begin_object()
        .key("level")
        .value(k.level)
        .key("type")
        .value(k.type)
        .key("size_bytes")
        .value(k.size_bytes)
        .key("instances")
        .value(k.instances)
        .end_object();
  j.end_array()
      .key("numa_nodes")
      .value(c.numa_nodes)
      .key("governor")
      .value(c.governor)
      .key("cur_mhz")
      .value_or_null(c.cur_mhz)
      .key("max_mhz")
      .value_or_null(c.max_mhz)
      .key("hypervisor")
      .value(c.hypervisor)
      .key("throttle_events")
      .value_or_null(c.throttle_events)
      .end_object();
  j.key("memory")
      .begin_object()
      .key("total_bytes")
      .value_or_null(r.memory.total_bytes)
      .key("available_bytes")
      .value_or_null(r.memory.available_bytes)
      .key("swap_total_bytes")
      .value_or_null(r.memory.swap_total_bytes)
      .key("swap_free_bytes")
      .value_or_null(r.memory.swap_free_bytes)
      .end_object();

  const auto& nv = r.nvidia;
  j.key("gpus").begin_array();
  for (const auto& g : nv.gpus) {
    j.begin_object()
        .key("vendor")
        .value("NVIDIA")
        .key("index")
        .value(g.index)
        .key("name")
        .value(g.name)
        .key("pci_bus")
        .value(g.pci_bus)
        .key("compute_capability");
    if (g.cc_major >= 0) j.value(std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor));
    else
      j.null();
    j.key("memory_total_bytes")
        .value_or_null(g.memory_total_bytes)
        .key("memory_free_bytes")
        .value_or_null(g.memory_free_bytes)
        .key("temperature_c")
        .value_or_null(g.temperature_c)
        .key("power_w")
        .value_or_null(g.power_w)
        .key("power_limit_w")
        .value_or_null(g.power_limit_w)
        .key("utilization_pct")
        .value_or_null(g.utilization_pct)
        .key("sm_clock_mhz")
        .value_or_null(g.sm_clock_mhz)
        .key("sm_clock_max_mhz")
        .value_or_null(g.sm_clock_max_mhz)
        .key("mem_clock_mhz")
        .value_or_null(g.mem_clock_mhz)
        .end_object();
  }
  j.end_array();
  j.key("nvidia")
      .begin_object()
      .key("pci_devices")
      .strings(nv.pci_devices)
      .key("kernel_module")
      .value(nv.kernel_module)
      .key("libcuda_loaded")
      .value(nv.libcuda_loaded)
      .key("libcuda_error")
      .value(nv.libcuda_error)
      .key("driver_version")
      .value(nv.driver_version)
      .key("cuda_driver_version")
      .value(hw::cuda_version_string(nv.cuda_driver_api))
      .key("nvml_loaded")
      .value(nv.nvml_loaded)
      .key("nvml_error")
      .value(nv.nvml_error)
      .key("libraries")
      .begin_array();
  for (const hw::LibraryVersion* lib : {&nv.cudart, &nv.cublas, &nv.cudnn})
    j.begin_object()
        .key("name")
        .value(lib->name)
        .key("built")
        .value(lib->built)
        .key("loaded")
        .value(lib->loaded)
        .key("path")
        .value(lib->path)
        .key("error")
        .value(lib->error)
        .end_object();
  j.end_array().end_object();

  j.key("vulkan")
      .begin_object()
      .key("loader_found")
      .value(r.vulkan.loader_found)
      .key("error")
      .value(r.vulkan.error)
      .key("instance_version")
      .value(r.vulkan.instance_version)
      .key("devices")
      .begin_array();
  for (const auto& d : r.vulkan.devices) {
    j.begin_object()
        .key("name")
        .value(d.name)
        .key("type")
        .value(d.type)
        .key("api_version")
        .value(d.api_version)
        .key("driver_version")
        .value(d.driver_version)
        .key("driver_name")
        .value(d.driver_name)
        .key("vendor_id")
        .value(d.vendor_id)
        .key("device_id")
        .value(d.device_id)
        .key("heaps")
        .begin_array();
    for (const auto& h : d.heaps)
      j.begin_object()
          .key("size_bytes")
          .value(h.size_bytes)
          .key("device_local")
          .value(h.device_local)
          .end_object();
    j.end_array()
        .key("subgroup_size")
        .value_or_null(d.subgroup_size)
        .key("fp16")
        .value(d.fp16)
        .key("int8")
        .value(d.int8)
        .end_object();
  }
  j.end_array().end_object();

  j.key("opencl")
      .begin_object()
      .key("loader_found")
      .value(r.opencl.loader_found)
      .key("error")
      .value(r.opencl.error)
      .key("devices")
      .begin_array();
  for (const auto& d : r.opencl.devices)
    j.begin_object()
        .key("platform")
        .value(d.platform)
        .key("name")
        .value(d.name)
        .key("type")
        .value(d.type)
        .key("version")
        .value(d.version)
        .key("driver_version")
        .value(d.driver_version)
        .key("compute_units")
        .value_or_null(d.compute_units)
        .key("global_memory_bytes")
        .value_or_null(d.global_memory_bytes)
        .end_object();
  j.end_array().end_object();

  j.key("npus").begin_array();
  for (const auto& n : r.npus)
    j.begin_object()
        .key("kind")
        .value(n.kind)
        .key("node")
        .value(n.node)
        .key("module")
        .value(n.module)
        .key("module_loaded")
        .value(n.module_loaded)
        .key("evidence")
        .value(n.evidence)
        .key("toolchain")
        .value(n.toolchain)
        .end_object();
  j.end_array();

  j.key("providers").begin_array();
  for (const auto& p : providers)
    j.begin_object()
        .key("name")
        .value(p.name)
        .key("built")
        .value(p.built)
        .key("usable")
        .value(p.usable)
        .key("reason")
        .value(p.reason)
        .key("detail")
        .value(p.detail)
        .end_object();
  j.end_array();

  j.key("diagnoses").begin_array();
  for (const auto& d : diags)
    j.begin_object()
        .key("id")
        .value(d.id)
        .key("severity")
        .value(d.severity)
        .key("cause")
        .value(d.cause)
        .key("fix")
        .value(d.fix)
        .end_object();
  j.end_array().end_object();
  std::cout << j.str() << "\n";
}

}  // namespace

int cmd_doctor(const std::vector<std::string>& argv) {
  const Args args = parse_args(argv, {"json", "help"}, {"root"}, "doctor");
  if (args.flag("help")) {
    std::cout << "usage: polyinfer doctor [--json] [--root DIR]\n"
                 "  what compute is here, which providers can use it, and each problem found with\n"
                 "  its cause and fix (docs/doctor.md: the JSON schema and every diagnosis)\n"
                 "  --root DIR  read /proc, /sys and /dev under DIR (a captured or faked system)\n";
    return kExitOk;
  }
  const hw::FileSystem fs(args.get("root", "/"));
  if (args.flag("root") && fs.list("/").empty())
    throw UsageError("--root " + args.get("root") + ": not a folder, or empty");
  const auto t0 = std::chrono::steady_clock::now();
  const hw::SystemReport report = hw::probe_system(fs, hw::system_loader());
  const double probe_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const auto providers = provider_rows(report);
  const auto diags = hw::diagnose(report, provider_names());
  if (args.flag("json")) print_json(report, providers, diags);
  else
    print_text(report, providers, diags, probe_ms);
  return kExitOk;
}

}  // namespace polyinfer::cli
