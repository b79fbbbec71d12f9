// LSTM: gates in the order i (input), o (output), f (forget), c (cell); peepholes P = [Pi Po Pf].
//   it = f(Xt*(Wi^T) + Ht-1*(Ri^T) + Pi (.) Ct-1 + Wbi + Rbi)
//   ft = f(Xt*(Wf^T) + Ht-1*(Rf^T) + Pf (.) Ct-1 + Wbf + Rbf)   (1 - it when input_forget)
//   ct = g(Xt*(Wc^T) + Ht-1*(Rc^T) + Wbc + Rbc)
//   Ct = ft (.) Ct-1 + it (.) ct
//   ot = f(Xt*(Wo^T) + Ht-1*(Ro^T) + Po (.) Ct + Wbo + Rbo)
//   Ht = ot (.) h(Ct)
#include "providers/cpu/reference/rnn_util.h"

namespace polyinfer {
namespace {

class LstmKernel final : public Kernel {
 public:
  explicit LstmKernel(const KernelInfo& info)
      : attrs_(info, {"Sigmoid", "Tanh", "Tanh"}),
        input_forget_(info.attr_int("input_forget", 0) != 0) {}

  void run(KernelContext& ctx) override {
    dispatch(FloatTypes{}, ctx.input(0).dtype(), attrs_.label.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = compute_t<T>;
      const rnn::Problem<C> p = rnn::load_problem<T>(ctx, attrs_, 4);
      const int64_t H = p.hidden;
      std::vector<C> h = rnn::load_state<T>(ctx, 5, "initial_h", attrs_, p);
      std::vector<C> c = rnn::load_state<T>(ctx, 6, "initial_c", attrs_, p);
      std::vector<C> peep(static_cast<size_t>(p.dirs * 3 * H), C(0));
      if (ctx.has_input(7)) {
        rnn::check_input(attrs_, "P", ctx.input(7), ctx.input(0).dtype(), {p.dirs, 3 * H});
        peep = rnn::to_compute<T>(ctx.input(7));
      }
      std::vector<C> y(static_cast<size_t>(p.seq * p.dirs * p.batch * H), C(0));
      std::vector<C> gates(static_cast<size_t>(4 * H));
      rnn::run_recurrence(attrs_, p, h, y, [&](int d, int64_t b, const C* xw) {
        C* hr = h.data() + (d * p.batch + b) * H;
        C* cr = c.data() + (d * p.batch + b) * H;
        const C* P = peep.data() + d * 3 * H;
        const rnn::Activation& f = attrs_.act(d, 0);
        const rnn::Activation& g = attrs_.act(d, 1);
        const rnn::Activation& hact = attrs_.act(d, 2);
        rnn::matvec_t(hr, p.r_of(d), 4 * H, H, p.rb_of(d), gates.data());
        for (int64_t j = 0; j < H; ++j) {
          const double cprev = cr[j];
          const double i = f(attrs_.clipped(xw[j] + double(gates[j]) + P[j] * cprev));
          const double fg = input_forget_
                                ? 1 - i
                                : f(attrs_.clipped(xw[2 * H + j] + double(gates[2 * H + j]) +
                                                   P[2 * H + j] * cprev));
          const double cc = g(attrs_.clipped(xw[3 * H + j] + double(gates[3 * H + j])));
          const double cnew = fg * cprev + i * cc;
          const double o = f(attrs_.clipped(xw[H + j] + double(gates[H + j]) + P[H + j] * cnew));
          cr[j] = static_cast<C>(cnew);
          hr[j] = static_cast<C>(o * hact(cnew));
        }
      });
      rnn::store_y<T>(ctx, attrs_, p, y);
      rnn::store_state<T>(ctx, 1, attrs_, p, h);
      rnn::store_state<T>(ctx, 2, attrs_, p, c);
    });
  }

 private:
  rnn::Attrs attrs_;
  bool input_forget_;
};

}  // namespace

// LSTM-1's output_sequence attribute only made Y optional, which every version allows; 14 added
// layout (read by rnn::Attrs) and 22 bfloat16.
PI_CPU_KERNEL(LSTM, 1, 28, LstmKernel);

}  // namespace polyinfer
