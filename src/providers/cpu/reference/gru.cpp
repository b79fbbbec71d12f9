// GRU: gated recurrent unit, gates in the order z (update), r (reset), h (hidden).
//   zt = f(Xt*(Wz^T) + Ht-1*(Rz^T) + Wbz + Rbz)
//   rt = f(Xt*(Wr^T) + Ht-1*(Rr^T) + Wbr + Rbr)
//   ht = g(Xt*(Wh^T) + (rt (.) Ht-1)*(Rh^T) + Rbh + Wbh)     when linear_before_reset = 0
//   ht = g(Xt*(Wh^T) + rt (.) (Ht-1*(Rh^T) + Rbh) + Wbh)     otherwise
//   Ht = (1 - zt) (.) ht + zt (.) Ht-1
#include "providers/cpu/reference/rnn_util.h"

namespace polyinfer {
namespace {

class GruKernel final : public Kernel {
 public:
  explicit GruKernel(const KernelInfo& info)
      : attrs_(info, {"Sigmoid", "Tanh"}),
        linear_before_reset_(info.attr_int("linear_before_reset", 0) != 0) {}

  void run(KernelContext& ctx) override {
    dispatch(FloatTypes{}, ctx.input(0).dtype(), attrs_.label.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = compute_t<T>;
      const rnn::Problem<C> p = rnn::load_problem<T>(ctx, attrs_, 3);
      const int64_t H = p.hidden;
      std::vector<C> h = rnn::load_state<T>(ctx, 5, "initial_h", attrs_, p);
      std::vector<C> y(static_cast<size_t>(p.seq * p.dirs * p.batch * H), C(0));
      std::vector<C> rzr(static_cast<size_t>(2 * H)), rh(static_cast<size_t>(H));
      std::vector<C> z(static_cast<size_t>(H)), reset_h(static_cast<size_t>(H));
      rnn::run_recurrence(attrs_, p, h, y, [&](int d, int64_t b, const C* xw) {
        C* hr = h.data() + (d * p.batch + b) * H;
        const C* R = p.r_of(d);
        const C* Rb = p.rb_of(d);
        const rnn::Activation& f = attrs_.act(d, 0);
        const rnn::Activation& g = attrs_.act(d, 1);
        rnn::matvec_t(hr, R, 2 * H, H, Rb, rzr.data());  // the z and r rows of R
        for (int64_t j = 0; j < H; ++j) {
          z[j] = static_cast<C>(f(attrs_.clipped(double(xw[j]) + rzr[j])));
          const double r = f(attrs_.clipped(double(xw[H + j]) + rzr[H + j]));
          reset_h[j] = static_cast<C>(linear_before_reset_ ? r : r * hr[j]);
        }
        const C* Rh = R + 2 * H * H;
        if (linear_before_reset_) {
          rnn::matvec_t(hr, Rh, H, H, Rb + 2 * H, rh.data());
          for (int64_t j = 0; j < H; ++j) rh[j] = reset_h[j] * rh[j];
        } else {
          rnn::matvec_t(reset_h.data(), Rh, H, H, Rb + 2 * H, rh.data());
        }
        for (int64_t j = 0; j < H; ++j) {
          const double ht = g(attrs_.clipped(double(xw[2 * H + j]) + rh[j]));
          hr[j] = static_cast<C>((1 - double(z[j])) * ht + double(z[j]) * hr[j]);
        }
      });
      rnn::store_y<T>(ctx, attrs_, p, y);
      rnn::store_state<T>(ctx, 1, attrs_, p, h);
    });
  }

 private:
  rnn::Attrs attrs_;
  bool linear_before_reset_;
};

}  // namespace

// GRU-1 lacked linear_before_reset (its default, 0, is GRU-1's behaviour) and had
// output_sequence, which only made Y optional; 14 added layout, 22 bfloat16.
PI_CPU_KERNEL(GRU, 1, 28, GruKernel);

}  // namespace polyinfer
