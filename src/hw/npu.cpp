// The NPU probe (hw/report.h): known accelerators, found by what the kernel shows of them.
//
// Four kinds of evidence, looked at in this order, one entry per device:
//   1. the Linux accel subsystem (/sys/class/accel/accelN, its driver link, /dev/accel/accelN);
//   2. vendor device nodes in /dev (rknpu, davinciN, hailoN, apex_N, hlN, fastrpc-*) and a DRM
//      render node driven by rknpu;
//   3. the PCI bus (vendor/device/class), which shows a device even when no driver is bound —
//      the "hardware present, kernel module not loaded" case doctor must explain;
//   4. the device tree (Rockchip SoCs with an NPU) and the USB bus (Coral USB).
// module_loaded is true when /sys/module/MODULE exists, when a driver is bound to the device, or
// when the kernel itself registered the node (/sys/class/*/NODE exists: built-in drivers have
// no /sys/module entry). A node with none of these (a stale or bind-mounted /dev entry) is
// reported with module_loaded = false.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <optional>

#include "hw/report.h"

namespace polyinfer::hw {

namespace {

constexpr size_t kMaxEntries = 4096;  // bound on directory entries read from outside
constexpr size_t kMaxDevices = 64;    // bound on NPUs reported

struct Kind {
  const char* kind;
  std::vector<const char*> modules;  // kernel module names; the first is reported when none loaded
  const char* toolchain;
};

const Kind kRockchip{
    "Rockchip RKNPU", {"rknpu", "rocket"}, "RKNN-Toolkit2 / rknn-toolkit-lite2 (librknnrt)"};
const Kind kIntelNpu{"Intel NPU", {"intel_vpu"}, "OpenVINO (NPU plugin)"};
const Kind kAmdXdna{"AMD XDNA (Ryzen AI)", {"amdxdna"}, "Ryzen AI Software / XRT"};
const Kind kGaudi{"Intel Gaudi", {"habanalabs"}, "SynapseAI (Intel Gaudi software)"};
const Kind kQaic{"Qualcomm Cloud AI 100", {"qaic"}, "Qualcomm Cloud AI SDK"};
// Ascend's driver is a family of modules (drv_davinci_intf_host, drv_devmng_host, ...); the
// name reported when none is loaded is the family's, as `lsmod | grep drv_davinci` finds it.
const Kind kAscend{
    "Huawei Ascend",
    {"drv_davinci", "drv_davinci_intf_host", "drv_davinci_intf", "davinci", "drv_devmng_host"},
    "CANN (ascend-toolkit)"};
const Kind kCoralUsb{"Google Coral Edge TPU (USB)", {}, "libedgetpu + TensorFlow Lite"};
const Kind kHailo{"Hailo", {"hailo_pci"}, "HailoRT"};
const Kind kCoral{"Google Coral Edge TPU", {"apex", "gasket"}, "libedgetpu + TensorFlow Lite"};
const Kind kHexagon{"Qualcomm Hexagon", {"fastrpc"}, "Qualcomm QNN / SNPE"};

// The accel driver names polyinfer knows ("ivpu" is intel_vpu's source-tree name).
const Kind* accel_kind(const std::string& driver) {
  if (driver == "intel_vpu" || driver == "ivpu") return &kIntelNpu;
  if (driver == "amdxdna") return &kAmdXdna;
  if (driver == "habanalabs") return &kGaudi;
  if (driver == "qaic") return &kQaic;
  if (driver == "rocket") return &kRockchip;  // the mainline Rockchip NPU driver (Linux 6.18)
  return nullptr;
}

struct Found {
  NpuDevice dev;
  std::string device_id;  // the sysfs device (PCI address, platform name) when known
};

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool starts_with(const std::string& s, const std::string& p) {
  return s.compare(0, p.size(), p) == 0;
}

// "davinci3" with prefix "davinci" → true; "davinci_manager" → false.
bool numbered(const std::string& name, const std::string& prefix) {
  if (name.size() <= prefix.size() || !starts_with(name, prefix)) return false;
  return std::all_of(name.begin() + static_cast<std::ptrdiff_t>(prefix.size()), name.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
}

class Probe {
 public:
  explicit Probe(const FileSystem& fs) : fs_(fs) {
    classes_ = fs_.list("/sys/class");
    if (classes_.size() > kMaxEntries) classes_.resize(kMaxEntries);
  }

  // The loaded module among `k.modules`, else the first one.
  std::string module_of(const Kind& k) const {
    for (const char* m : k.modules)
      if (fs_.exists(std::string("/sys/module/") + m)) return m;
    return k.modules.empty() ? "" : k.modules[0];
  }
  bool module_present(const std::string& m) const {
    return !m.empty() && fs_.exists("/sys/module/" + m);
  }
  // The kernel registered /dev/NAME when some /sys/class/CLASS/NAME exists.
  bool registered(const std::string& dev_name) const {
    for (const auto& c : classes_)
      if (fs_.exists("/sys/class/" + c + "/" + dev_name)) return true;
    return false;
  }

  // ", PCI [8086:643e]" when `dev` (a sysfs device folder) is a PCI function; "" otherwise.
  std::string pci_ids(const std::string& dev) const {
    const auto v = fs_.read_int(dev + "/vendor");
    const auto d = fs_.read_int(dev + "/device");
    if (!v || !d || *v < 0 || *v > 0xffff || *d < 0 || *d > 0xffff) return "";
    char ids[32];
    std::snprintf(ids, sizeof ids, ", PCI [%04x:%04x]", static_cast<unsigned>(*v),
                  static_cast<unsigned>(*d));
    return ids;
  }

  Found* first_of(const Kind& k) {
    for (auto& f : out_)
      if (f.dev.kind == k.kind) return &f;
    return nullptr;
  }

  bool has_kind(const Kind& k) const {
    return std::any_of(out_.begin(), out_.end(),
                       [&](const Found& f) { return f.dev.kind == k.kind; });
  }
  bool has_device(const std::string& id) const {
    return !id.empty() &&
           std::any_of(out_.begin(), out_.end(), [&](const Found& f) { return f.device_id == id; });
  }

  void add(const Kind* k, const std::string& fallback_kind, const std::string& node,
           std::string module, bool loaded, const std::string& evidence,
           const std::string& device_id = "") {
    if (out_.size() >= kMaxDevices) return;
    Found f;
    f.dev.kind = k ? k->kind : fallback_kind;
    f.dev.node = node;
    f.dev.module = std::move(module);
    f.dev.module_loaded = loaded;
    f.dev.evidence = evidence;
    f.dev.toolchain = k ? k->toolchain : "";
    f.device_id = device_id;
    out_.push_back(std::move(f));
  }

  // A /dev node of a known kind: loaded when its module is, or the kernel registered the node.
  void add_node(const Kind& k, const std::string& dev_name, std::string evidence = "") {
    const std::string node = "/dev/" + dev_name;
    const std::string module = module_of(k);
    const bool reg = registered(dev_name);
    const bool loaded = module_present(module) || reg;
    if (evidence.empty()) evidence = node;
    if (!loaded) evidence += " (no loaded driver registered it)";
    add(&k, "", node, module, loaded, evidence);
  }

  void scan_accel() {
    auto names = fs_.list("/sys/class/accel");
    for (size_t i = 0; i < names.size() && i < kMaxEntries; ++i) {
      const std::string& n = names[i];
      if (!numbered(n, "accel")) continue;
      const std::string dev = "/sys/class/accel/" + n + "/device";
      const auto driver = fs_.link_name(dev + "/driver");
      const std::string device_id = fs_.link_name(dev).value_or("");
      const std::string node = fs_.exists("/dev/accel/" + n) ? "/dev/accel/" + n : "";
      const Kind* k = driver ? accel_kind(*driver) : nullptr;
      std::string module = k ? module_of(*k) : driver.value_or("");
      if (k == &kRockchip) module = "rocket";
      std::string ev =
          node.empty() ? "/sys/class/accel/" + n + " (no /dev/accel/" + n + " node)" : node;
      ev += driver ? " (driver " + *driver : " (no driver";
      ev += device_id.empty() ? "" : ", device " + device_id;
      ev += pci_ids(dev) + ")";
      add(k, driver ? "accel device (driver " + *driver + ")" : "accel device", node, module,
          driver.has_value() || module_present(module), ev, device_id);
    }
    // Nodes without a sysfs entry (a container's /dev without the host's /sys).
    auto nodes = fs_.list("/dev/accel");
    for (size_t i = 0; i < nodes.size() && i < kMaxEntries; ++i) {
      const std::string node = "/dev/accel/" + nodes[i];
      if (!numbered(nodes[i], "accel")) continue;
      if (std::any_of(out_.begin(), out_.end(), [&](const Found& f) { return f.dev.node == node; }))
        continue;
      add(nullptr, "accel device", node, "", false, node + " (no /sys/class/accel entry)");
    }
  }

  void scan_dev_nodes() {
    auto names = fs_.list("/dev");
    if (names.size() > kMaxEntries) names.resize(kMaxEntries);
    bool davinci = false;
    std::vector<std::string> fastrpc;
    for (const auto& n : names) {
      if (n == "rknpu") add_node(kRockchip, n);
      else if (numbered(n, "davinci")) {
        add_node(kAscend, n);
        davinci = true;
      } else if (numbered(n, "hailo"))
        add_node(kHailo, n);
      else if (numbered(n, "apex_"))
        add_node(kCoral, n);
      else if (numbered(n, "hl"))
        add_node(kGaudi, n);  // habanalabs before the accel subsystem
      else if (starts_with(n, "fastrpc-"))
        fastrpc.push_back(n);
    }
    // davinci_manager is the driver's control node: a device only when no davinciN is there.
    if (!davinci && std::find(names.begin(), names.end(), "davinci_manager") != names.end())
      add_node(kAscend, "davinci_manager", "/dev/davinci_manager (no /dev/davinciN device node)");
    // One Hexagon entry for the SoC: the compute DSP (cdsp) runs neural networks; the audio and
    // sensor DSPs' nodes are listed as evidence only.
    if (!fastrpc.empty()) {
      auto cdsp = std::find_if(fastrpc.begin(), fastrpc.end(),
                               [](const std::string& n) { return starts_with(n, "fastrpc-cdsp"); });
      std::string ev;
      for (const auto& n : fastrpc) ev += (ev.empty() ? "/dev/" : ", /dev/") + n;
      add_node(kHexagon, cdsp != fastrpc.end() ? *cdsp : fastrpc[0], ev);
    }
  }

  // The vendor rknpu driver as a DRM device (/dev/dri/renderD129 on RK3588 BSP kernels).
  // With /dev/rknpu already found, the render node only adds evidence (and shows the driver bound).
  void scan_drm() {
    auto names = fs_.list("/sys/class/drm");
    if (names.size() > kMaxEntries) names.resize(kMaxEntries);
    std::vector<std::string> candidates;  // render nodes first: that is what librknnrt opens
    for (const auto& n : names)
      if (numbered(n, "renderD")) candidates.push_back(n);
    for (const auto& n : names)
      if (numbered(n, "card")) candidates.push_back(n);
    for (const auto& n : candidates) {
      const auto driver = fs_.link_name("/sys/class/drm/" + n + "/device/driver");
      if (!driver || lower(*driver) != "rknpu") continue;
      const std::string node = "/dev/dri/" + n;
      const std::string ev = node + " (DRM driver " + *driver +
                             (fs_.exists(node) ? ")" : "; the node itself is missing)");
      if (Found* f = first_of(kRockchip)) {
        f->dev.evidence += "; " + ev;
        f->dev.module_loaded = true;
      } else {
        add(&kRockchip, "", fs_.exists(node) ? node : "", "rknpu", true, ev);
      }
      return;
    }
  }

  struct PciMatch {
    const Kind* kind;
    uint32_t vendor;
    std::vector<uint32_t> devices;  // empty: any device of the vendor with a matching class
    std::vector<uint32_t> classes;  // class >> 8 (base class + subclass), e.g. 0x1200
  };

  void scan_pci() {
    static const std::vector<PciMatch> table = {
        // Intel NPU (Meteor Lake and later): a "processing accelerator" (class 0x1200).
        {&kIntelNpu, 0x8086, {}, {0x1200}},
        // AMD XDNA (Phoenix/Hawk Point 0x1502, Strix and later 0x17f0): a signal processing
        // controller on early firmware, a processing accelerator later.
        {&kAmdXdna, 0x1022, {0x1502, 0x17f0}, {0x1180, 0x1200}},
        {&kGaudi, 0x1da3, {}, {0x1200, 0x1000}},
        {&kQaic, 0x17cb, {0xa100}, {}},
        {&kAscend, 0x19e5, {0xd100, 0xd500, 0xd801, 0xd802, 0xd803}, {}},
        {&kHailo, 0x1e60, {}, {}},
        {&kCoral, 0x1ac1, {0x089a}, {}},
    };
    auto names = fs_.list("/sys/bus/pci/devices");
    if (names.size() > kMaxEntries) names.resize(kMaxEntries);
    for (const auto& addr : names) {
      const std::string d = "/sys/bus/pci/devices/" + addr;
      const auto vendor = fs_.read_int(d + "/vendor");
      const auto device = fs_.read_int(d + "/device");
      const auto cls = fs_.read_int(d + "/class");
      if (!vendor || !device) continue;
      for (const auto& m : table) {
        if (static_cast<uint32_t>(*vendor) != m.vendor) continue;
        if (!m.devices.empty() && std::find(m.devices.begin(), m.devices.end(),
                                            static_cast<uint32_t>(*device)) == m.devices.end())
          continue;
        if (!m.classes.empty() &&
            (!cls || std::find(m.classes.begin(), m.classes.end(),
                               static_cast<uint32_t>(*cls >> 8)) == m.classes.end()))
          continue;
        add_pci(*m.kind, addr, static_cast<uint32_t>(*vendor), static_cast<uint32_t>(*device));
        break;
      }
    }
  }

  void add_pci(const Kind& k, const std::string& addr, uint32_t vendor, uint32_t device) {
    if (has_device(addr)) return;  // already reported through its accel node
    const auto driver = fs_.link_name("/sys/bus/pci/devices/" + addr + "/driver");
    // A bound driver made its device nodes, which step 2 already reported.
    const bool own_driver =
        driver && std::find(k.modules.begin(), k.modules.end(), *driver) != k.modules.end();
    if (own_driver && has_kind(k)) return;
    char ids[32];
    std::snprintf(ids, sizeof ids, " [%04x:%04x]", vendor, device);
    std::string ev = "PCI " + addr + ids;
    std::string module = module_of(k);
    if (own_driver) {
      ev += ", driver " + *driver + " bound but no device node found";
      module = *driver;
    } else if (driver) {
      // vfio-pci (passed to a VM), pci-stub...: the NPU's own driver does not drive it.
      ev += ", bound to " + *driver + ", not " + module;
    } else {
      ev += ", no driver bound";
      if (module_present(module)) ev += " (module " + module + " is loaded but did not claim it)";
    }
    add(&k, "", "", module, own_driver || module_present(module), ev, addr);
  }

  // Rockchip SoCs with an NPU, by the device tree: the device itself when no driver showed it,
  // else more evidence for the one found.
  void scan_device_tree() {
    auto dt = fs_.read("/proc/device-tree/compatible");
    if (!dt) dt = fs_.read("/sys/firmware/devicetree/base/compatible");
    if (!dt) return;
    static const char* socs[] = {"rockchip,rk3588", "rockchip,rk3576", "rockchip,rk3568",
                                 "rockchip,rk3566", "rockchip,rk3562", "rockchip,rv1106",
                                 "rockchip,rv1103"};
    size_t i = 0;
    while (i < dt->size()) {  // NUL-separated strings: "radxa,rock-5b\0rockchip,rk3588\0"
      size_t j = dt->find('\0', i);
      if (j == std::string::npos) j = dt->size();
      const std::string compat = dt->substr(i, j - i);
      i = j + 1;
      for (const char* soc : socs) {
        if (!starts_with(compat, soc)) continue;
        if (Found* f = first_of(kRockchip)) {
          f->dev.evidence += "; device tree: " + compat;
        } else {
          const std::string module = module_of(kRockchip);
          add(&kRockchip, "", "", module, module_present(module), "device tree: " + compat);
        }
        return;
      }
    }
  }

  // Coral USB accelerator: no kernel driver (libedgetpu uses libusb): module "", and nothing
  // kernel-side is missing, so module_loaded is true.
  void scan_usb() {
    auto names = fs_.list("/sys/bus/usb/devices");
    if (names.size() > kMaxEntries) names.resize(kMaxEntries);
    for (const auto& n : names) {
      const std::string d = "/sys/bus/usb/devices/" + n;
      const std::string v = fs_.read_line(d + "/idVendor").value_or("");
      const std::string p = fs_.read_line(d + "/idProduct").value_or("");
      // 1a6e:089a before libedgetpu loads its firmware, 18d1:9302 after.
      if ((v == "1a6e" && p == "089a") || (v == "18d1" && p == "9302"))
        add(&kCoralUsb, "", "", "", true, "USB " + n + " [" + v + ":" + p + "]", n);
    }
  }

  std::vector<NpuDevice> result() const {
    std::vector<NpuDevice> r;
    for (const auto& f : out_) r.push_back(f.dev);
    return r;
  }

 private:
  const FileSystem& fs_;
  std::vector<std::string> classes_;
  std::vector<Found> out_;
};

}  // namespace

std::vector<NpuDevice> probe_npus(const FileSystem& fs) {
  Probe p(fs);
  p.scan_accel();
  p.scan_dev_nodes();
  p.scan_drm();
  p.scan_pci();
  p.scan_device_tree();
  p.scan_usb();
  return p.result();
}

}  // namespace polyinfer::hw
