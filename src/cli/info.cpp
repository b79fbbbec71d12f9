// `polyinfer info MODEL`: what a model takes and gives, and what it is made of.
#include <algorithm>
#include <iostream>
#include <map>

#include "cli/cli.h"
#include "infer/infer.h"
#include "onnx/import.h"

namespace polyinfer::cli {

namespace {

void count_ops(const ir::Graph& g, std::map<std::string, int>* hist, int64_t* params,
               int64_t* bytes) {
  for (const auto& [name, t] : g.initializers) {
    *params += t.numel();
    *bytes += static_cast<int64_t>(t.dtype() == DType::String ? 0 : t.nbytes());
  }
  for (const auto& n : g.nodes) {
    ++(*hist)[n.domain.empty() ? n.op_type : n.domain + "." + n.op_type];
    for (const auto& [k, a] : n.attrs) {
      if (a.g) count_ops(*a.g, hist, params, bytes);
      for (const auto& sg : a.graphs) count_ops(*sg, hist, params, bytes);
    }
  }
}

std::string human_bytes(int64_t b) {
  char buf[32];
  if (b >= (int64_t{1} << 20)) std::snprintf(buf, sizeof buf, "%.1f MiB", b / 1048576.0);
  else if (b >= 1024)
    std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024.0);
  else
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(b));
  return buf;
}

}  // namespace

int cmd_info(const std::vector<std::string>& argv) {
  const Args args = parse_args(argv, {"json", "help"}, {}, "info");
  if (args.flag("help") || args.positional.size() != 1) {
    std::cout << "usage: polyinfer info MODEL [--json]\n";
    return args.flag("help") ? kExitOk : kExitUsage;
  }
  Model m = import_onnx_file(args.positional[0]);
  infer::infer_types(m);
  std::map<std::string, int> hist;
  int64_t params = 0, bytes = 0;
  count_ops(*m.graph, &hist, &params, &bytes);
  int nodes = 0;
  for (const auto& [op, n] : hist) nodes += n;

  if (args.flag("json")) {
    auto values = [](const std::vector<ir::ValueInfo>& vs) {
      std::string s = "[";
      for (size_t i = 0; i < vs.size(); ++i) {
        const auto& t = vs[i].type;
        s += std::string(i ? ", " : "") + "{\"name\": " + json_str(vs[i].name) +
             ", \"type\": " + json_str(t.str()) + ", \"dtype\": " + json_str(dtype_name(t.elem)) +
             ", \"shape\": ";
        if (!t.has_shape) {
          s += "null";
        } else {
          s += "[";
          for (size_t d = 0; d < t.dims.size(); ++d) {
            s += d ? ", " : "";
            if (t.dims[d] >= 0) s += std::to_string(t.dims[d]);
            else
              s += json_str(t.dim_params[d].empty() ? "?" : t.dim_params[d]);
          }
          s += "]";
        }
        s += "}";
      }
      return s + "]";
    };
    std::cout << "{\"path\": " << json_str(args.positional[0])
              << ", \"producer\": " << json_str(m.producer) << ", \"ir_version\": " << m.ir_version
              << ", \"opsets\": {";
    bool first = true;
    for (const auto& [d, v] : m.opsets) {
      std::cout << (first ? "" : ", ") << json_str(d.empty() ? "ai.onnx" : d) << ": " << v;
      first = false;
    }
    std::cout << "}, \"inputs\": " << values(m.graph->inputs)
              << ", \"outputs\": " << values(m.graph->outputs) << ", \"nodes\": " << nodes
              << ", \"ops\": {";
    first = true;
    for (const auto& [op, n] : hist) {
      std::cout << (first ? "" : ", ") << json_str(op) << ": " << n;
      first = false;
    }
    std::cout << "}, \"parameters\": " << params << ", \"parameter_bytes\": " << bytes << "}\n";
    return kExitOk;
  }
  std::cout << args.positional[0] << "\n  producer: " << (m.producer.empty() ? "?" : m.producer)
            << ", IR version " << m.ir_version << "\n  opsets:";
  for (const auto& [d, v] : m.opsets) std::cout << " " << (d.empty() ? "ai.onnx" : d) << "=" << v;
  std::cout << "\n  inputs:\n";
  for (const auto& v : m.graph->inputs)
    std::cout << "    " << v.name << "  " << v.type.str() << "\n";
  std::cout << "  outputs:\n";
  for (const auto& v : m.graph->outputs)
    std::cout << "    " << v.name << "  " << v.type.str() << "\n";
  std::cout << "  parameters: " << params << " (" << human_bytes(bytes) << ")\n  nodes: " << nodes
            << "\n";
  std::vector<std::pair<int, std::string>> sorted;
  for (const auto& [op, n] : hist) sorted.push_back({-n, op});
  std::sort(sorted.begin(), sorted.end());
  for (const auto& [n, op] : sorted) std::cout << "    " << -n << "  " << op << "\n";
  for (const auto& note : m.notes) std::cout << "  note: " << note << "\n";
  return kExitOk;
}

}  // namespace polyinfer::cli
