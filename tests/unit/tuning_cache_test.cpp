// The tuning cache's bookkeeping (runtime/tuning_cache.h), which the CUDA provider's convolution
// uses to time cuDNN's algorithms once per shape and machine: key building, the file's round
// trip, the environment variable's forms, and every kind of bad file (ignored with a note, never
// an error). No GPU involved.
#include "runtime/tuning_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "runtime/cache_file.h"

namespace polyinfer {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    dir_ = fs::temp_directory_path() /
           ("polyinfer-tuning-" + std::to_string(getpid()) + "-" + std::to_string(rd()));
    fs::create_directories(dir_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name, std::ios::binary) << text;
  }

 private:
  fs::path dir_;
};

ConvTuningKey key_of(int64_t n) {
  ConvTuningKey k;
  k.x = {n, 3, 224, 224};
  k.w = {64, 3, 7, 7};
  k.strides = {2, 2};
  k.dilations = {1, 1};
  k.pads = {3, 3};
  k.math = "fma";
  k.device = "NVIDIA H200";
  k.library = "cudnn 91900";
  return k;
}

bool has_note(TuningCache& c, const std::string& part) {
  for (const auto& n : c.notes())
    if (n.find(part) != std::string::npos) return true;
  return false;
}

TEST(TuningCache, KeyNamesEveryField) {
  EXPECT_EQ(conv_tuning_key(key_of(1)),
            "conv x=1x3x224x224 w=64x3x7x7 s=2,2 d=1,1 p=3,3 g=1 float32 fma | NVIDIA H200 | "
            "cudnn 91900");
  // Each field separates keys: a cache entry never serves another shape, GPU or library.
  const std::string base = conv_tuning_key(key_of(1));
  auto differs = [&](auto change) {
    ConvTuningKey k = key_of(1);
    change(k);
    return conv_tuning_key(k) != base;
  };
  EXPECT_TRUE(differs([](ConvTuningKey& k) { k.x[0] = 2; }));
  EXPECT_TRUE(differs([](ConvTuningKey& k) { k.w[2] = 3; }));
  EXPECT_TRUE(differs([](ConvTuningKey& k) { k.strides = {1, 1}; }));
  EXPECT_TRUE(differs([](ConvTuningKey& k) { k.dilations = {2, 2}; }));
  EXPECT_TRUE(differs([](ConvTuningKey& k) { k.pads = {1, 1}; }));
  EXPECT_TRUE(differs([](ConvTuningKey& k) { k.group = 64; }));
  EXPECT_TRUE(differs([](ConvTuningKey& k) { k.dtype = "float16"; }));
  EXPECT_TRUE(differs([](ConvTuningKey& k) { k.math = "tf32"; }));
  EXPECT_TRUE(differs([](ConvTuningKey& k) { k.device = "NVIDIA H100"; }));
  EXPECT_TRUE(differs([](ConvTuningKey& k) { k.library = "cudnn 91000"; }));
}

TEST(TuningCache, PathFromTheEnvironment) {
  EXPECT_EQ(tuning_cache_path("", "t.json"), "");
  EXPECT_EQ(tuning_cache_path("0", "t.json"), "");
  EXPECT_EQ(tuning_cache_path("off", "t.json"), "");
  EXPECT_EQ(tuning_cache_path("/tmp/x/my.json", "t.json"), "/tmp/x/my.json");
  const std::string dir = polyinfer_cache_dir();
  EXPECT_EQ(tuning_cache_path(nullptr, "t.json"), dir.empty() ? "" : dir + "/t.json");
}

TEST(TuningCache, StoresAndReadsBackAcrossInstances) {
  TempDir d;
  const std::string path = d.file("sub/folder/tuning.json");  // folders are created
  const TunedAlgo a{1, 4096, 0.25}, b{6, 0, 1.5};
  {
    TuningCache c(path);
    EXPECT_FALSE(c.find("k1").has_value());
    c.store("k1", a);
    c.store("k2", b);
    EXPECT_EQ(c.find("k1"), a);
    EXPECT_TRUE(c.notes().empty());
  }
  TuningCache again(path);
  EXPECT_EQ(again.find("k1"), a);
  EXPECT_EQ(again.find("k2"), b);
  EXPECT_EQ(again.size(), 2u);
  EXPECT_TRUE(again.notes().empty());
}

TEST(TuningCache, MergesWhatAnotherProcessStored) {
  TempDir d;
  const std::string path = d.file("tuning.json");
  TuningCache first(path), second(path);
  EXPECT_FALSE(first.find("a").has_value());  // both have read the (missing) file
  EXPECT_FALSE(second.find("b").has_value());
  first.store("a", {1, 0, 1});
  second.store("b", {2, 0, 1});  // re-reads the file before writing: keeps "a"
  TuningCache third(path);
  EXPECT_EQ(third.find("a")->algo, 1);
  EXPECT_EQ(third.find("b")->algo, 2);
}

TEST(TuningCache, InMemoryWhenThePathIsEmpty) {
  TuningCache c("");
  c.store("k", {3, 8, 0.1});
  EXPECT_EQ(c.find("k")->algo, 3);
  EXPECT_TRUE(c.notes().empty());
}

TEST(TuningCache, BadFilesAreIgnoredWithANoteAndRewritten) {
  struct Case {
    const char* text;
    const char* note;
  };
  const Case cases[] = {
      {"{\"format\": \"polyinfer-tuning\", \"version\": 1, \"entr", "not JSON"},  // partial
      {"\x01\x02garbage", "not JSON"},
      {"[1, 2, 3]", "not a polyinfer tuning cache"},
      {"{\"format\": \"other\", \"version\": 1, \"entries\": {}}", "not a polyinfer tuning cache"},
      {"{\"format\": \"polyinfer-tuning\", \"version\": 99, \"entries\": {}}", "version 99"},
      {"{\"format\": \"polyinfer-tuning\", \"version\": 1}", "no 'entries'"},
      {"", "unreadable, empty"}};
  for (const Case& c : cases) {
    TempDir d;
    d.write("t.json", c.text);
    TuningCache cache(d.file("t.json"));
    EXPECT_FALSE(cache.find("k").has_value()) << c.text;
    EXPECT_TRUE(has_note(cache, c.note)) << c.text;
    cache.store("k", {4, 0, 0});  // replaces the bad file
    TuningCache again(d.file("t.json"));
    EXPECT_EQ(again.find("k")->algo, 4) << c.text;
    EXPECT_TRUE(again.notes().empty()) << c.text;
  }
}

TEST(TuningCache, MalformedEntriesAreSkippedOthersKept) {
  TempDir d;
  d.write("t.json", R"({"format": "polyinfer-tuning", "version": 1, "entries": {
      "good": {"algo": 2, "workspace": 16, "ms": 0.5},
      "no algo": {"workspace": 16},
      "negative": {"algo": -1, "workspace": 0},
      "text": {"algo": "1", "workspace": 0},
      "negative workspace": {"algo": 1, "workspace": -5},
      "not an object": 7}})");
  TuningCache c(d.file("t.json"));
  EXPECT_EQ(c.find("good"), (TunedAlgo{2, 16, 0.5}));
  EXPECT_EQ(c.size(), 1u);
  EXPECT_TRUE(has_note(c, "ignored 5 malformed entries")) << c.notes().front();
}

TEST(TuningCache, UnwritableFileIsANoteNotAnError) {
  TempDir d;
  d.write("plain-file", "x");
  // A path under a regular file: the folder cannot be created.
  TuningCache c(d.file("plain-file/t.json"));
  c.store("k", {1, 0, 0});
  EXPECT_EQ(c.find("k")->algo, 1);  // still served for this process
  EXPECT_TRUE(has_note(c, "could not write"));
  c.store("k2", {1, 0, 0});
  EXPECT_EQ(c.notes().size(), 1u);  // said once
}

}  // namespace
}  // namespace polyinfer
