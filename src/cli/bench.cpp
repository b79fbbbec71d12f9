// polyinfer bench — placeholder until its implementation lands (tracker issue 3).
#include "cli/cli.h"

namespace polyinfer::cli {

int cmd_bench(const std::vector<std::string>& argv) {
  throw UsageError("'bench' is not implemented yet");
}

}  // namespace polyinfer::cli
