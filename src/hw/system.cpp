// The real-system side of hw/system.h: files under a root, and dlopen.
#include "hw/system.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dirent.h>
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <fstream>

namespace polyinfer::hw {

namespace {
constexpr size_t kMaxFileBytes = size_t{4} << 20;

class DlLibrary : public Library {
 public:
  explicit DlLibrary(void* handle) : handle_(handle) {}
  ~DlLibrary() override { dlclose(handle_); }
  void* symbol(const char* name) const override { return dlsym(handle_, name); }
  std::string path() const override {
    const link_map* map = nullptr;
    if (dlinfo(handle_, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name) return map->l_name;
    return "";
  }

 private:
  void* handle_;
};

class DlLoader : public LibraryLoader {
 public:
  std::unique_ptr<Library> open(const std::vector<std::string>& names,
                                std::string* error) const override {
    std::string first;
    for (const auto& name : names) {
      // RTLD_NODELETE: dlclose drops the handle but never unmaps the library. Vendor libraries
      // keep process-lifetime state from load time (the CUDA runtime and cuBLAS carry a static
      // libstdc++ whose 71 KiB exception pool leaks when unmapped — LeakSanitizer fails CI on
      // it; ocl-icd keeps its ICD list; a libcuda unloaded and reloaded re-initialises the
      // driver), and probing them twice must cost nothing.
      if (void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE))
        return std::make_unique<DlLibrary>(h);
      const char* e = dlerror();
      if (first.empty()) first = e ? e : name + ": cannot be loaded";
    }
    if (error) *error = first;
    return nullptr;
  }

  void pin_loaded() const override {
    // Names first, dlopen after: dl_iterate_phdr holds the loader's lock.
    std::vector<std::string> names;
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* out) {
          if (info->dlpi_name && info->dlpi_name[0])
            static_cast<std::vector<std::string>*>(out)->push_back(info->dlpi_name);
          return 0;
        },
        &names);
    // A second reference with RTLD_NODELETE; RTLD_NOLOAD: only what is already mapped. The
    // handles are dropped at once: NODELETE stays with the library.
    for (const auto& name : names)
      if (void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE)) dlclose(h);
  }
};
}  // namespace

FileSystem::FileSystem(std::string root) : root_(std::move(root)) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
}

std::string FileSystem::full(const std::string& path) const {
  if (root_ == "/" || root_.empty()) return path;
  return root_ + path;
}

std::optional<std::string> FileSystem::read(const std::string& path) const {
  std::ifstream in(full(path), std::ios::binary);
  if (!in) return std::nullopt;
  std::string out;
  char buf[8192];
  while (out.size() < kMaxFileBytes) {
    in.read(buf, sizeof buf);
    if (in.gcount() <= 0) break;
    out.append(buf, static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return std::nullopt;
  if (out.size() > kMaxFileBytes) out.resize(kMaxFileBytes);
  return out;
}

std::optional<std::string> FileSystem::read_line(const std::string& path) const {
  auto text = read(path);
  if (!text) return std::nullopt;
  return trim(text->substr(0, text->find('\n')));
}

std::optional<int64_t> FileSystem::read_int(const std::string& path) const {
  auto line = read_line(path);
  if (!line || line->empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(line->c_str(), &end, 0);
  if (errno != 0 || end == line->c_str()) return std::nullopt;
  return static_cast<int64_t>(v);
}

std::vector<std::string> FileSystem::list(const std::string& dir) const {
  std::vector<std::string> out;
  DIR* d = opendir(full(dir).c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") out.push_back(name);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

bool FileSystem::exists(const std::string& path) const {
  struct stat st {};
  return lstat(full(path).c_str(), &st) == 0;
}

std::optional<std::string> FileSystem::link_name(const std::string& path) const {
  char buf[PATH_MAX];
  const ssize_t n = readlink(full(path).c_str(), buf, sizeof buf - 1);
  if (n <= 0) return std::nullopt;
  std::string target(buf, static_cast<size_t>(n));
  const auto slash = target.find_last_of('/');
  return slash == std::string::npos ? target : target.substr(slash + 1);
}

const LibraryLoader& system_loader() {
  static const DlLoader loader;
  return loader;
}

const FileSystem& system_files() {
  static const FileSystem fs("/");
  return fs;
}

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::vector<std::string> split_ws(const std::string& s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    size_t j = i;
    while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

int cpu_list_count(const std::string& list) {
  int count = 0;
  size_t i = 0;
  const std::string s = trim(list);
  if (s.empty()) return 0;
  while (i < s.size()) {
    size_t j = s.find(',', i);
    if (j == std::string::npos) j = s.size();
    const std::string part = s.substr(i, j - i);
    const auto dash = part.find('-');
    char* end = nullptr;
    const long a = std::strtol(part.c_str(), &end, 10);
    if (end == part.c_str()) return 0;
    long b = a;
    if (dash != std::string::npos) {
      const char* p = part.c_str() + dash + 1;
      b = std::strtol(p, &end, 10);
      if (end == p) return 0;
    }
    if (b < a || b - a > 1 << 20) return 0;
    count += static_cast<int>(b - a + 1);
    i = j + 1;
  }
  return count;
}

}  // namespace polyinfer::hw
