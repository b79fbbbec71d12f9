// A small streaming JSON writer for the CLI's --json outputs (doctor, monitor):
//
//   JsonWriter j;
//   j.begin_object().key("cores").value(2).key("features").begin_array();
//   for (auto& f : features) j.value(f);
//   j.end_array().end_object();
//   std::cout << j.str() << "\n";
//
// Commas are placed by the writer; a double that is not finite (or a -1 "unknown" the caller
// maps with value_or_null) is written as null, so the output always parses.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/cli.h"

namespace polyinfer::cli {

class JsonWriter {
 public:
  JsonWriter& begin_object() {
    open('{');
    return *this;
  }
  JsonWriter& end_object() {
    close('}');
    return *this;
  }
  JsonWriter& begin_array() {
    open('[');
    return *this;
  }
  JsonWriter& end_array() {
    close(']');
    return *this;
  }

  JsonWriter& key(const std::string& k) {
    comma();
    out_ += json_str(k) + ": ";
    after_key_ = true;
    return *this;
  }
  JsonWriter& value(const std::string& s) { return raw(json_str(s)); }
  JsonWriter& value(const char* s) { return raw(json_str(s)); }
  JsonWriter& value(bool b) { return raw(b ? "true" : "false"); }
  JsonWriter& value(int v) { return raw(std::to_string(v)); }
  JsonWriter& value(int64_t v) { return raw(std::to_string(v)); }
  JsonWriter& value(uint32_t v) { return raw(std::to_string(v)); }
  JsonWriter& value(double v) {
    if (!std::isfinite(v)) return null();
    char buf[32];
    // 15 significant digits: byte counts and FLOPs up to 10^15 stay exact integers.
    std::snprintf(buf, sizeof buf, "%.15g", v);
    return raw(buf);
  }
  JsonWriter& null() { return raw("null"); }
  // The number, or null when it is negative (the probes' "not exposed").
  template <class T> JsonWriter& value_or_null(T v) { return v < 0 ? null() : value(v); }
  JsonWriter& strings(const std::vector<std::string>& list) {
    begin_array();
    for (const auto& s : list) value(s);
    return end_array();
  }

  const std::string& str() const { return out_; }

 private:
  void comma() {
    if (after_key_) return;
    if (!first_.empty() && !first_.back()) out_ += ", ";
    if (!first_.empty()) first_.back() = false;
  }
  JsonWriter& raw(const std::string& text) {
    comma();
    after_key_ = false;
    out_ += text;
    return *this;
  }
  void open(char c) {
    comma();
    after_key_ = false;
    out_ += c;
    first_.push_back(true);
  }
  void close(char c) {
    out_ += c;
    first_.pop_back();
  }

  std::string out_;
  std::vector<bool> first_;  // per open container: nothing written into it yet
  bool after_key_ = false;
};

}  // namespace polyinfer::cli
