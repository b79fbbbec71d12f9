#include "runtime/tuning_cache.h"

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "runtime/cache_file.h"

namespace polyinfer {
namespace {

using nlohmann::json;

constexpr const char* kFormat = "polyinfer-tuning";
constexpr int kVersion = 1;
// Far above any real cache (an entry is ~150 bytes); a larger file is not ours.
constexpr size_t kMaxFileBytes = size_t{4} << 20;

std::string dims(const std::vector<int64_t>& v, char sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += sep;
    s += std::to_string(v[i]);
  }
  return s.empty() ? "-" : s;
}

// An entry of the file, or nothing when it is malformed.
std::optional<TunedAlgo> entry_of(const json& j) {
  if (!j.is_object()) return std::nullopt;
  const auto a = j.find("algo"), w = j.find("workspace"), t = j.find("ms");
  if (a == j.end() || !a->is_number_integer() || a->get<int64_t>() < 0) return std::nullopt;
  if (w == j.end() || !w->is_number_unsigned()) return std::nullopt;
  TunedAlgo e;
  e.algo = a->get<int64_t>();
  e.workspace = w->get<uint64_t>();
  if (t != j.end()) {
    if (!t->is_number() || !std::isfinite(t->get<double>())) return std::nullopt;
    e.time_ms = t->get<double>();
  }
  return e;
}

}  // namespace

std::string tuning_cache_path(const char* env_value, const std::string& file_name) {
  if (env_value) {
    const std::string v(env_value);
    if (v.empty() || v == "0" || v == "off") return "";
    return v;
  }
  const std::string dir = polyinfer_cache_dir();
  return dir.empty() ? "" : dir + "/" + file_name;
}

std::string conv_tuning_key(const ConvTuningKey& k) {
  return "conv x=" + dims(k.x, 'x') + " w=" + dims(k.w, 'x') + " s=" + dims(k.strides, ',') +
         " d=" + dims(k.dilations, ',') + " p=" + dims(k.pads, ',') +
         " g=" + std::to_string(k.group) + " " + k.dtype + " " + k.math + " | " + k.device + " | " +
         k.library;
}

void TuningCache::parse_locked(const std::string& text, bool merge) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    notes_.push_back("ignored the tuning cache " + path_ + ": not JSON (" + e.what() +
                     "); it is rewritten at the next store");
    return;
  }
  if (!j.is_object() || j.value("format", json()) != kFormat) {
    notes_.push_back("ignored the tuning cache " + path_ + ": not a polyinfer tuning cache");
    return;
  }
  if (j.value("version", json()) != kVersion) {
    notes_.push_back("ignored the tuning cache " + path_ + ": version " +
                     j.value("version", json()).dump() + ", this polyinfer reads " +
                     std::to_string(kVersion));
    return;
  }
  const auto ents = j.find("entries");
  if (ents == j.end() || !ents->is_object()) {
    notes_.push_back("ignored the tuning cache " + path_ + ": no 'entries' object");
    return;
  }
  size_t bad = 0;
  for (auto it = ents->begin(); it != ents->end(); ++it) {
    const auto e = entry_of(it.value());
    if (!e) {
      ++bad;
      continue;
    }
    if (!merge || !entries_.count(it.key())) entries_[it.key()] = *e;
  }
  if (bad)
    notes_.push_back("ignored " + std::to_string(bad) + " malformed entr" +
                     (bad == 1 ? "y" : "ies") + " of the tuning cache " + path_);
}

void TuningCache::load_locked() {
  if (loaded_) return;
  loaded_ = true;
  if (path_.empty()) return;
  std::error_code ec;
  if (!std::filesystem::exists(path_, ec)) return;
  const std::string text = read_small_file(path_, kMaxFileBytes);
  if (text.empty()) {
    notes_.push_back("ignored the tuning cache " + path_ + ": unreadable, empty or over " +
                     std::to_string(kMaxFileBytes >> 20) + " MiB");
    return;
  }
  parse_locked(text, false);
}

std::optional<TunedAlgo> TuningCache::find(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  load_locked();
  const auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

void TuningCache::store(const std::string& key, const TunedAlgo& value) {
  std::lock_guard<std::mutex> lock(mu_);
  load_locked();
  entries_[key] = value;
  if (path_.empty()) return;
  // Entries another process wrote since this one read the file; notes about a file that turned
  // bad meanwhile would only repeat, so they are dropped.
  const size_t notes = notes_.size();
  if (const std::string text = read_small_file(path_, kMaxFileBytes); !text.empty())
    parse_locked(text, true);
  notes_.resize(notes);
  json ents = json::object();
  for (const auto& [k, e] : entries_)
    ents[k] = {{"algo", e.algo}, {"workspace", e.workspace}, {"ms", e.time_ms}};
  const json j = {{"format", kFormat}, {"version", kVersion}, {"entries", ents}};
  if (!write_file_atomically(path_, j.dump(1)) && !write_failed_) {
    write_failed_ = true;
    notes_.push_back("could not write the tuning cache " + path_ +
                     " (tuning results are kept for this process only)");
  }
}

size_t TuningCache::size() {
  std::lock_guard<std::mutex> lock(mu_);
  load_locked();
  return entries_.size();
}

std::vector<std::string> TuningCache::notes() {
  std::lock_guard<std::mutex> lock(mu_);
  return notes_;
}

}  // namespace polyinfer
