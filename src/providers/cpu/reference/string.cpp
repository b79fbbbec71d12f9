// Text ops: StringNormalizer (stop-word removal and case folding) and TfIdfVectorizer (n-gram
// counting into a fixed vocabulary).
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/dispatch.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

// Case mapping covers ASCII letters only; other bytes (UTF-8 sequences) pass through unchanged.
std::string ascii_lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}
std::string ascii_upper(std::string s) {
  for (char& c : s)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return s;
}

class StringNormalizerKernel final : public Kernel {
 public:
  enum class Case { None, Lower, Upper };

  explicit StringNormalizerKernel(const KernelInfo& info)
      : case_sensitive_(info.attr_int("is_case_sensitive", 0) != 0) {
    const std::string action = info.attr_string("case_change_action", "NONE");
    if (action == "NONE") action_ = Case::None;
    else if (action == "LOWER")
      action_ = Case::Lower;
    else if (action == "UPPER")
      action_ = Case::Upper;
    else
      info.unsupported("case_change_action=" + action);
    for (const std::string& w : info.attr_strings("stopwords"))
      stopwords_.insert(case_sensitive_ ? w : ascii_lower(w));
  }

  void run(KernelContext& ctx) override {
    const std::string label = ctx.node().label();
    const Tensor& x = ctx.input(0);
    PI_CHECK(x.dtype() == DType::String, InvalidArgument, label, ": input must be strings, got ",
             x.describe());
    PI_CHECK(x.rank() == 1 || (x.rank() == 2 && x.dim(0) == 1), ShapeMismatch, label,
             ": input must be [C] or [1, C], got ", x.describe());
    const std::string* in = x.data<std::string>();
    std::vector<std::string> kept;
    for (int64_t i = 0; i < x.numel(); ++i) {
      const std::string key = case_sensitive_ ? in[i] : ascii_lower(in[i]);
      if (stopwords_.count(key)) continue;
      kept.push_back(action_ == Case::Lower   ? ascii_lower(in[i])
                     : action_ == Case::Upper ? ascii_upper(in[i])
                                              : in[i]);
    }
    // An input whose every word is a stop word yields one empty string, not an empty tensor.
    if (kept.empty()) kept.emplace_back();
    const int64_t n = static_cast<int64_t>(kept.size());
    Tensor& y = ctx.output(0, DType::String, x.rank() == 1 ? Shape{n} : Shape{1, n});
    std::string* out = y.data<std::string>();
    for (int64_t i = 0; i < n; ++i) out[i] = std::move(kept[static_cast<size_t>(i)]);
  }

 private:
  bool case_sensitive_;
  Case action_ = Case::None;
  std::set<std::string> stopwords_;
};

enum class TfIdfMode { TF, IDF, TFIDF };

// The n-gram vocabulary: each gram (a sequence of tokens) maps to its position in the pool.
template <class Tok> using GramIndex = std::map<std::vector<Tok>, int64_t>;

class TfIdfVectorizerKernel final : public Kernel {
 public:
  explicit TfIdfVectorizerKernel(const KernelInfo& info) {
    min_n_ = info.attr_int("min_gram_length");
    max_n_ = info.attr_int("max_gram_length");
    max_skip_ = info.attr_int("max_skip_count");
    const std::string mode = info.attr_string("mode");
    if (mode == "TF") mode_ = TfIdfMode::TF;
    else if (mode == "IDF")
      mode_ = TfIdfMode::IDF;
    else if (mode == "TFIDF")
      mode_ = TfIdfMode::TFIDF;
    else
      info.unsupported("mode=" + mode);
    const std::vector<int64_t> counts = info.attr_ints("ngram_counts");
    indexes_ = info.attr_ints("ngram_indexes");
    for (float w : info.attr_floats("weights")) weights_.push_back(w);
    const std::vector<int64_t> pool_i = info.attr_ints("pool_int64s");
    const std::vector<std::string> pool_s = info.attr_strings("pool_strings");
    strings_ = !pool_s.empty();
    const int64_t pool_size = static_cast<int64_t>(strings_ ? pool_s.size() : pool_i.size());
    const auto& label = info.node().label();
    PI_CHECK(min_n_ >= 1 && max_n_ >= min_n_ && max_skip_ >= 0, InvalidModel, label,
             ": need 1 <= min_gram_length <= max_gram_length and max_skip_count >= 0");
    PI_CHECK(weights_.empty() || weights_.size() == indexes_.size(), InvalidModel, label,
             ": weights and ngram_indexes differ in length");
    int64_t gram_no = 0;
    for (size_t level = 0; level < counts.size(); ++level) {
      const int64_t n = static_cast<int64_t>(level) + 1;
      const int64_t begin = counts[level];
      const int64_t end = level + 1 < counts.size() ? counts[level + 1] : pool_size;
      PI_CHECK(begin >= 0 && begin <= end && end <= pool_size && (end - begin) % n == 0,
               InvalidModel, label, ": ngram_counts does not split the pool into ", n, "-grams");
      for (int64_t p = begin; p < end; p += n, ++gram_no) {
        PI_CHECK(gram_no < static_cast<int64_t>(indexes_.size()), InvalidModel, label,
                 ": ngram_indexes has fewer entries than the pool has n-grams");
        if (strings_) {
          str_index_[std::vector<std::string>(pool_s.begin() + p, pool_s.begin() + p + n)] =
              gram_no;
        } else {
          int_index_[std::vector<int64_t>(pool_i.begin() + p, pool_i.begin() + p + n)] = gram_no;
        }
      }
    }
    for (int64_t i : indexes_) {
      PI_CHECK(i >= 0 && i < (int64_t{1} << 31), InvalidModel, label, ": bad ngram index ", i);
      out_size_ = std::max(out_size_, i + 1);
    }
  }

  void run(KernelContext& ctx) override {
    const std::string label = ctx.node().label();
    const Tensor& x = ctx.input(0);
    PI_CHECK(x.rank() == 1 || x.rank() == 2, ShapeMismatch, label,
             ": input must be [C] or [N, C], got ", x.describe());
    const int64_t rows = x.rank() == 2 ? x.dim(0) : 1;
    const int64_t cols = x.rank() == 2 ? x.dim(1) : x.dim(0);
    Tensor& y =
        ctx.output(0, DType::Float32, x.rank() == 2 ? Shape{rows, out_size_} : Shape{out_size_});
    std::vector<double> counts(static_cast<size_t>(rows * out_size_), 0.0);
    if (x.dtype() == DType::String) {
      PI_CHECK(strings_, InvalidArgument, label, ": string input but the pool holds integers");
      count_all(x.data<std::string>(), rows, cols, str_index_, counts);
    } else {
      PI_CHECK(!strings_, InvalidArgument, label, ": integer input but the pool holds strings");
      std::vector<int64_t> toks(static_cast<size_t>(x.numel()));
      dispatch(TypeList<int32_t, int64_t>{}, x.dtype(), label.c_str(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* p = x.data<T>();
        for (size_t i = 0; i < toks.size(); ++i) toks[i] = static_cast<int64_t>(p[i]);
      });
      count_all(toks.data(), rows, cols, int_index_, counts);
    }
    float* out = y.data<float>();
    for (size_t i = 0; i < counts.size(); ++i) out[i] = static_cast<float>(counts[i]);
  }

 private:
  // Counts, per row, every n-gram of the pool whose tokens sit `skip + 1` apart (for each skip
  // up to max_skip_count); a unigram is counted once per position, not once per skip.
  template <class Tok>
  void count_all(const Tok* toks, int64_t rows, int64_t cols, const GramIndex<Tok>& index,
                 std::vector<double>& out) const {
    std::vector<double> tf(indexes_.size());
    std::vector<Tok> gram;
    for (int64_t r = 0; r < rows; ++r) {
      std::fill(tf.begin(), tf.end(), 0.0);
      const Tok* row = toks + r * cols;
      for (int64_t n = min_n_; n <= max_n_; ++n) {
        const int64_t skips = n == 1 ? 0 : max_skip_;
        for (int64_t s = 0; s <= skips; ++s) {
          const int64_t stride = s + 1;
          for (int64_t start = 0; start + (n - 1) * stride < cols; ++start) {
            gram.clear();
            for (int64_t k = 0; k < n; ++k) gram.push_back(row[start + k * stride]);
            auto it = index.find(gram);
            if (it != index.end()) tf[static_cast<size_t>(it->second)] += 1;
          }
        }
      }
      for (size_t g = 0; g < tf.size(); ++g) {
        const double w = weights_.empty() ? 1.0 : weights_[g];
        double v = tf[g];
        if (mode_ == TfIdfMode::IDF) v = v > 0 ? w : 0.0;
        else if (mode_ == TfIdfMode::TFIDF)
          v *= w;
        // Several pool grams may share an output slot; their values add up.
        out[static_cast<size_t>(r * out_size_ + indexes_[g])] += v;
      }
    }
  }

  int64_t min_n_ = 1, max_n_ = 1, max_skip_ = 0, out_size_ = 0;
  TfIdfMode mode_ = TfIdfMode::TF;
  std::vector<int64_t> indexes_;
  std::vector<double> weights_;
  bool strings_ = false;
  GramIndex<int64_t> int_index_;
  GramIndex<std::string> str_index_;
};

}  // namespace

PI_CPU_KERNEL(StringNormalizer, 10, 28, StringNormalizerKernel);
PI_CPU_KERNEL(TfIdfVectorizer, 9, 28, TfIdfVectorizerKernel);

}  // namespace polyinfer
