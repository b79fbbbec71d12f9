// Inference of the recurrent layers RNN, GRU and LSTM: Y [seq_length, num_directions, batch,
// hidden] and the final states Y_h (and LSTM's Y_c) [num_directions, batch, hidden]; with
// layout=1 (opset 14) Y [batch, seq_length, num_directions, hidden] and the states [batch,
// num_directions, hidden].
#include <initializer_list>
#include <string>

#include "infer/rule_util.h"

namespace polyinfer::infer {
namespace {

// Dimension d of input i, or unknown.
Dim dim_of(const Context& ctx, size_t i, size_t rank, size_t d) {
  const auto s = ctx.shape(i);
  return s && s->size() == rank && d < rank ? (*s)[d] : Dim::unknown();
}

// The first of `dims` that is a number, else the first symbol, else unknown.
Dim first_known(std::initializer_list<Dim> dims) {
  for (const Dim& d : dims)
    if (d.known() && d.value >= 0) return d;
  for (const Dim& d : dims)
    if (!d.known() && !d.symbol.empty()) return d;
  return Dim::unknown();
}

// `total` / `parts` where it divides, else unknown.
Dim divided(const Dim& total, int64_t parts) {
  return total.known() && total.value >= 0 && total.value % parts == 0
             ? Dim::of(total.value / parts)
             : Dim::unknown();
}

// Inputs X, W, R, B, sequence_lens, initial_h (and LSTM's initial_c, P); `gates` weight blocks
// per direction (RNN 1, GRU 3, LSTM 4); `states` final states (Y_h, and LSTM's Y_c).
void recurrent(Context& ctx, int64_t gates, size_t states) {
  const DType elem = ctx.elem(0);
  const int64_t layout = ctx.attr_int("layout", 0);
  if (layout != 0 && layout != 1) {
    for (size_t o = 0; o <= states; ++o) ctx.set_elem(o, elem);
    return;
  }
  const std::string direction = ctx.attr_string("direction", "forward");
  Dim dirs = direction == "bidirectional"                       ? Dim::of(2)
             : direction == "forward" || direction == "reverse" ? Dim::of(1)
                                                                : Dim::unknown();
  // X [seq, batch, input] (layout 1: [batch, seq, input]); W [dirs, gates*hidden, input];
  // R [dirs, gates*hidden, hidden]; B [dirs, 2*gates*hidden]; initial_h [dirs, batch, hidden]
  // (layout 1: [batch, dirs, hidden]).
  const size_t seq_axis = layout == 0 ? 0 : 1, batch_axis = layout == 0 ? 1 : 0;
  const size_t state_dirs = layout == 0 ? 0 : 1, state_batch = layout == 0 ? 1 : 0;
  const Dim seq = dim_of(ctx, 0, 3, seq_axis);
  Dim batch = first_known({dim_of(ctx, 0, 3, batch_axis), dim_of(ctx, 5, 3, state_batch)});
  dirs = first_known({dirs, dim_of(ctx, 1, 3, 0), dim_of(ctx, 2, 3, 0)});
  Dim hidden = Dim::unknown();
  if (const int64_t h = ctx.attr_int("hidden_size", 0); h > 0) {
    hidden = Dim::of(h);
  } else {
    hidden = first_known({dim_of(ctx, 2, 3, 2), divided(dim_of(ctx, 2, 3, 1), gates),
                          divided(dim_of(ctx, 1, 3, 1), gates),
                          divided(dim_of(ctx, 3, 2, 1), 2 * gates), dim_of(ctx, 5, 3, 2)});
  }
  if (layout == 0) {
    ctx.set(0, elem, {seq, dirs, batch, hidden});
  } else {
    ctx.set(0, elem, {batch, seq, dirs, hidden});
  }
  Dims state(3);
  state[state_dirs] = dirs;
  state[state_batch] = batch;
  state[2] = hidden;
  for (size_t o = 1; o <= states; ++o) ctx.set(o, elem, state);
}

void rnn(Context& ctx) { recurrent(ctx, 1, 1); }
void gru(Context& ctx) { recurrent(ctx, 3, 1); }
void lstm(Context& ctx) { recurrent(ctx, 4, 2); }

}  // namespace

PI_INFER_RULE("", RNN, rnn);
PI_INFER_RULE("", GRU, gru);
PI_INFER_RULE("", LSTM, lstm);

}  // namespace polyinfer::infer
