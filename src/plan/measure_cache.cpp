// `plan --target this`: a measurement as JSON, its cache, the Target built from it and the text
// a human reads (measure.h). The probes themselves are in measure.cpp.

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "hw/report.h"
#include "plan/measure.h"
#include "polyinfer/session.h"
#include "polyinfer/status.h"
#include "runtime/cache_file.h"

namespace polyinfer::plan {
namespace {

using nlohmann::json;

// ---- JSON fields, each checked for its type --------------------------------------------------

const json& field(const json& j, const char* key, const std::string& origin) {
  const auto it = j.find(key);
  PI_CHECK(it != j.end(), InvalidArgument, origin, ": not a polyinfer measurement: no '", key, "'");
  return *it;
}

std::string text_field(const json& j, const char* key, const std::string& origin) {
  const json& v = field(j, key, origin);
  PI_CHECK(v.is_string(), InvalidArgument, origin, ": '", key, "' must be a string");
  return v.get<std::string>();
}

// A finite number ≥ 0 (every figure of a measurement is a rate, a size or a time).
double number_field(const json& j, const char* key, const std::string& origin) {
  const json& v = field(j, key, origin);
  PI_CHECK(v.is_number(), InvalidArgument, origin, ": '", key, "' must be a number");
  const double d = v.get<double>();
  PI_CHECK(std::isfinite(d) && d >= 0, InvalidArgument, origin, ": '", key,
           "' must be a finite number ≥ 0, got ", d);
  return d;
}

uint64_t count_field(const json& j, const char* key, const std::string& origin) {
  const json& v = field(j, key, origin);
  PI_CHECK(v.is_number_unsigned(), InvalidArgument, origin, ": '", key,
           "' must be a whole number ≥ 0");
  return v.get<uint64_t>();
}

// ---- The cache -------------------------------------------------------------------------------

// "Intel(R) Xeon(R) Processor" → "intel-r-xeon-r-processor": letters and digits, runs of
// anything else as one '-'. The file name only separates machines; the model itself is checked
// against the file's cpu_model, so two models with one slug cannot be mixed up.
std::string slug(const std::string& model) {
  std::string out;
  for (const char ch : model) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (std::isalnum(c)) {
      out += static_cast<char>(std::tolower(c));
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
    if (out.size() >= 80) break;
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "unknown-cpu" : out;
}

// Whether a cached measurement may stand for a new one: same polyinfer (probes change between
// versions), same CPU and thread count, complete, and not a quick one serving a full request.
bool usable(const MachineMeasurement& m, const std::string& cpu_model, int threads,
            const MeasureOptions& options) {
  return m.polyinfer_version == version() && m.cpu_model == cpu_model && m.threads == threads &&
         m.fp32_flops > 0 && !m.bandwidth.empty() && (options.quick || !m.quick);
}

// ---- Text ------------------------------------------------------------------------------------

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string bytes_text(double b) {
  if (b >= 1024.0 * 1024 * 1024) return fixed(b / (1024.0 * 1024 * 1024), 1) + " GiB";
  if (b >= 1024.0 * 1024)
    return fixed(b / (1024.0 * 1024), b < 10 * 1024.0 * 1024 ? 1 : 0) + " MiB";
  return fixed(b / 1024.0, 0) + " KiB";
}

std::string rate_text(double v, const char* unit) {  // unit: "FLOP/s", "OP/s", "B/s"
  if (v >= 1e12) return fixed(v / 1e12, 2) + " T" + unit;
  return fixed(v / 1e9, 1) + " G" + unit;
}

}  // namespace

std::string to_json(const MachineMeasurement& m) {
  nlohmann::ordered_json j;
  j["polyinfer_version"] = m.polyinfer_version;
  j["measured_at"] = m.measured_at;
  j["quick"] = m.quick;
  j["cpu_model"] = m.cpu_model;
  j["threads"] = m.threads;
  j["isa"] = m.isa;
  j["bf16_isa"] = m.bf16_isa;
  j["int8_isa"] = m.int8_isa;
  j["fp32_flops"] = m.fp32_flops;
  j["bf16_flops"] = m.bf16_flops;
  j["int8_ops"] = m.int8_ops;
  j["gemm_fp32_flops"] = m.gemm_fp32_flops;
  j["bandwidth"] = nlohmann::ordered_json::array();
  for (const auto& p : m.bandwidth)
    j["bandwidth"].push_back({{"working_set", p.working_set}, {"bytes_per_s", p.bytes_per_s}});
  j["node_overhead_s"] = m.node_overhead_s;
  j["memory_total"] = m.memory_total;
  j["memory_available"] = m.memory_available;
  return j.dump(2) + "\n";
}

MachineMeasurement measurement_from_json(const std::string& text, const std::string& origin) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  PI_CHECK(j.is_object(), InvalidArgument, origin, ": not a polyinfer measurement (",
           j.is_discarded() ? "not valid JSON" : "not a JSON object", ")");
  MachineMeasurement m;
  m.polyinfer_version = text_field(j, "polyinfer_version", origin);
  m.measured_at = text_field(j, "measured_at", origin);
  const json& quick = field(j, "quick", origin);
  PI_CHECK(quick.is_boolean(), InvalidArgument, origin, ": 'quick' must be true or false");
  m.quick = quick.get<bool>();
  m.cpu_model = text_field(j, "cpu_model", origin);
  const uint64_t threads = count_field(j, "threads", origin);
  PI_CHECK(threads >= 1 && threads <= 1024, InvalidArgument, origin,
           ": 'threads' must be 1..1024, got ", threads);
  m.threads = static_cast<int>(threads);
  m.isa = text_field(j, "isa", origin);
  m.bf16_isa = text_field(j, "bf16_isa", origin);
  m.int8_isa = text_field(j, "int8_isa", origin);
  m.fp32_flops = number_field(j, "fp32_flops", origin);
  m.bf16_flops = number_field(j, "bf16_flops", origin);
  m.int8_ops = number_field(j, "int8_ops", origin);
  m.gemm_fp32_flops = number_field(j, "gemm_fp32_flops", origin);
  const json& bw = field(j, "bandwidth", origin);
  PI_CHECK(bw.is_array() && bw.size() <= 64, InvalidArgument, origin,
           ": 'bandwidth' must be a list of at most 64 points");
  for (const json& p : bw) {
    PI_CHECK(p.is_object(), InvalidArgument, origin, ": a 'bandwidth' point must be an object");
    BandwidthPoint point;
    point.working_set = static_cast<size_t>(count_field(p, "working_set", origin));
    point.bytes_per_s = number_field(p, "bytes_per_s", origin);
    PI_CHECK(m.bandwidth.empty() || m.bandwidth.back().working_set < point.working_set,
             InvalidArgument, origin, ": 'bandwidth' points must ascend by working_set");
    m.bandwidth.push_back(point);
  }
  m.node_overhead_s = number_field(j, "node_overhead_s", origin);
  m.memory_total = count_field(j, "memory_total", origin);
  m.memory_available = count_field(j, "memory_available", origin);
  return m;
}

std::string measurement_cache_path(int threads) {
  const std::string dir = polyinfer_cache_dir();
  if (dir.empty()) return "";
  return dir + "/" + slug(hw::probe_cpu(hw::system_files()).model) + "-" + std::to_string(threads) +
         "t.json";
}

MachineMeasurement cached_measurement(int threads, bool refresh, std::string* cache_path,
                                      const MeasureOptions& options) {
  PI_CHECK(threads >= 1 && threads <= 1024, InvalidArgument,
           "measuring this machine: threads must be 1..1024, got ", threads);
  const std::string model = hw::probe_cpu(hw::system_files()).model;
  const std::string path = measurement_cache_path(threads);
  if (cache_path) *cache_path = path;
  if (!refresh && !path.empty()) {
    const std::string text = read_small_file(path);
    if (!text.empty()) {
      try {
        MachineMeasurement m = measurement_from_json(text, path);
        if (usable(m, model, threads, options)) return m;
      } catch (const Error&) {
        // Not a measurement we wrote (or one from a version with another format): measure anew.
      }
    }
  }
  MachineMeasurement m = measure_this_machine(threads, options);
  if (!path.empty()) write_file_atomically(path, to_json(m));
  return m;
}

Target this_machine_target(const MachineMeasurement& m) {
  Target t;
  t.id = "this";
  t.name = "this machine (" + (m.cpu_model.empty() ? std::string("unknown CPU") : m.cpu_model) +
           ", " + std::to_string(m.threads) + (m.threads == 1 ? " thread)" : " threads)");
  t.kind = "cpu";
  const std::string source = "measured " + m.measured_at;
  const std::string at = std::to_string(m.threads) + (m.threads == 1 ? " thread" : " threads");
  auto figure = [&](double value, const std::string& note) {
    Figure f;
    f.value = value;
    f.known = value > 0;
    f.source = source;
    f.note = note;
    return f;
  };
  if (m.fp32_flops > 0) t.peak[Precision::FP32] = figure(m.fp32_flops, m.isa + " FMA loop, " + at);
  if (m.bf16_flops > 0) t.peak[Precision::BF16] = figure(m.bf16_flops, m.bf16_isa + " loop, " + at);
  if (m.int8_ops > 0) t.peak[Precision::INT8] = figure(m.int8_ops, m.int8_isa + " loop, " + at);
  if (!m.bandwidth.empty())
    t.bandwidth = figure(m.bandwidth.back().bytes_per_s,
                         "STREAM triad over " + bytes_text(m.bandwidth.back().working_set) + ", " +
                             at + "; 2 reads + 1 write counted, write-allocate not");
  // Every point but the DRAM-sized last: nodes whose bytes fit a cache level stream at its rate.
  for (size_t i = 0; i + 1 < m.bandwidth.size(); ++i)
    t.bandwidth_tiers.push_back(
        {static_cast<double>(m.bandwidth[i].working_set), m.bandwidth[i].bytes_per_s});
  t.memory = figure(static_cast<double>(m.memory_total), "MemTotal");
  t.node_overhead =
      figure(m.node_overhead_s, "CPU provider, median run of a chain of tiny Relu nodes ÷ nodes");
  if (m.gemm_fp32_flops > 0 && m.fp32_flops > 0)
    t.compute_efficiency = figure(m.gemm_fp32_flops / m.fp32_flops,
                                  "oneDNN f32 matmul " + rate_text(m.gemm_fp32_flops, "FLOP/s") +
                                      " ÷ FMA peak " + rate_text(m.fp32_flops, "FLOP/s"));
  t.bandwidth_efficiency = figure(1.0, "the bandwidth figure is itself a measured triad rate");
  t.toolchain = "polyinfer CPU provider (oneDNN and its own kernels)";
  if (m.bf16_flops <= 0) t.notes.push_back("no bf16 dot-product instruction measured on this CPU");
  if (m.int8_ops <= 0) t.notes.push_back("no int8 dot-product instruction measured on this CPU");
  if (m.quick) t.notes.push_back("quick measurement: rough figures, bandwidth from a cache size");
  return t;
}

std::string describe(const MachineMeasurement& m) {
  std::ostringstream os;
  os << "this machine: " << (m.cpu_model.empty() ? "unknown CPU" : m.cpu_model) << ", " << m.threads
     << (m.threads == 1 ? " thread" : " threads") << " (measured " << m.measured_at
     << ", polyinfer " << m.polyinfer_version << (m.quick ? ", quick" : "") << ")\n";
  auto line = [&](const char* what, const std::string& value, const std::string& how) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "  %-15s %-16s %s\n", what, value.c_str(), how.c_str());
    os << buf;
  };
  line("fp32 peak", rate_text(m.fp32_flops, "FLOP/s"), m.isa + " FMA loop");
  line("bf16 peak", m.bf16_flops > 0 ? rate_text(m.bf16_flops, "FLOP/s") : "-",
       m.bf16_flops > 0 ? m.bf16_isa + " loop" : "no bf16 dot product on this CPU");
  line("int8 peak", m.int8_ops > 0 ? rate_text(m.int8_ops, "OP/s") : "-",
       m.int8_ops > 0 ? m.int8_isa + " loop" : "no int8 dot product on this CPU");
  line("fp32 GEMM", m.gemm_fp32_flops > 0 ? rate_text(m.gemm_fp32_flops, "FLOP/s") : "-",
       m.gemm_fp32_flops > 0 && m.fp32_flops > 0
           ? "oneDNN matmul, " + fixed(100 * m.gemm_fp32_flops / m.fp32_flops, 0) + "% of peak"
           : "oneDNN matmul failed");
  line("node overhead", fixed(m.node_overhead_s * 1e6, 2) + " us", "per node, CPU provider");
  line("memory", bytes_text(static_cast<double>(m.memory_total)),
       bytes_text(static_cast<double>(m.memory_available)) + " available");
  os << "  bandwidth (STREAM triad, 2 reads + 1 write per element; write-allocate not counted)\n";
  for (const auto& p : m.bandwidth)
    line("", bytes_text(static_cast<double>(p.working_set)), rate_text(p.bytes_per_s, "B/s"));
  return os.str();
}

}  // namespace polyinfer::plan
