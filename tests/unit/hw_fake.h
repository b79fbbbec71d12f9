// A faked machine for the hardware-probe tests: a temporary folder standing in for "/" (write
// /proc, /sys and /dev entries into it) and a library loader that serves fake symbols.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "hw/system.h"

namespace polyinfer::hw::testing {

class FakeRoot {
 public:
  FakeRoot() {
    std::random_device rd;
    dir_ = std::filesystem::temp_directory_path() /
           ("polyinfer-hw-" + std::to_string(getpid()) + "-" + std::to_string(rd()));
    std::filesystem::create_directories(dir_);
  }
  ~FakeRoot() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  FakeRoot(const FakeRoot&) = delete;
  FakeRoot& operator=(const FakeRoot&) = delete;

  // Writes `content` to `path` ("/proc/cpuinfo") under the root, making parent folders.
  void write(const std::string& path, const std::string& content) {
    const auto p = at(path);
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
  }
  void mkdir(const std::string& path) { std::filesystem::create_directories(at(path)); }
  // A symbolic link at `path` pointing to `target` (as written, e.g.
  // "../../bus/pci/drivers/nvidia").
  void symlink(const std::string& target, const std::string& path) {
    std::filesystem::create_directories(at(path).parent_path());
    std::filesystem::create_symlink(target, at(path));
  }
  FileSystem fs() const { return FileSystem(dir_.string()); }

 private:
  std::filesystem::path at(const std::string& path) const {
    return dir_ / path.substr(path[0] == '/');
  }
  std::filesystem::path dir_;
};

// Libraries by soname, each a table of symbol → address (the test's own functions with the C
// signatures the probe expects). A name not added fails to load with "NAME: cannot open shared
// object file: No such file or directory", like dlopen.
class FakeLoader : public LibraryLoader {
 public:
  using Symbols = std::map<std::string, void*>;

  void add(const std::string& soname, Symbols symbols, std::string path = "") {
    libs_[soname] = {std::move(symbols), path.empty() ? "/fake/" + soname : path};
  }

  std::unique_ptr<Library> open(const std::vector<std::string>& names,
                                std::string* error) const override {
    for (const auto& n : names) {
      auto it = libs_.find(n);
      if (it != libs_.end()) return std::make_unique<FakeLibrary>(it->second);
    }
    if (error && !names.empty())
      *error = names[0] + ": cannot open shared object file: No such file or directory";
    return nullptr;
  }

 private:
  struct Entry {
    Symbols symbols;
    std::string path;
  };
  class FakeLibrary : public Library {
   public:
    explicit FakeLibrary(const Entry& e) : e_(e) {}
    void* symbol(const char* name) const override {
      auto it = e_.symbols.find(name);
      return it == e_.symbols.end() ? nullptr : it->second;
    }
    std::string path() const override { return e_.path; }

   private:
    const Entry& e_;
  };
  std::map<std::string, Entry> libs_;
};

// A function's address as the void* a symbol table holds.
template <class F> void* sym(F* f) { return reinterpret_cast<void*>(f); }

}  // namespace polyinfer::hw::testing
