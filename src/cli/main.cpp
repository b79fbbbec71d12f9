// polyinfer — the command-line tool. One file per subcommand (src/cli/<name>.cpp).
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "cli/cli.h"

namespace {

struct Command {
  const char* name;
  int (*run)(const std::vector<std::string>&);
  const char* help;
};

const Command kCommands[] = {
    {"run", polyinfer::cli::cmd_run, "run a model on inputs (.npy/.pb) or seeded random data"},
    {"info", polyinfer::cli::cmd_info, "inputs, outputs, opsets, op histogram, parameters"},
    {"conformance", polyinfer::cli::cmd_conformance, "run ONNX backend test folders"},
    {"bench", polyinfer::cli::cmd_bench, "latency percentiles, throughput, memory, per-op profile"},
    {"optimize", polyinfer::cli::cmd_optimize, "write the optimized graph as ONNX (--level 0..3)"},
    {"doctor", polyinfer::cli::cmd_doctor,
     "what compute is here, which providers can use it, problems and fixes"},
    {"monitor", polyinfer::cli::cmd_monitor,
     "CPU/GPU utilization, clocks, temperature, memory over time"},
    {"compare", polyinfer::cli::cmd_compare,
     "two models on the same inputs: error, cosine, SNR, top-1/5"},
    {"quantize", polyinfer::cli::cmd_quantize, "static INT8: calibrate and write a QDQ model"},
    {"plan", polyinfer::cli::cmd_plan,
     "will a model fit a chip, how fast, what will not run there"},
    {"providers", polyinfer::cli::cmd_providers, "providers built in, and whether each is usable"},
    {"serve", polyinfer::cli::cmd_serve,
     "an Open Inference Protocol (KServe v2) server over a model repository"},
};

void usage(std::ostream& os) {
  os << "usage: polyinfer COMMAND [ARGS]   (polyinfer COMMAND --help for its options)\n\n"
        "commands:\n";
  for (const auto& c : kCommands)
    os << "  " << c.name << std::string(14 - std::strlen(c.name), ' ') << c.help << "\n";
  os << "\nexit status:\n"
        "  0   success\n"
        "  1   bad command line\n"
        "  2   a check failed (conformance below its floor or with unexpected failures)\n"
        "  11  invalid model        12  invalid argument     13  unsupported operator\n"
        "  14  provider unavailable 15  shape mismatch       16  out of memory\n"
        "  17  file I/O error       18  internal error (please report it)\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    usage(std::cout);
    return args.empty() ? polyinfer::cli::kExitUsage : polyinfer::cli::kExitOk;
  }
  if (args[0] == "--version") {
    std::cout << "polyinfer " << polyinfer::version() << "\n";
    return 0;
  }
  for (const auto& c : kCommands) {
    if (args[0] != c.name) continue;
    try {
      return c.run(std::vector<std::string>(args.begin() + 1, args.end()));
    } catch (const polyinfer::cli::UsageError& e) {
      std::cerr << "error: " << e.what() << "\n";
      return polyinfer::cli::kExitUsage;
    } catch (const polyinfer::Error& e) {
      std::cerr << "error: " << e.what() << "\n";
      return polyinfer::exit_code(e.code());
    } catch (const std::exception& e) {
      std::cerr << "error: internal: " << e.what() << " (please report this)\n";
      return polyinfer::exit_code(polyinfer::ErrorCode::Internal);
    }
  }
  std::cerr << "error: unknown command '" << args[0] << "'; run `polyinfer --help`\n";
  return polyinfer::cli::kExitUsage;
}
