// `polyinfer providers`: the providers built into this binary and whether each is usable here.
#include <iostream>

#include "cli/cli.h"

namespace polyinfer::cli {

int cmd_providers(const std::vector<std::string>& argv) {
  const Args args = parse_args(argv, {"json", "help"}, {}, "providers");
  if (args.flag("help")) {
    std::cout << "usage: polyinfer providers [--json]\n";
    return kExitOk;
  }
  const auto list = available_providers();
  if (args.flag("json")) {
    std::cout << "{\"providers\": [";
    for (size_t i = 0; i < list.size(); ++i)
      std::cout << (i ? ", " : "") << "{\"name\": " << json_str(list[i].name)
                << ", \"device\": " << json_str(list[i].device)
                << ", \"usable\": " << (list[i].usable ? "true" : "false")
                << ", \"reason\": " << json_str(list[i].reason)
                << ", \"kernels\": " << list[i].kernels
                << ", \"detail\": " << json_str(list[i].detail) << "}";
    std::cout << "]}\n";
    return kExitOk;
  }
  for (const auto& p : list) {
    std::cout << (p.usable ? "✓ " : "✗ ") << p.name << " (" << p.device << ", " << p.kernels
              << " kernels)";
    if (!p.usable) std::cout << ": " << p.reason;
    else if (!p.detail.empty()) std::cout << ": " << p.detail;
    std::cout << "\n";
  }
  return kExitOk;
}

}  // namespace polyinfer::cli
