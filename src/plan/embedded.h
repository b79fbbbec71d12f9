// Data files compiled into the library (data/**/*.json, see tools/embed_data.cmake), so the
// binary reads no files at run time to know its catalogs.
#pragma once

#include <string_view>
#include <vector>

namespace polyinfer::plan {

struct EmbeddedFile {
  std::string_view path;  // relative to data/, e.g. "targets/nvidia.json"
  std::string_view text;
};
const std::vector<EmbeddedFile>& embedded_files();

}  // namespace polyinfer::plan
