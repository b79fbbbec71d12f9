// `polyinfer serve`'s metrics in Prometheus' text format (GET /metrics), labelled by model and
// version: request successes and failures, inferences, requests in flight, histograms of the
// queue (waiting for the version's turn or its batch), compute (the run) and total (receipt to
// reply) durations and of the runs' batch sizes; the process's resident memory and CPU time;
// and the machine as `monitor` reads it (hw/telemetry.h): CPU utilization since the previous
// scrape, temperature, memory, and each NVIDIA GPU's utilization, memory, temperature and
// power, where the machine exposes them. Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "hw/telemetry.h"

namespace polyinfer::serve {

class Metrics {
 public:
  // One finished request for (model, version): `ok` or not, the inferences it held (its batch
  // dimension, 1 for a model without one), its durations in seconds (queue and compute 0 when
  // it failed before running).
  void request(const std::string& model, const std::string& version, bool ok, int64_t items,
               double queue_s, double compute_s, double total_s);
  // One run of (model, version) over `items` inferences: a dynamic batch, or one request.
  void batch(const std::string& model, const std::string& version, int64_t items);
  // A request starts (+1) or ends (-1) running on (model, version).
  void in_flight(const std::string& model, const std::string& version, int delta);
  // The count of accepted connections waiting for a thread, reported as a gauge.
  void watch_pending(std::shared_ptr<const std::atomic<int64_t>> pending);

  // The exposition text, every family with its HELP and TYPE lines.
  std::string prometheus() const;

 private:
  struct Histogram {
    std::vector<uint64_t> buckets;  // cumulative counts are made when printed
    uint64_t count = 0;
    double sum = 0;
    void observe(double v, const std::vector<double>& bounds);
  };
  struct Series {
    uint64_t success = 0, failure = 0, inferences = 0;
    int64_t in_flight = 0;
    Histogram queue, compute, total, batch;
  };
  Series& series(const std::string& model, const std::string& version);  // caller holds mu_

  mutable std::mutex mu_;
  std::map<std::pair<std::string, std::string>, Series> series_;
  mutable hw::Sampler sampler_;
  std::shared_ptr<const std::atomic<int64_t>>
      pending_;  // each scrape reads the machine (utilization since the last)
};

}  // namespace polyinfer::serve
