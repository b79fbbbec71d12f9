// `polyinfer optimize MODEL -o OUT.onnx [--level N]`: runs the graph optimizer (src/opt) and
// writes the result, so users can see (and ship) what a session at that level runs.
//
// Level 1 writes standard ONNX that ONNX Runtime loads; levels 2 and 3 may use ai.polyinfer
// operators, which only polyinfer runs: the summary line says so when they do.
#include <iostream>

#include "cli/cli.h"
#include "infer/infer.h"
#include "onnx/export.h"
#include "onnx/import.h"
#include "opt/optimize_model.h"

namespace polyinfer::cli {

int cmd_optimize(const std::vector<std::string>& argv) {
  const Args args = parse_args(argv, {"help"}, {"output", "level"}, "optimize");
  const char* usage =
      "usage: polyinfer optimize MODEL -o OUT.onnx [--level N]\n"
      "  --level N  0 none, 1 standard ONNX rewrites (ONNX Runtime loads the result),\n"
      "             2-3 also fusions into ai.polyinfer operators (polyinfer only); default 3\n";
  if (args.flag("help")) {
    std::cout << usage;
    return kExitOk;
  }
  if (args.positional.size() != 1 || args.get("output").empty()) {
    std::cerr << usage;
    return kExitUsage;
  }
  const int level = args.get_int("level", 3, 0, 3);
  Model m = import_onnx_file(args.positional[0]);
  infer::infer_types(m);
  const opt::OptimizeReport r = opt::optimize_model(m, level);
  // Passes declare the opsets they emit (ai.polyinfer) on the graph; the file's opset_import
  // comes from the model's list.
  for (const auto& [domain, version] : m.graph->opsets) m.opsets[domain] = version;
  export_onnx_file(m, args.get("output"));
  std::cout << "optimize level " << level << ": " << r.summary() << "; wrote " << args.get("output")
            << (r.polyinfer_only ? " (uses ai.polyinfer operators: polyinfer-only)"
                                 : " (standard ONNX)")
            << "\n";
  return kExitOk;
}

}  // namespace polyinfer::cli
