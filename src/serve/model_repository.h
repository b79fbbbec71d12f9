// The model repository `polyinfer serve` serves from, laid out as Triton's:
//
//   DIR/NAME/config.json          optional: providers, threads, precision, version_policy,
//                                 warmup_dims (docs/serve.md)
//   DIR/NAME/VERSION/model.onnx   VERSION a positive integer
//
// Loading a model loads the versions its policy names (the latest one by default), each into a
// Session, and runs it once (the warm-up) before it serves: a version whose file does not load
// or whose warm-up fails is refused, with the reason in index() and the log, and the versions
// already serving keep serving. Reloading swaps versions in one step; a version that goes (or
// a model unloaded) is held by the requests still running on it, and freed when the last ends.
// Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "polyinfer/session.h"
#include "serve/batcher.h"

namespace polyinfer::serve {

struct ModelConfig {
  std::vector<std::string> providers{"cpu"};
  int threads = 0;  // 0: one per physical core
  std::string precision = "fp32";
  enum class Policy { Latest, All, Specific };
  Policy policy = Policy::Latest;
  int latest = 1;                 // Policy::Latest: how many of the highest versions
  std::vector<int64_t> versions;  // Policy::Specific
  // Dynamic dimensions' sizes for the warm-up run, by symbolic name (1 when not listed).
  std::map<std::string, int64_t> warmup_dims;
  // > 0: every input's first dimension is the batch, at most this many items per request (and
  // per dynamic batch).
  int64_t max_batch_size = 0;
  // Dynamic batching (serve/batcher.h): requests within this delay of the oldest waiting one
  // run together; off when not given.
  bool dynamic_batching = false;
  int64_t max_queue_delay_us = 0;
  // Sessions of each version, each running one request at a time (memory: that many copies
  // of the prepacked weights).
  int instance_count = 1;

  // DIR/NAME/config.json; the defaults when the file is absent. Throws InvalidArgument naming
  // the file and the key at fault.
  static ModelConfig read(const std::filesystem::path& file);
};

// One loaded version: what a request runs on, as `instance_count` sessions of the model. A
// request takes a free instance (acquire) for its run, so runs on one instance take turns and
// the wait and the run can be timed apart, a wait can time out, and the waiting can be counted
// (`waiting`, for the queue's bound).
struct ModelVersion {
  std::string model;
  int64_t version = 0;
  std::vector<Session> instances;  // [0] answers for the model's inputs and outputs
  std::atomic<int> waiting{0};
  int64_t max_batch_size = 0;        // ModelConfig's: 0 when requests are not batches
  std::unique_ptr<Batcher> batcher;  // dynamic batching, when configured (destroyed first)

  explicit ModelVersion(std::vector<Session> sessions);
  const Session& session() const { return instances[0]; }
  // A free instance's index, waiting at most `timeout` (0: as long as it takes); -1 when the
  // wait timed out.
  int acquire(std::chrono::microseconds timeout);
  // A free instance's index now, or -1.
  int try_acquire();
  void release(int instance);

 private:
  std::mutex mu_;
  std::condition_variable freed_;
  std::vector<int> free_;
};

class ModelRepository {
 public:
  // `log` receives one JSON line per event (loaded, refused, unloaded); `max_queue` bounds a
  // dynamic batcher's queue.
  ModelRepository(std::filesystem::path dir, std::function<void(const std::string&)> log,
                  size_t max_queue = 64);

  // Loads every model folder of the directory; returns how many models have a version ready.
  int load_all();
  // Loads or reloads model `name` (its folder must exist). Throws InvalidArgument when the
  // folder or its config is wrong, or when no version it names could be loaded and none serves.
  void load(const std::string& name);
  // Stops serving `name` (running requests finish on the versions they hold).
  void unload(const std::string& name);
  // Triton's --repository-poll-secs: each model folder compared with what it held when last
  // loaded (its files' names, sizes and modification times): a new or changed folder is loaded
  // (again), a removed one unloaded. Failures are logged, never thrown. Returns how many models
  // it loaded or unloaded.
  int poll();

  // The version a request for (`name`, `version`) runs on: `version` "" means the highest one
  // ready. nullptr with `why` set when there is none.
  std::shared_ptr<ModelVersion> get(const std::string& name, const std::string& version,
                                    std::string* why) const;
  // The ready versions of `name`, highest first (empty when none).
  std::vector<int64_t> ready_versions(const std::string& name) const;

  struct Entry {
    std::string name, version, state, reason;  // state: READY, UNAVAILABLE
  };
  // Every model folder with each version the repository knows of (ready or refused), and
  // folders not loaded as UNAVAILABLE with no version.
  std::vector<Entry> index() const;

 private:
  struct Model {
    std::map<int64_t, std::shared_ptr<ModelVersion>> ready;
    std::map<int64_t, std::string> refused;  // version → why
  };
  std::shared_ptr<ModelVersion> load_version(const std::string& name, int64_t version,
                                             const ModelConfig& config, std::string* why) const;

  std::filesystem::path dir_;
  std::function<void(const std::string&)> log_;
  size_t max_queue_;
  mutable std::mutex mu_;
  std::map<std::string, Model> models_;
  std::map<std::string, std::string> seen_;  // model folder → its signature when last loaded
  std::mutex load_mu_;  // one load or unload at a time (loads take long; requests go on)
};

}  // namespace polyinfer::serve
