// A persisted record of which algorithm won a timing run, so that a library call with several
// algorithms (cuDNN convolution) is timed once per shape and machine, not once per process.
//
// The bookkeeping only: no GPU code, so every branch is unit-tested anywhere. The CUDA provider
// builds the keys (conv_tuning_key) and does the timing.
//
// The file is JSON, one per cache:
//   {"format": "polyinfer-tuning", "version": 1,
//    "entries": {"<key>": {"algo": 1, "workspace": 4096, "ms": 0.123}, ...}}
// A file that is missing starts an empty cache; one that cannot be read or parsed, is of another
// format or version, or holds malformed entries is ignored (wholly, or those entries) with a note
// (notes()), never an error; the next store() rewrites it. Writes go through a temporary file
// and a rename (runtime/cache_file.h). Two processes storing at once each merge the file's
// entries before writing, so at worst an entry is lost and timed again.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "polyinfer/tensor.h"

namespace polyinfer {

// The winner of one timing run: the library's algorithm number, the scratch memory it needs and
// the time it took (for the curious; not used to decide anything).
struct TunedAlgo {
  int64_t algo = -1;
  uint64_t workspace = 0;
  double time_ms = 0;
  bool operator==(const TunedAlgo&) const = default;
};

class TuningCache {
 public:
  // `path` "" keeps the cache in memory only (tuning once per process).
  explicit TuningCache(std::string path) : path_(std::move(path)) {}

  const std::string& path() const { return path_; }
  // The entry for `key`; the file is read on first use.
  std::optional<TunedAlgo> find(const std::string& key);
  // Records `value` and rewrites the file (merged with entries other processes added).
  void store(const std::string& key, const TunedAlgo& value);
  size_t size();
  // What was ignored or could not be written, one line each, for a log or a report.
  std::vector<std::string> notes();

 private:
  void load_locked();
  // Entries of the file's text; notes what it ignores. `merge` keeps entries already held.
  void parse_locked(const std::string& text, bool merge);

  std::string path_;
  std::mutex mu_;
  bool loaded_ = false;
  bool write_failed_ = false;
  std::map<std::string, TunedAlgo> entries_;
  std::vector<std::string> notes_;
};

// The cache file for `file_name` given the value of its environment variable (`env_value`, null
// when unset): unset → <polyinfer_cache_dir()>/<file_name> ("" when there is no cache folder);
// "", "0" or "off" → "" (in memory only); anything else is the file's path.
std::string tuning_cache_path(const char* env_value, const std::string& file_name);

// Everything a convolution's algorithm choice depends on. The device and library fields keep a
// cache file copied to another GPU, or kept across a cuDNN upgrade, from serving stale winners.
struct ConvTuningKey {
  Shape x, w;  // input and weight shapes (after any explicit padding of the input)
  std::vector<int64_t> strides, dilations, pads;
  int64_t group = 1;
  std::string dtype = "float32";
  std::string math;     // the math mode the timing allowed ("fma": no TF32)
  std::string device;   // the GPU's name
  std::string library;  // e.g. "cudnn 91900"
};
// One line: "conv x=1x3x224x224 w=64x3x7x7 s=2,2 d=1,1 p=3,3 g=1 float32 fma | NVIDIA H200 |
// cudnn 91900".
std::string conv_tuning_key(const ConvTuningKey& k);

}  // namespace polyinfer
