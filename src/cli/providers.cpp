// `polyinfer providers`: the providers built into this binary and whether each is usable here.
#include <iostream>

#include "cli/cli.h"

namespace polyinfer::cli {

int cmd_providers(const std::vector<std::string>& argv) {
  const Args args = parse_args(argv, {"json", "help"}, {}, "providers");
  if (args.flag("help")) {
    std::cout << "usage: polyinfer providers [--json]\n"
                 "Lists the providers built in, whether each is usable here (and why not), and\n"
                 "the options each takes as --providers NAME:KEY=VALUE (docs/kernels.md).\n";
    return kExitOk;
  }
  const auto list = available_providers();
  if (args.flag("json")) {
    std::cout << "{\"providers\": [";
    for (size_t i = 0; i < list.size(); ++i) {
      std::cout << (i ? ", " : "") << "{\"name\": " << json_str(list[i].name)
                << ", \"device\": " << json_str(list[i].device)
                << ", \"usable\": " << (list[i].usable ? "true" : "false")
                << ", \"reason\": " << json_str(list[i].reason)
                << ", \"kernels\": " << list[i].kernels
                << ", \"detail\": " << json_str(list[i].detail) << ", \"options\": [";
      for (size_t k = 0; k < list[i].options.size(); ++k) {
        const ProviderOptionInfo& o = list[i].options[k];
        std::cout << (k ? ", " : "") << "{\"key\": " << json_str(o.key)
                  << ", \"values\": " << json_str(o.values)
                  << ", \"meaning\": " << json_str(o.meaning) << "}";
      }
      std::cout << "]}";
    }
    std::cout << "]}\n";
    return kExitOk;
  }
  for (const auto& p : list) {
    std::cout << (p.usable ? "✓ " : "✗ ") << p.name << " (" << p.device << ", " << p.kernels
              << " kernels)";
    if (!p.usable) std::cout << ": " << p.reason;
    else if (!p.detail.empty())
      std::cout << ": " << p.detail;
    std::cout << "\n";
    if (!p.options.empty())
      std::cout << "    options (--providers " << p.name << ":KEY=VALUE[:KEY=VALUE...]):\n";
    for (const ProviderOptionInfo& o : p.options)
      std::cout << "      " << o.key << "=" << o.values << "  " << o.meaning << "\n";
  }
  return kExitOk;
}

}  // namespace polyinfer::cli
