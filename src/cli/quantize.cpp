// `polyinfer quantize MODEL -o OUT.onnx --calibration PATH [...]`: static post-training INT8
// quantization. The model is first simplified to standard ONNX (optimizer level 1: BatchNorm
// folded into Conv, constants folded), run in float over the calibration samples to record each
// activation's range, then written as a QDQ model (src/quant/qdq.h) that ONNX Runtime and
// polyinfer both run. Nothing is written unless every step succeeded.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include "cli/cli.h"
#include "cli/inputs.h"
#include "cli/json.h"
#include "infer/infer.h"
#include "onnx/export.h"
#include "onnx/import.h"
#include "onnx/npy.h"
#include "opt/optimizer.h"
#include "quant/dynamic.h"
#include "quant/fp16.h"
#include "quant/quantize.h"

namespace polyinfer::cli {

namespace {

const char* kUsage =
    "usage: polyinfer quantize MODEL -o OUT.onnx --calibration PATH [--method M]\n"
    "                          [--percentile P] [--per-channel] [--reduce-range]\n"
    "                          [--symmetric|--asymmetric]\n"
    "                          [--exclude NAME_OR_OPTYPE]... [--samples N] [--threads N] [--json]\n"
    "                          [--target-accuracy METRIC=VALUE [--validation PATH]\n"
    "                           [--max-excluded N]]\n"
    "  Static INT8: int8 activations and weights in a standard QDQ model (QuantizeLinear /\n"
    "  DequantizeLinear pairs; int32 biases) for Conv, MatMul and Gemm.\n"
    "  --calibration PATH  a folder of .npy files (one sample each, or batched: split into rows)\n"
    "                      or one .npy file; inputs like those the model will see in use.\n"
    "                      Several inputs: a folder with INPUT.npy per input (batched), or\n"
    "                      one subfolder per sample holding INPUT.npy per input\n"
    "  --method M          minmax (default), percentile or entropy (KL divergence, as TensorRT)\n"
    "  --percentile P      for --method percentile (default 99.999)\n"
    "  --per-channel       one weight scale per output channel (more accurate; opset >= 13)\n"
    "  --reduce-range      7-bit weights ([-63, 63]): exact int8 on x86 CPUs without VNNI\n"
    "                      (AVX2), whose u8 x s8 products saturate in pairs at 16 bits\n"
    "  --symmetric         activations with zero point 0; default --asymmetric (a ReLU output\n"
    "                      spends all 256 levels on its positive range)\n"
    "  --exclude X         keep node X, or every node of op type X, in float (repeatable)\n"
    "  --samples N         use the first N samples (default: all); more than there are is an "
    "error\n"
    "  --target-accuracy M=V  keep the layers that add the most error in float until the int8\n"
    "                      model agrees with float: top1=0.99 (top-1 agreement), cosine=0.995 or\n"
    "                      snr=30 (dB), on --validation PATH (.npy as --calibration; default: the\n"
    "                      calibration samples). Exit status 2 when it cannot be reached.\n"
    "  --max-excluded N    give up after returning N layers to float (default: no limit)\n"
    "\n"
    "       polyinfer quantize MODEL -o OUT.onnx --dynamic [--per-channel] [--reduce-range]\n"
    "                          [--exclude X]...\n"
    "  Dynamic INT8, no calibration: MatMul/Gemm weights int8, activations quantized at run time\n"
    "  (DynamicQuantizeLinear + MatMulInteger); suits transformers.\n"
    "       polyinfer quantize MODEL -o OUT.onnx --fp16 [--exclude X]...\n"
    "  Float16 weights and activations, keeping reductions (Softmax, LayerNormalization, "
    "Reduce*),\n"
    "  Exp, Log, Pow, Sqrt, Div and unlisted ops in float32; inputs and outputs stay float32.\n";

// "calibrating  [##########          ] 16/32" redrawn in place, on a terminal only.
class Progress {
 public:
  Progress(std::string what, int total) : what_(std::move(what)), total_(total), tty_(isatty(2)) {}
  void step(int done) {
    if (!tty_) return;
    const int width = 30, filled = total_ ? done * width / total_ : width;
    std::fprintf(stderr, "\r%-12s [%s%s] %d/%d", what_.c_str(),
                 std::string(size_t(filled), '#').c_str(),
                 std::string(size_t(width - filled), ' ').c_str(), done, total_);
    if (done == total_) std::fprintf(stderr, "\n");
    std::fflush(stderr);
  }

 private:
  std::string what_;
  int total_;
  bool tty_;
};

// One sample checked against the input it is for: dtype, static dimensions, finite values.
void check_sample(const std::string& flag, const Sample& s, const ValueSpec& in) {
  const Tensor& t = s.tensor;
  const std::string what = flag.substr(2) + " sample " + s.origin;
  PI_CHECK(t.dtype() == in.dtype, InvalidArgument, what, " is ", t.describe(), "; input '", in.name,
           "' takes ", in.type);
  bool fits = !in.has_shape || t.rank() == static_cast<int>(in.shape.size());
  for (size_t d = 0; fits && in.has_shape && d < in.shape.size(); ++d)
    fits = in.shape[d] < 0 || in.shape[d] == t.shape()[d];
  PI_CHECK(fits, ShapeMismatch, what, " has shape ", t.describe(), "; input '", in.name, "' takes ",
           in.type);
  if (t.dtype() == DType::Float32) {
    const float* x = t.data<float>();
    for (int64_t i = 0; i < t.numel(); ++i)
      PI_CHECK(std::isfinite(x[i]), InvalidArgument, what, " holds ", x[i], " at element ", i,
               ": samples must be finite");
  }
}

// The calibration (or validation) feeds, each checked against the model's inputs before
// anything runs. One input: PATH is a .npy file or a folder of them. Several inputs: PATH is a
// folder holding INPUT.npy for each input (batched files, split into rows) — or subfolders, one
// per sample, each holding INPUT.npy for each input.
std::vector<std::map<std::string, Value>> calibration_feeds(const std::string& flag,
                                                            const std::string& path,
                                                            const std::vector<ValueSpec>& inputs,
                                                            int want) {
  namespace fs = std::filesystem;
  std::vector<std::map<std::string, Value>> feeds;
  std::vector<std::vector<Sample>> per_input;
  std::error_code ec;
  if (inputs.size() == 1) {
    per_input.push_back(read_samples(flag, path, inputs[0], SplitRows::WhenBatchIsOneOrDynamic));
  } else {
    PI_CHECK(fs::is_directory(path, ec), InvalidArgument, flag, ": the model takes ", inputs.size(),
             " inputs, so '", path,
             "' must be a folder with one INPUT.npy per input (or one "
             "subfolder per sample holding them)");
    if (fs::exists(fs::path(path) / (inputs[0].name + ".npy"), ec)) {
      for (const auto& in : inputs) {
        const std::string f = (fs::path(path) / (in.name + ".npy")).string();
        PI_CHECK(fs::is_regular_file(f, ec), InvalidArgument, flag, ": '", f,
                 "' is missing (input '", in.name, "')");
        per_input.push_back(read_samples(flag, f, in, SplitRows::WhenBatchIsOneOrDynamic));
      }
    } else {
      std::vector<std::string> dirs;
      for (const auto& e : fs::directory_iterator(path, ec))
        if (e.is_directory()) dirs.push_back(e.path().string());
      std::sort(dirs.begin(), dirs.end());
      PI_CHECK(!dirs.empty(), InvalidArgument, flag, ": '", path, "' holds neither ",
               inputs[0].name, ".npy nor one subfolder per sample");
      per_input.resize(inputs.size());
      for (const auto& d : dirs)
        for (size_t k = 0; k < inputs.size(); ++k) {
          const std::string f = (fs::path(d) / (inputs[k].name + ".npy")).string();
          PI_CHECK(fs::is_regular_file(f, ec), InvalidArgument, flag, ": '", f,
                   "' is missing (input '", inputs[k].name, "')");
          per_input[k].push_back({read_npy(f), f});
        }
    }
  }
  const size_t n = per_input[0].size();
  for (size_t k = 1; k < inputs.size(); ++k)
    PI_CHECK(per_input[k].size() == n, InvalidArgument, flag, ": input '", inputs[0].name, "' has ",
             n, " samples but '", inputs[k].name, "' has ", per_input[k].size());
  PI_CHECK(want <= 0 || size_t(want) <= n, InvalidArgument, "--samples ", want, ": '", path,
           "' holds only ", n, " sample", n == 1 ? "" : "s", " for input '", inputs[0].name, "'");
  const size_t count = want > 0 ? size_t(want) : n;
  for (size_t i = 0; i < count; ++i) {
    std::map<std::string, Value> feed;
    for (size_t k = 0; k < inputs.size(); ++k) {
      check_sample(flag, per_input[k][i], inputs[k]);
      feed.emplace(inputs[k].name, Value(per_input[k][i].tensor));
    }
    feeds.push_back(std::move(feed));
  }
  return feeds;
}

std::string megabytes(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f MB", double(bytes) / 1e6);
  return buf;
}

// Writes `model` to `out` through a temporary file: a failure leaves no partial model behind.
void write_model(const Model& model, const std::string& out) {
  const std::string tmp = out + ".partial";
  try {
    export_onnx_file(model, tmp);
    std::filesystem::rename(tmp, out);
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    throw;
  }
}

// --dynamic and --fp16: rewrites that need no calibration data.
int convert_without_data(const Args& args) {
  const std::string out = args.get("output");
  Model model = import_onnx_file(args.positional[0]);
  infer::infer_types(model);
  const opt::OptimizeReport simplified = opt::optimize(*model.graph, 1);
  std::set<std::string> exclude;
  for (const auto& x : args.all("exclude")) exclude.insert(x);
  std::vector<std::string> notes;
  std::string summary;
  JsonWriter j;
  j.begin_object().key("model").value(args.positional[0]).key("output").value(out);
  if (args.flag("dynamic")) {
    const quant::DynamicReport r = quant::quantize_dynamic(
        *model.graph, {args.flag("per-channel"), args.flag("reduce-range"), exclude});
    PI_CHECK(r.nodes > 0, InvalidArgument, "quantize --dynamic: ", args.positional[0],
             " has no MatMul or Gemm with a constant 2-D float32 weight");
    summary = "int8 (dynamic): " + std::to_string(r.nodes) + " MatMul/Gemm with int8 weights" +
              (args.flag("per-channel") ? " per column" : " per tensor") +
              (args.flag("reduce-range") ? " (7-bit)" : "") + ", activations " +
              "quantized at run time; weights " + megabytes(r.float_bytes) + " -> " +
              megabytes(r.quantized_bytes);
    notes = r.notes;
    j.key("mode")
        .value("dynamic")
        .key("reduce_range")
        .value(args.flag("reduce-range"))
        .key("nodes")
        .value(r.nodes)
        .key("float_bytes")
        .value(r.float_bytes)
        .key("quantized_bytes")
        .value(r.quantized_bytes);
  } else {
    const quant::Fp16Report r = quant::convert_fp16(*model.graph, {exclude});
    PI_CHECK(r.fp16_nodes > 0, InvalidArgument, "quantize --fp16: ", args.positional[0],
             " has no float32 node that float16 suits");
    summary = "float16: " + std::to_string(r.fp16_nodes) + " nodes in float16, " +
              std::to_string(r.fp32_nodes) + " kept in float32, " + std::to_string(r.casts) +
              " Cast nodes at the borders; weights " + megabytes(r.float_bytes) + " -> " +
              megabytes(r.half_bytes);
    j.key("mode")
        .value("fp16")
        .key("fp16_nodes")
        .value(r.fp16_nodes)
        .key("fp32_nodes")
        .value(r.fp32_nodes)
        .key("casts")
        .value(r.casts)
        .key("float_bytes")
        .value(r.float_bytes)
        .key("quantized_bytes")
        .value(r.half_bytes);
  }
  write_model(model, out);
  if (args.flag("json")) {
    j.key("notes").strings(notes).end_object();
    std::cout << j.str() << "\n";
  } else {
    std::cout << "simplified (optimizer level 1): " << simplified.summary() << "\n"
              << summary << "\n";
    for (const auto& s : notes) std::cout << "note: " << s << "\n";
    std::cout << "wrote " << out << " (standard ONNX)\n";
  }
  return kExitOk;
}

}  // namespace

int cmd_quantize(const std::vector<std::string>& argv) {
  const Args args = parse_args(
      argv,
      {"help", "per-channel", "reduce-range", "symmetric", "asymmetric", "json", "dynamic", "fp16"},
      {"output", "calibration", "method", "percentile", "exclude", "samples", "threads",
       "target-accuracy", "validation", "max-excluded"},
      "quantize");
  if (args.flag("help")) {
    std::cout << kUsage;
    return kExitOk;
  }
  const bool without_data = args.flag("dynamic") || args.flag("fp16");
  if (args.positional.size() != 1 || args.get("output").empty() ||
      args.get("calibration").empty() != without_data) {
    std::cerr << kUsage;
    return kExitUsage;
  }
  if (without_data) {
    if (args.flag("dynamic") && args.flag("fp16"))
      throw UsageError("quantize: --dynamic and --fp16 exclude each other");
    for (const char* f : {"method", "percentile", "symmetric", "asymmetric", "samples",
                          "target-accuracy", "validation", "max-excluded"})
      if (args.flag(f))
        throw UsageError(std::string("quantize: --") + f +
                         " needs calibration; --dynamic and "
                         "--fp16 take none");
    for (const char* f : {"per-channel", "reduce-range"})
      if (args.flag("fp16") && args.flag(f))
        throw UsageError(std::string("quantize: --") + f + " goes with int8, not --fp16");
    return convert_without_data(args);
  }
  if (args.flag("symmetric") && args.flag("asymmetric"))
    throw UsageError("quantize: --symmetric and --asymmetric exclude each other");
  const quant::Method method = quant::parse_method(args.get("method", "minmax"));
  double percentile = 99.999;
  if (args.flag("percentile")) {
    char* end = nullptr;
    const std::string p = args.get("percentile");
    percentile = std::strtod(p.c_str(), &end);
    if (p.empty() || *end || !(percentile > 0 && percentile <= 100))
      throw UsageError("--percentile must be a number in (0, 100], got '" + p + "'");
  }
  quant::QdqOptions qo;
  qo.per_channel = args.flag("per-channel");
  qo.symmetric_activations = args.flag("symmetric");
  qo.reduce_range = args.flag("reduce-range");
  for (const auto& x : args.all("exclude")) qo.exclude.insert(x);
  const int threads = args.get_int("threads", 0, 0, 4096);
  const int want = args.get_int("samples", 0, 1, 1 << 30);

  quant::StaticOptions so;
  so.qdq = qo;
  so.method = method;
  so.percentile = percentile;
  so.threads = threads;
  if (args.flag("target-accuracy")) so.target = quant::parse_target(args.get("target-accuracy"));
  else if (args.flag("validation") || args.flag("max-excluded"))
    throw UsageError("quantize: --validation and --max-excluded go with --target-accuracy");
  so.max_excluded = args.get_int("max-excluded", 0, 1, 1 << 30);
  std::unique_ptr<Progress> bar;
  so.progress = [&](const char* phase, int done, int total) {
    if (done == 1) bar = std::make_unique<Progress>(phase, total);
    bar->step(done);
  };

  Model model = import_onnx_file(args.positional[0]);
  infer::infer_types(model);
  std::vector<ValueSpec> in;
  for (const auto& input : model.graph->inputs) {
    if (model.graph->initializers.count(input.name)) continue;  // IR < 4: a weight, not an input
    ValueSpec v;
    v.name = input.name;
    v.dtype = input.type.elem;
    v.has_shape = input.type.has_shape;
    v.shape = input.type.dims;
    v.type = input.type.str();
    in.push_back(v);
  }
  const auto feeds = calibration_feeds("--calibration", args.get("calibration"), in, want);
  const auto validation = args.flag("validation")
                              ? calibration_feeds("--validation", args.get("validation"), in, 0)
                              : std::vector<std::map<std::string, Value>>{};
  const quant::StaticReport r = quant::quantize_static(model, feeds, so, validation);

  const std::string out = args.get("output");
  write_model(model, out);

  std::string ops;
  for (const auto& [op, c] : r.quantized_ops)
    ops += (ops.empty() ? "" : ", ") + op + " " + std::to_string(c);
  if (args.flag("json")) {
    JsonWriter j;
    j.begin_object()
        .key("model")
        .value(args.positional[0])
        .key("output")
        .value(out)
        .key("method")
        .value(quant::method_name(method))
        .key("samples")
        .value(r.samples)
        .key("per_channel")
        .value(qo.per_channel)
        .key("symmetric_activations")
        .value(qo.symmetric_activations)
        .key("reduce_range")
        .value(qo.reduce_range)
        .key("nodes")
        .value(r.qdq.nodes)
        .key("activations")
        .value(r.qdq.activations)
        .key("weights")
        .value(r.qdq.weights)
        .key("biases")
        .value(r.qdq.biases)
        .key("float_bytes")
        .value(r.qdq.float_bytes)
        .key("quantized_bytes")
        .value(r.qdq.quantized_bytes);
    if (!so.target.metric.empty()) {
      j.key("target")
          .begin_object()
          .key("metric")
          .value(so.target.metric)
          .key("value")
          .value(so.target.value)
          .key("met")
          .value(r.target_met)
          .key("all_int8_ms")
          .value(r.all_int8_ms)
          .key("written_ms")
          .value(r.written_ms)
          .key("steps")
          .begin_array();
      for (const auto& st : r.search)
        j.begin_object()
            .key("excluded")
            .value(st.excluded)
            .key("op")
            .value(st.op)
            .key("metric")
            .value(st.metric)
            .end_object();
      j.end_array().end_object();
    }
    j.key("notes").begin_array();
    for (const auto& s : r.plan.notes) j.value(s);
    for (const auto& s : r.qdq.notes) j.value(s);
    j.end_array().end_object();
    std::cout << j.str() << "\n";
  } else {
    std::cout << "simplified (optimizer level 1): " << r.simplified.summary() << "\n"
              << "calibrated " << r.qdq.activations << " activations on " << r.samples << " sample"
              << (r.samples == 1 ? "" : "s") << " (" << quant::method_name(method)
              << (method == quant::Method::Percentile ? " " + args.get("percentile", "99.999") : "")
              << ")\n"
              << "int8: " << r.qdq.nodes << " nodes (" << ops << "), " << r.qdq.weights
              << " weights" << (qo.per_channel ? " per channel" : " per tensor")
              << (qo.reduce_range ? " (7-bit)" : "") << ", " << r.qdq.biases
              << " int32 biases; weights " << megabytes(r.qdq.float_bytes) << " -> "
              << megabytes(r.qdq.quantized_bytes) << "\n";
    for (const auto& s : r.plan.notes) std::cout << "note: " << s << "\n";
    for (const auto& s : r.qdq.notes) std::cout << "note: " << s << "\n";
    if (!so.target.metric.empty()) {
      std::cout << "target " << so.target.metric << " >= " << so.target.value << ":\n";
      for (const auto& st : r.search)
        std::cout << "  "
                  << (st.excluded.empty() ? "all int8"
                                          : "+ float " + st.op + " '" + st.excluded + "'")
                  << ": " << so.target.metric << " " << st.metric << "\n";
      char buf[160];
      std::snprintf(buf, sizeof buf, "latency: all int8 %.3f ms, written %.3f ms (%+.0f%%)\n",
                    r.all_int8_ms, r.written_ms, 100.0 * (r.written_ms / r.all_int8_ms - 1));
      std::cout << (r.target_met ? "target met with " : "target NOT met with ")
                << r.search.size() - 1 << " layer" << (r.search.size() == 2 ? "" : "s")
                << " kept in float; " << buf;
    }
    std::cout << "wrote " << out << " (QDQ, standard ONNX)\n";
  }
  if (!r.target_met) {
    std::cerr << "error: --target-accuracy " << args.get("target-accuracy")
              << " not reached (best written); try --method entropy or percentile, "
                 "--per-channel, or more representative calibration data\n";
    return kExitCheck;
  }
  return kExitOk;
}

}  // namespace polyinfer::cli
