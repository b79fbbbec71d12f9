// Einsum: a general sum of products over labelled axes, evaluated as one loop nest over every
// label (output labels outside, summed labels inside).
#include <algorithm>
#include <cctype>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

// Letters are labels 0..51; the dimensions an ellipsis stands for are labels 52 + j, aligned to
// the right across operands as in numpy broadcasting.
constexpr int kEllipsisBase = 52;

struct Term {
  std::vector<int> letters;  // letter labels in order; -1 marks where the ellipsis sits
  bool ellipsis = false;
};

int letter_label(char c) {
  return std::islower(static_cast<unsigned char>(c)) ? c - 'a' : 26 + (c - 'A');
}

Term parse_term(const std::string& s, const std::string& who) {
  Term t;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '.') {
      PI_CHECK(!t.ellipsis && s.compare(i, 3, "...") == 0, InvalidModel, who,
               ": malformed ellipsis in equation term '", s, "'");
      t.ellipsis = true;
      t.letters.push_back(-1);
      i += 2;
    } else {
      PI_CHECK(std::isalpha(static_cast<unsigned char>(c)), InvalidModel, who,
               ": invalid character '", c, "' in equation term '", s, "'");
      t.letters.push_back(letter_label(c));
    }
  }
  return t;
}

class EinsumKernel final : public Kernel {
 public:
  explicit EinsumKernel(const KernelInfo& info) : who_(info.node().label()) {
    std::string eq;
    for (char c : info.attr_string("equation"))
      if (c != ' ') eq += c;
    const size_t arrow = eq.find("->");
    explicit_out_ = arrow != std::string::npos;
    const std::string lhs = explicit_out_ ? eq.substr(0, arrow) : eq;
    size_t start = 0;
    while (true) {
      const size_t comma = lhs.find(',', start);
      inputs_.push_back(parse_term(lhs.substr(start, comma - start), who_));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (explicit_out_) output_ = parse_term(eq.substr(arrow + 2), who_);
    PI_CHECK(inputs_.size() == info.num_inputs(), InvalidModel, who_, ": equation has ",
             inputs_.size(), " operands but the node has ", info.num_inputs(), " inputs");
  }

  void run(KernelContext& ctx) override {
    const size_t n_in = inputs_.size();
    // Expand each operand's term into one label per dimension.
    std::vector<std::vector<int>> dims_labels(n_in);
    int ell_rank = 0;
    for (size_t i = 0; i < n_in; ++i) {
      const Tensor& t = ctx.input(i);
      const int explicit_count =
          static_cast<int>(inputs_[i].letters.size()) - (inputs_[i].ellipsis ? 1 : 0);
      const int e = t.rank() - explicit_count;
      PI_CHECK(e == 0 || (inputs_[i].ellipsis && e > 0), ShapeMismatch, who_, ": operand ", i, " ",
               t.describe(), " does not match its equation term");
      ell_rank = std::max(ell_rank, e);
    }
    std::vector<int64_t> size(kEllipsisBase + ell_rank, -1);
    for (size_t i = 0; i < n_in; ++i) {
      const Tensor& t = ctx.input(i);
      PI_CHECK(t.dtype() == ctx.input(0).dtype(), InvalidArgument, who_, ": operand dtypes differ");
      const int e =
          t.rank() - (static_cast<int>(inputs_[i].letters.size()) - (inputs_[i].ellipsis ? 1 : 0));
      for (int l : inputs_[i].letters) {
        if (l >= 0) {
          dims_labels[i].push_back(l);
        } else {
          for (int j = 0; j < e; ++j) dims_labels[i].push_back(kEllipsisBase + ell_rank - e + j);
        }
      }
      for (int d = 0; d < t.rank(); ++d) {
        const int l = dims_labels[i][d];
        int64_t& s = size[l];
        const bool bcast = l >= kEllipsisBase;
        if (s < 0 || (bcast && s == 1)) {
          s = t.dim(d);
        } else {
          PI_CHECK(s == t.dim(d) || (bcast && t.dim(d) == 1), ShapeMismatch, who_, ": dimension ",
                   d, " of operand ", i, " (", t.dim(d), ") disagrees with size ", s,
                   " of its label elsewhere");
        }
      }
    }

    std::vector<int> out_labels;
    if (explicit_out_) {
      for (int l : output_.letters) {
        if (l >= 0) {
          PI_CHECK(size[l] >= 0, InvalidModel, who_, ": output label '",
                   char(l < 26 ? 'a' + l : 'A' + l - 26), "' appears in no operand");
          out_labels.push_back(l);
        } else {
          for (int j = 0; j < ell_rank; ++j) out_labels.push_back(kEllipsisBase + j);
        }
      }
      std::vector<int> sorted = out_labels;
      std::sort(sorted.begin(), sorted.end());
      PI_CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(), InvalidModel, who_,
               ": a label repeats in the output");
    } else {
      for (int j = 0; j < ell_rank; ++j) out_labels.push_back(kEllipsisBase + j);
      // Implicit output: the letters used exactly once, in alphabetical (ASCII) order.
      std::vector<int> count(kEllipsisBase, 0);
      for (size_t i = 0; i < n_in; ++i)
        for (int l : inputs_[i].letters)
          if (l >= 0) ++count[l];
      for (int l = 26; l < 52; ++l)
        if (count[l] == 1) out_labels.push_back(l);
      for (int l = 0; l < 26; ++l)
        if (count[l] == 1) out_labels.push_back(l);
    }
    std::vector<int> sum_labels;
    for (int l = 0; l < static_cast<int>(size.size()); ++l)
      if (size[l] >= 0 && std::find(out_labels.begin(), out_labels.end(), l) == out_labels.end())
        sum_labels.push_back(l);

    // Per operand, the element stride of each label (summed over repeats, which walks a
    // diagonal; 0 for a broadcast dimension).
    std::vector<std::vector<int64_t>> lstride(n_in, std::vector<int64_t>(size.size(), 0));
    for (size_t i = 0; i < n_in; ++i) {
      const auto st = strides_of(ctx.input(i).shape());
      for (size_t d = 0; d < st.size(); ++d) {
        const int l = dims_labels[i][d];
        if (ctx.input(i).dim(static_cast<int>(d)) != 1 || size[l] == 1) lstride[i][l] += st[d];
      }
    }

    Shape ys;
    for (int l : out_labels) ys.push_back(size[l]);
    Shape sum_shape;
    for (int l : sum_labels) sum_shape.push_back(size[l]);
    const int64_t sum_total = shape_numel(sum_shape);
    Tensor& y = ctx.output(0, ctx.input(0).dtype(), ys);
    dispatch(NumericTypes{}, y.dtype(), "Einsum", [&](auto tag) {
      using T = typename decltype(tag)::type;
      using A = compute_t<T>;
      std::vector<const T*> in(n_in);
      for (size_t i = 0; i < n_in; ++i) in[i] = ctx.input(i).data<T>();
      T* yp = y.data<T>();
      std::vector<int64_t> oidx(out_labels.size()), sidx(sum_labels.size());
      std::vector<int64_t> base(n_in), off(n_in);
      for (int64_t o = 0; o < y.numel(); ++o) {
        int64_t rest = o;
        for (int d = static_cast<int>(ys.size()) - 1; d >= 0; --d) {
          oidx[d] = rest % ys[d];
          rest /= ys[d];
        }
        for (size_t i = 0; i < n_in; ++i) {
          base[i] = 0;
          for (size_t d = 0; d < out_labels.size(); ++d)
            base[i] += oidx[d] * lstride[i][out_labels[d]];
        }
        A acc = A(0);
        for (int64_t s = 0; s < sum_total; ++s) {
          int64_t r = s;
          for (int d = static_cast<int>(sum_shape.size()) - 1; d >= 0; --d) {
            sidx[d] = r % sum_shape[d];
            r /= sum_shape[d];
          }
          A prod = A(1);
          for (size_t i = 0; i < n_in; ++i) {
            int64_t at = base[i];
            for (size_t d = 0; d < sum_labels.size(); ++d)
              at += sidx[d] * lstride[i][sum_labels[d]];
            prod *= A(in[i][at]);
          }
          acc += prod;
        }
        yp[o] = T(acc);
      }
    });
  }

 private:
  std::vector<Term> inputs_;
  Term output_;
  bool explicit_out_ = false;
  std::string who_;
};

}  // namespace

PI_CPU_KERNEL(Einsum, 12, 28, EinsumKernel);

}  // namespace polyinfer
