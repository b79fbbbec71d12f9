// RNN: the simple recurrent network, Ht = f(Xt*(Wi^T) + Ht-1*(Ri^T) + Wbi + Rbi).
#include "providers/cpu/reference/rnn_util.h"

namespace polyinfer {
namespace {

class RnnKernel final : public Kernel {
 public:
  explicit RnnKernel(const KernelInfo& info) : attrs_(info, {"Tanh"}) {}

  void run(KernelContext& ctx) override {
    dispatch(FloatTypes{}, ctx.input(0).dtype(), attrs_.label.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = compute_t<T>;
      const rnn::Problem<C> p = rnn::load_problem<T>(ctx, attrs_, 1);
      std::vector<C> h = rnn::load_state<T>(ctx, 5, "initial_h", attrs_, p);
      std::vector<C> y(static_cast<size_t>(p.seq * p.dirs * p.batch * p.hidden), C(0));
      std::vector<C> rh(static_cast<size_t>(p.hidden));
      rnn::run_recurrence(attrs_, p, h, y, [&](int d, int64_t b, const C* xw) {
        C* hr = h.data() + (d * p.batch + b) * p.hidden;
        rnn::matvec_t(hr, p.r_of(d), p.hidden, p.hidden, p.rb_of(d), rh.data());
        const rnn::Activation& f = attrs_.act(d, 0);
        for (int64_t j = 0; j < p.hidden; ++j)
          hr[j] = static_cast<C>(f(attrs_.clipped(double(xw[j]) + rh[j])));
      });
      rnn::store_y<T>(ctx, attrs_, p, y);
      rnn::store_state<T>(ctx, 1, attrs_, p, h);
    });
  }

 private:
  rnn::Attrs attrs_;
};

}  // namespace

// RNN-1's output_sequence attribute only made Y optional, which every version allows; 14 added
// layout (read by rnn::Attrs) and 22 bfloat16.
PI_CPU_KERNEL(RNN, 1, 28, RnnKernel);

}  // namespace polyinfer
