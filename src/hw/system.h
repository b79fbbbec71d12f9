// Where the hardware probes read the machine from. Every probe takes a FileSystem (files under a
// root: "/" on a real machine, a folder of fake /proc, /sys and /dev entries in tests) and a
// LibraryLoader (dlopen, or a table of fake symbols in tests). Nothing in src/hw/ touches the
// real system any other way, so every branch of every diagnosis can be exercised on a faked
// system, without the hardware it is about.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace polyinfer::hw {

class FileSystem {
 public:
  // `root` is prefixed to every absolute path the probes ask for.
  explicit FileSystem(std::string root = "/");

  const std::string& root() const { return root_; }

  // The whole file, or nullopt when it does not exist or cannot be read. Reads at most 4 MiB:
  // /proc and /sys files are small, and a fake root must not be able to make a probe allocate
  // without bound.
  std::optional<std::string> read(const std::string& path) const;
  // The first line, with surrounding whitespace removed.
  std::optional<std::string> read_line(const std::string& path) const;
  // The first line as an integer (decimal, or hexadecimal with 0x); nullopt when not a number.
  std::optional<int64_t> read_int(const std::string& path) const;
  // Entry names of a directory, sorted, without "." and ".."; empty when it does not exist.
  std::vector<std::string> list(const std::string& dir) const;
  bool exists(const std::string& path) const;
  // The last path component of a symbolic link's target ("/sys/.../driver" → "nvidia"); nullopt
  // when `path` is not a link.
  std::optional<std::string> link_name(const std::string& path) const;

 private:
  std::string full(const std::string& path) const;
  std::string root_;
};

// One loaded shared library. Closing it (destruction) invalidates every symbol taken from it.
class Library {
 public:
  virtual ~Library() = default;
  // The address of `name`, or nullptr when the library does not export it.
  virtual void* symbol(const char* name) const = 0;
  // The file the library was loaded from, when known ("" otherwise).
  virtual std::string path() const { return ""; }
  // symbol() cast to a function pointer type: auto f = lib.fn<int (*)(int*)>("cuDriverGetVersion").
  template <class F> F fn(const char* name) const { return reinterpret_cast<F>(symbol(name)); }
};

class LibraryLoader {
 public:
  virtual ~LibraryLoader() = default;
  // Loads the first of `names` (sonames, e.g. {"libcuda.so.1", "libcuda.so"}) that loads. When
  // none does, returns nullptr and sets `error` to the reason for the first name (dlerror's text).
  virtual std::unique_ptr<Library> open(const std::vector<std::string>& names,
                                        std::string* error) const = 0;
  // Keeps every shared object mapped now for the life of the process, as open() does
  // for the libraries it opens: a vendor loader opens more (the Vulkan loader its drivers and
  // their LLVM) and unmaps them when its instance goes, losing the one-time state they keep in
  // statics (LeakSanitizer reports llvmpipe's). A no-op for loaders that open nothing real.
  virtual void pin_loaded() const {}
};

// dlopen(RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE) through the system's search path: a library once
// loaded stays mapped for the life of the process, whatever its handles do.
const LibraryLoader& system_loader();
// The real machine: FileSystem("/").
const FileSystem& system_files();

// Small parsing helpers shared by the probes.
std::string trim(const std::string& s);
std::vector<std::string> split_ws(const std::string& s);
// "0-3,8,10-11" (a kernel CPU list) → its size (7); 0 when malformed.
int cpu_list_count(const std::string& list);

}  // namespace polyinfer::hw
