#include "serve/model_repository.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "polyinfer/status.h"

namespace polyinfer::serve {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// Version folders holding a model.onnx, in ascending order.
std::vector<int64_t> versions_on_disk(const fs::path& folder) {
  std::vector<int64_t> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(folder, ec)) {
    const std::string n = e.path().filename().string();
    if (!e.is_directory() || n.empty() || n.size() > 18 ||
        !std::all_of(n.begin(), n.end(), [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    if (fs::exists(e.path() / "model.onnx")) out.push_back(std::stoll(n));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int64_t> wanted(const ModelConfig& c, const std::vector<int64_t>& on_disk) {
  switch (c.policy) {
    case ModelConfig::Policy::All: return on_disk;
    case ModelConfig::Policy::Specific: {
      std::vector<int64_t> out;
      for (int64_t v : c.versions)
        if (std::find(on_disk.begin(), on_disk.end(), v) != on_disk.end()) out.push_back(v);
      return out;
    }
    case ModelConfig::Policy::Latest:
    default: {
      const size_t n = std::min(on_disk.size(), static_cast<size_t>(c.latest));
      return std::vector<int64_t>(on_disk.end() - static_cast<std::ptrdiff_t>(n), on_disk.end());
    }
  }
}

// Zeros of each input's shape (a dynamic dimension: its warmup_dims size, else 1); empty when
// an input is not a tensor of known rank (the warm-up is then skipped).
std::map<std::string, Value> warmup_inputs(const Session& s, const ModelConfig& c) {
  std::map<std::string, Value> in;
  for (const ValueSpec& spec : s.inputs()) {
    if (spec.kind != "tensor" || !spec.has_shape) return {};
    Shape shape = spec.shape;
    for (size_t i = 0; i < shape.size(); ++i) {
      if (shape[i] >= 0) continue;
      auto it = i < spec.dims.size() ? c.warmup_dims.find(spec.dims[i]) : c.warmup_dims.end();
      shape[i] = it != c.warmup_dims.end() ? it->second : 1;
    }
    in.emplace(spec.name, Value(spec.dtype == DType::String ? Tensor::empty(DType::String, shape)
                                                            : Tensor::zeros(spec.dtype, shape)));
  }
  return in;
}

// What a model folder holds: every file's relative path, size and modification time.
std::string signature(const fs::path& folder) {
  std::vector<std::string> items;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(folder, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    const auto time = it->last_write_time(ec).time_since_epoch().count();
    items.push_back(fs::relative(it->path(), folder, ec).string() + ":" +
                    std::to_string(it->file_size(ec)) + ":" + std::to_string(time));
  }
  std::sort(items.begin(), items.end());
  std::string s;
  for (const auto& i : items) s += i + "\n";
  return s;
}

std::string event(const std::string& what, const std::string& model, int64_t version,
                  const std::string& reason = "") {
  json j = {{"event", what}, {"model", model}};
  if (version > 0) j["version"] = std::to_string(version);
  if (!reason.empty()) j["reason"] = reason;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

ModelVersion::ModelVersion(std::vector<Session> sessions) : instances(std::move(sessions)) {
  for (int i = static_cast<int>(instances.size()); i-- > 0;) free_.push_back(i);
}

int ModelVersion::acquire(std::chrono::microseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  const auto ready = [&] { return !free_.empty(); };
  if (timeout.count() > 0) {
    if (!freed_.wait_for(lock, timeout, ready)) return -1;
  } else {
    freed_.wait(lock, ready);
  }
  const int i = free_.back();
  free_.pop_back();
  return i;
}

int ModelVersion::try_acquire() {
  std::lock_guard<std::mutex> lock(mu_);
  if (free_.empty()) return -1;
  const int i = free_.back();
  free_.pop_back();
  return i;
}

void ModelVersion::release(int instance) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(instance);
  }
  freed_.notify_one();
}

ModelConfig ModelConfig::read(const fs::path& file) {
  ModelConfig c;
  if (!fs::exists(file)) return c;
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  json j;
  try {
    j = json::parse(text.str());
  } catch (const json::exception& e) {
    fail(ErrorCode::InvalidArgument, file.string(), ": not JSON (", e.what(), ")");
  }
  PI_CHECK(j.is_object(), InvalidArgument, file.string(), ": must hold a JSON object");
  const auto where = [&](const std::string& key) { return file.string() + ": \"" + key + "\""; };
  for (const auto& [key, v] : j.items()) {
    if (key == "providers") {
      c.providers.clear();
      if (v.is_string()) {
        std::stringstream list(v.get<std::string>());
        for (std::string p; std::getline(list, p, ',');)
          if (!p.empty()) c.providers.push_back(p);
      } else {
        PI_CHECK(v.is_array(), InvalidArgument, where(key), " must be a list of provider names");
        for (const auto& p : v) {
          PI_CHECK(p.is_string(), InvalidArgument, where(key), " must hold strings");
          c.providers.push_back(p.get<std::string>());
        }
      }
      PI_CHECK(!c.providers.empty(), InvalidArgument, where(key), " is empty");
    } else if (key == "threads") {
      PI_CHECK(v.is_number_integer() && v.get<int64_t>() >= 0, InvalidArgument, where(key),
               " must be an integer >= 0 (0: one per physical core)");
      c.threads = v.get<int>();
    } else if (key == "precision") {
      PI_CHECK(v.is_string(), InvalidArgument, where(key), " must be fp32, fp16 or bf16");
      c.precision = v.get<std::string>();
      parse_precision(c.precision);  // throws naming the choices
    } else if (key == "version_policy") {
      PI_CHECK(v.is_object() && v.size() == 1, InvalidArgument, where(key),
               " must be one of {\"latest\": {\"num_versions\": N}}, {\"all\": {}}, "
               "{\"specific\": {\"versions\": [...]}}");
      if (v.contains("latest")) {
        c.policy = Policy::Latest;
        const json& l = v["latest"];
        PI_CHECK(l.is_object() && l.contains("num_versions") &&
                     l["num_versions"].is_number_integer() && l["num_versions"].get<int>() >= 1,
                 InvalidArgument, where(key), ": latest needs num_versions >= 1");
        c.latest = l["num_versions"].get<int>();
      } else if (v.contains("all")) {
        c.policy = Policy::All;
      } else if (v.contains("specific")) {
        c.policy = Policy::Specific;
        const json& s = v["specific"];
        PI_CHECK(s.is_object() && s.contains("versions") && s["versions"].is_array() &&
                     !s["versions"].empty(),
                 InvalidArgument, where(key), ": specific needs a non-empty versions list");
        for (const auto& n : s["versions"]) {
          PI_CHECK(n.is_number_integer() && n.get<int64_t>() >= 1, InvalidArgument, where(key),
                   ": versions are positive integers");
          c.versions.push_back(n.get<int64_t>());
        }
      } else {
        fail(ErrorCode::InvalidArgument, where(key), " must be latest, all or specific");
      }
    } else if (key == "warmup_dims") {
      PI_CHECK(v.is_object(), InvalidArgument, where(key),
               " must map dimension names to sizes, as {\"N\": 1, \"H\": 224}");
      for (const auto& [dim, n] : v.items()) {
        PI_CHECK(n.is_number_integer() && n.get<int64_t>() >= 0, InvalidArgument, where(key), ": ",
                 dim, " must be a size >= 0");
        c.warmup_dims[dim] = n.get<int64_t>();
      }
    } else if (key == "max_batch_size") {
      PI_CHECK(v.is_number_integer() && v.get<int64_t>() >= 0, InvalidArgument, where(key),
               " must be an integer >= 0 (0: requests are not batches)");
      c.max_batch_size = v.get<int64_t>();
    } else if (key == "dynamic_batching") {
      PI_CHECK(v.is_object(), InvalidArgument, where(key),
               " must be an object, as {\"max_queue_delay_us\": 500}");
      c.dynamic_batching = true;
      for (const auto& [k, d] : v.items()) {
        PI_CHECK(k == "max_queue_delay_us", InvalidArgument, where(key), ": \"", k,
                 "\" is not a setting; the setting is max_queue_delay_us");
        PI_CHECK(d.is_number_integer() && d.get<int64_t>() >= 0, InvalidArgument, where(key),
                 ": max_queue_delay_us must be microseconds >= 0");
        c.max_queue_delay_us = d.get<int64_t>();
      }
    } else if (key == "instance_count") {
      PI_CHECK(v.is_number_integer() && v.get<int64_t>() >= 1 && v.get<int64_t>() <= 64,
               InvalidArgument, where(key), " must be an integer from 1 to 64");
      c.instance_count = v.get<int>();
    } else {
      fail(ErrorCode::InvalidArgument, where(key),
           " is not a setting; the settings are providers, threads, precision, "
           "version_policy, warmup_dims, max_batch_size, dynamic_batching, instance_count");
    }
  }
  PI_CHECK(!c.dynamic_batching || c.max_batch_size > 0, InvalidArgument, file.string(),
           ": dynamic_batching needs max_batch_size > 0");
  return c;
}

ModelRepository::ModelRepository(fs::path dir, std::function<void(const std::string&)> log,
                                 size_t max_queue)
    : dir_(std::move(dir)), log_(std::move(log)), max_queue_(max_queue) {
  PI_CHECK(fs::is_directory(dir_), Io, "model repository ", dir_.string(), " is not a directory");
}

int ModelRepository::load_all() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir_))
    if (e.is_directory()) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  int ready = 0;
  for (const auto& n : names) {
    try {
      load(n);
      ++ready;
    } catch (const Error& e) {
      log_(event("refused", n, 0, e.what()));
    }
  }
  return ready;
}

std::shared_ptr<ModelVersion> ModelRepository::load_version(const std::string& name,
                                                            int64_t version,
                                                            const ModelConfig& config,
                                                            std::string* why) const {
  const fs::path file = dir_ / name / std::to_string(version) / "model.onnx";
  const char* stage = "loading ";
  try {
    SessionOptions o;
    o.providers = config.providers;
    o.threads = config.threads;
    o.precision = parse_precision(config.precision);
    std::vector<Session> sessions;
    for (int i = 0; i < config.instance_count; ++i) {
      stage = "loading ";
      Session s = Session::load(file.string(), o);
      if (config.max_batch_size > 0)
        for (const ValueSpec& in : s.inputs())
          PI_CHECK(in.kind == "tensor" && in.has_shape && !in.shape.empty() && in.shape[0] < 0,
                   InvalidArgument,
                   "max_batch_size needs every input's first dimension dynamic "
                   "(the batch); input '",
                   in.name, "' is ", in.type);
      // Every instance runs once before it serves.
      stage = "the warm-up run (zeros; sizes of dynamic dimensions from warmup_dims, else 1) of ";
      const auto in = warmup_inputs(s, config);
      if (!in.empty()) s.run(in);
      sessions.push_back(std::move(s));
    }
    auto v = std::make_shared<ModelVersion>(sessions);
    v->model = name;
    v->version = version;
    v->max_batch_size = config.max_batch_size;
    if (config.dynamic_batching)
      v->batcher = std::make_unique<Batcher>(sessions, config.max_batch_size,
                                             std::chrono::microseconds(config.max_queue_delay_us),
                                             max_queue_);
    return v;
  } catch (const Error& e) {
    *why = std::string(stage) + file.string() + " failed: " + e.what();
    return nullptr;
  }
}

void ModelRepository::load(const std::string& name) {
  std::lock_guard<std::mutex> loading(load_mu_);
  PI_CHECK(!name.empty() && name.find('/') == std::string::npos && name != "." && name != "..",
           InvalidArgument, "'", name, "' is not a model name");
  const fs::path folder = dir_ / name;
  PI_CHECK(fs::is_directory(folder), InvalidArgument, "the repository has no model '", name,
           "' (no folder ", folder.string(), ")");
  const std::string sig = signature(folder);  // read before taking the lock requests take
  {
    std::lock_guard<std::mutex> lock(mu_);
    seen_[name] = sig;  // a folder that fails is not tried again until it changes
  }
  const ModelConfig config = ModelConfig::read(folder / "config.json");
  const std::vector<int64_t> want = wanted(config, versions_on_disk(folder));
  PI_CHECK(!want.empty(), InvalidArgument, "model '", name, "': no version folder with a ",
           "model.onnx that its version policy names (", folder.string(), "/N/model.onnx)");
  Model old;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = models_.find(name); it != models_.end()) old = it->second;
  }
  Model next;
  for (int64_t v : want) {
    if (auto it = old.ready.find(v); it != old.ready.end()) {
      next.ready.emplace(v, it->second);  // serving already: kept as it is
      continue;
    }
    std::string why;
    if (auto mv = load_version(name, v, config, &why)) {
      next.ready.emplace(v, std::move(mv));
      log_(event("loaded", name, v));
    } else {
      next.refused.emplace(v, why);
      log_(event("refused", name, v, why));
    }
  }
  if (next.ready.empty() && !old.ready.empty()) {
    // Nothing new could load: the versions serving now go on serving (a broken update is not
    // an outage).
    next.ready = old.ready;
    log_(event("kept", name, old.ready.rbegin()->first,
               "no version the policy names could load; the serving ones stay"));
  }
  for (const auto& [v, mv] : old.ready)
    if (!next.ready.count(v)) log_(event("unloaded", name, v));
  std::string reasons;
  for (const auto& [v, why] : next.refused)
    reasons += "; version " + std::to_string(v) + ": " + why;
  std::string serving;
  for (const auto& [v, mv] : next.ready)
    serving += (serving.empty() ? "" : ", ") + std::to_string(v);
  {
    std::lock_guard<std::mutex> lock(mu_);
    models_[name] = std::move(next);
  }
  PI_CHECK(reasons.empty(), InvalidArgument, "model '", name, "': refused", reasons,
           serving.empty() ? "; no version serves" : "; serving version(s) " + serving);
}

void ModelRepository::unload(const std::string& name) {
  std::lock_guard<std::mutex> loading(load_mu_);
  Model gone;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = models_.find(name);
    PI_CHECK(it != models_.end(), InvalidArgument, "model '", name, "' is not loaded");
    gone = std::move(it->second);
    models_.erase(it);
    seen_.erase(name);
  }
  for (const auto& [v, mv] : gone.ready) log_(event("unloaded", name, v));
}

int ModelRepository::poll() {
  std::set<std::string> on_disk;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir_, ec))
    if (e.is_directory()) on_disk.insert(e.path().filename().string());
  // The folders are read outside the lock that every request takes.
  std::map<std::string, std::string> now;
  for (const auto& n : on_disk) now[n] = signature(dir_ / n);
  std::vector<std::string> changed, gone;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [n, sig] : now) {
      auto it = seen_.find(n);
      if (it == seen_.end() || it->second != sig) changed.push_back(n);
    }
    for (const auto& [n, m] : models_)
      if (!on_disk.count(n)) gone.push_back(n);
  }
  for (const auto& n : changed) {
    try {
      load(n);
    } catch (const Error& e) {
      log_(event("refused", n, 0, e.what()));
    }
  }
  for (const auto& n : gone) {
    try {
      unload(n);
    } catch (const Error&) {  // unloaded meanwhile by a repository call
    }
  }
  return static_cast<int>(changed.size() + gone.size());
}

std::shared_ptr<ModelVersion> ModelRepository::get(const std::string& name,
                                                   const std::string& version,
                                                   std::string* why) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = models_.find(name);
  if (it == models_.end()) {
    std::string loaded;
    for (const auto& [n, m] : models_)
      if (!m.ready.empty()) loaded += (loaded.empty() ? "" : ", ") + n;
    *why = "no model named '" + name + "' is loaded; loaded: " + (loaded.empty() ? "none" : loaded);
    return nullptr;
  }
  const Model& m = it->second;
  if (version.empty()) {
    if (m.ready.empty()) {
      *why = "model '" + name + "' has no version ready";
      return nullptr;
    }
    return m.ready.rbegin()->second;
  }
  int64_t v = 0;
  try {
    size_t used = 0;
    v = std::stoll(version, &used);
    if (used != version.size()) throw std::invalid_argument(version);
  } catch (const std::exception&) {
    *why = "version '" + version + "' of model '" + name + "' is not a number";
    return nullptr;
  }
  if (auto r = m.ready.find(v); r != m.ready.end()) return r->second;
  std::string ready;
  for (const auto& [n, mv] : m.ready) ready += (ready.empty() ? "" : ", ") + std::to_string(n);
  *why = "version " + version + " of model '" + name + "' is not ready" +
         (m.refused.count(v) ? " (refused: " + m.refused.at(v) + ")" : "") +
         "; ready: " + (ready.empty() ? "none" : ready);
  return nullptr;
}

std::vector<int64_t> ModelRepository::ready_versions(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<int64_t> out;
  if (auto it = models_.find(name); it != models_.end())
    for (auto r = it->second.ready.rbegin(); r != it->second.ready.rend(); ++r)
      out.push_back(r->first);
  return out;
}

std::vector<ModelRepository::Entry> ModelRepository::index() const {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir_))
    if (e.is_directory()) names.insert(e.path().filename().string());
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [n, m] : models_) names.insert(n);
  std::vector<Entry> out;
  for (const auto& n : names) {
    auto it = models_.find(n);
    if (it == models_.end()) {
      out.push_back({n, "", "UNAVAILABLE", "not loaded"});
      continue;
    }
    for (const auto& [v, mv] : it->second.ready) out.push_back({n, std::to_string(v), "READY", ""});
    for (const auto& [v, why] : it->second.refused)
      if (!it->second.ready.count(v)) out.push_back({n, std::to_string(v), "UNAVAILABLE", why});
  }
  return out;
}

}  // namespace polyinfer::serve
