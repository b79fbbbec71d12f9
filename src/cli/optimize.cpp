// polyinfer optimize — placeholder until its implementation lands (tracker issue 3).
#include "cli/cli.h"

namespace polyinfer::cli {

int cmd_optimize(const std::vector<std::string>& argv) {
  throw UsageError("'optimize' is not implemented yet");
}

}  // namespace polyinfer::cli
