// `polyinfer compare MODEL_A MODEL_B [--data PATH | -i NAME=FILE... | --samples N] [--json]`:
// both models on the same inputs, and per output how far B is from A (the reference): max and
// mean absolute error, cosine similarity, SNR, and top-1 / top-5 agreement for classifier scores.
// The question behind it: did this conversion (optimization, fp16, INT8) keep the model's answers?
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cli/cli.h"
#include "cli/inputs.h"
#include "cli/json.h"
#include "core/accuracy.h"
#include "polyinfer/io.h"

namespace polyinfer::cli {

namespace {

const char* kUsage =
    "usage: polyinfer compare MODEL_A MODEL_B [--data PATH] [-i NAME=FILE]... [--samples N]\n"
    "                         [--seed N] [--shape NAME=DIMS] [--providers LIST] [--threads N]\n"
    "                         [--json]\n"
    "  MODEL_A is the reference; MODEL_B is judged against it on the same inputs.\n"
    "  --data PATH   a folder of .npy files (one sample each, in name order) or one .npy; a file\n"
    "                whose first dimension is larger than the input's batch of 1 is split into\n"
    "                samples. Single-input models only (use -i for several inputs).\n"
    "  --samples N   without --data: N seeded random inputs (default 1), seeds --seed, +1, ...\n";

// The samples for a single-input model from --data.
std::vector<Tensor> data_samples(const std::string& path, const ValueSpec& input) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    for (const auto& e : fs::directory_iterator(path, ec))
      if (e.path().extension() == ".npy") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    PI_CHECK(!files.empty(), InvalidArgument, "--data: folder '", path, "' holds no .npy files");
  } else {
    PI_CHECK(fs::is_regular_file(path, ec), Io, "--data: '", path, "' is neither a file nor a folder");
    files.push_back(path);
  }
  std::vector<Tensor> out;
  const bool batch_of_one = !input.shape.empty() && input.shape[0] == 1;
  for (const auto& f : files) {
    Tensor t = read_npy(f);
    if (batch_of_one && t.shape().size() == input.shape.size() && t.shape()[0] > 1) {
      // A batched file for a model that takes one sample at a time: split along dimension 0.
      Shape one = t.shape();
      one[0] = 1;
      const size_t bytes = t.nbytes() / static_cast<size_t>(t.shape()[0]);
      for (int64_t i = 0; i < t.shape()[0]; ++i)
        out.push_back(Tensor::from_host(t.dtype(), one,
                                        static_cast<const char*>(t.raw_data()) + i * bytes, bytes));
    } else {
      out.push_back(t);
    }
  }
  return out;
}

std::string fixed(double v, int digits) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string sci(double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace

int cmd_compare(const std::vector<std::string>& argv) {
  const Args args = parse_args(argv, {"help", "json", "allow-missing"},
                               {"data", "input", "samples", "seed", "shape", "providers",
                                "threads", "level"},
                               "compare");
  if (args.flag("help")) {
    std::cout << kUsage;
    return kExitOk;
  }
  if (args.positional.size() != 2) {
    std::cerr << kUsage;
    return kExitUsage;
  }
  const SessionOptions opts = session_options(args);
  Session a = Session::load(args.positional[0], opts);
  Session b = Session::load(args.positional[1], opts);
  std::vector<std::string> notes;

  // The samples, as input maps, fed to both models.
  std::vector<std::map<std::string, Value>> samples;
  if (args.flag("data")) {
    PI_CHECK(a.inputs().size() == 1, InvalidArgument, "--data feeds single-input models; ",
             args.positional[0], " takes ", a.inputs().size(), " inputs: give -i NAME=FILE for each");
    for (auto& t : data_samples(args.get("data"), a.inputs()[0]))
      samples.push_back({{a.inputs()[0].name, Value(t)}});
  } else {
    const int n = args.get_int("samples", 1, 1, 1000000);
    const int seed = args.get_int("seed", 0, 0, 1 << 30);
    std::vector<std::string> later;  // the same notes again for every further sample
    for (int k = 0; k < n; ++k) {
      Args with_seed = args;
      with_seed.options.erase("seed");
      with_seed.options.emplace("seed", std::to_string(seed + k));
      samples.push_back(make_inputs(a, with_seed, k == 0 ? &notes : &later));
    }
  }
  for (const auto& in : b.inputs())
    PI_CHECK(samples.front().count(in.name), InvalidArgument, args.positional[1], " takes input '",
             in.name, "', which ", args.positional[0], " does not: the models must share inputs");

  // Outputs are matched by name.
  std::vector<std::string> names;
  std::vector<size_t> ia, ib;
  for (size_t i = 0; i < a.outputs().size(); ++i)
    for (size_t j = 0; j < b.outputs().size(); ++j)
      if (a.outputs()[i].name == b.outputs()[j].name) {
        names.push_back(a.outputs()[i].name);
        ia.push_back(i);
        ib.push_back(j);
      }
  PI_CHECK(!names.empty(), InvalidArgument, "the models share no output name: nothing to compare");
  std::vector<ErrorStats> stats(names.size());
  for (const auto& feed : samples) {
    std::map<std::string, Value> feed_b;
    for (const auto& in : b.inputs()) feed_b[in.name] = feed.at(in.name);
    const std::vector<Value> ra = a.run(feed), rb = b.run(feed_b);
    for (size_t k = 0; k < names.size(); ++k) {
      PI_CHECK(ra[ia[k]].is_tensor() && rb[ib[k]].is_tensor(), UnsupportedOp, "compare: output '",
               names[k], "' is not a tensor");
      stats[k].add(rb[ib[k]].tensor(), ra[ia[k]].tensor());
    }
  }

  if (args.flag("json")) {
    JsonWriter w;
    w.begin_object().key("reference").value(args.positional[0]).key("compared")
        .value(args.positional[1]).key("samples").value(static_cast<int>(samples.size()));
    w.key("outputs").begin_array();
    for (size_t k = 0; k < names.size(); ++k) {
      const ErrorStats& s = stats[k];
      w.begin_object().key("name").value(names[k]).key("max_abs").value(s.max_abs())
          .key("mean_abs").value(s.mean_abs()).key("cosine").value(s.cosine());
      w.key("snr_db");
      std::isinf(s.snr_db()) ? w.null() : w.value(s.snr_db());
      w.key("top1");
      s.top1() < 0 ? w.null() : w.value(s.top1());
      w.key("top5");
      s.top5() < 0 ? w.null() : w.value(s.top5());
      w.key("non_finite").value(s.non_finite()).end_object();
    }
    w.end_array().end_object();
    std::cout << w.str() << "\n";
    return kExitOk;
  }
  std::cout << "compare: " << args.positional[1] << " against " << args.positional[0] << " on "
            << samples.size() << " sample" << (samples.size() == 1 ? "" : "s") << "\n";
  for (const auto& n : notes) std::cout << "  note: " << n << "\n";
  std::printf("%-24s %10s %10s %10s %9s %7s %7s\n", "output", "max abs", "mean abs", "cosine",
              "SNR dB", "top-1", "top-5");
  for (size_t k = 0; k < names.size(); ++k) {
    const ErrorStats& s = stats[k];
    std::printf("%-24s %10s %10s %10s %9s %7s %7s\n", names[k].c_str(), sci(s.max_abs()).c_str(),
                sci(s.mean_abs()).c_str(), fixed(s.cosine(), 6).c_str(), fixed(s.snr_db(), 1).c_str(),
                s.top1() < 0 ? "-" : fixed(s.top1(), 3).c_str(),
                s.top5() < 0 ? "-" : fixed(s.top5(), 3).c_str());
    if (s.non_finite())
      std::printf("  %lld values are NaN or infinite where the reference is finite\n",
                  static_cast<long long>(s.non_finite()));
  }
  return kExitOk;
}

}  // namespace polyinfer::cli
