// Sequence operators of the default ONNX domain (opset 11, SequenceMap 17). A sequence is a
// Value holding tensor handles: building a new sequence copies handles, never elements, which
// is safe because kernels never write into their inputs.
#include <algorithm>
#include <cstring>

#include "core/shape_util.h"
#include "providers/cpu/reference/op_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

const Value& input_sequence(const KernelContext& ctx, size_t i) {
  const Value& v = ctx.value(i);
  PI_CHECK(v.is_sequence(), InvalidArgument, ctx.node().label(), ": input ", i,
           " must be a sequence, got ", v.describe());
  return v;
}

// A position given as a tensor of one int32/int64 element.
int64_t read_position(const Tensor& t, const ir::Node& node) {
  PI_CHECK(t.numel() == 1 && (t.dtype() == DType::Int64 || t.dtype() == DType::Int32),
           InvalidArgument, node.label(), ": position must be one int32 or int64 value, got ",
           t.describe());
  return read_int_list(t.reshaped({1}), "position")[0];
}

// Maps a possibly negative position into [0, size) (or [0, size] when `inclusive`).
int64_t normalize_position(int64_t pos, int64_t size, bool inclusive, const ir::Node& node) {
  const int64_t hi = inclusive ? size : size - 1;
  PI_CHECK(pos >= -size && pos <= hi, InvalidArgument, node.label(), ": position ", pos,
           " is outside [", -size, ", ", hi, "] for a sequence of ", size, " tensors");
  return pos < 0 ? pos + size : pos;
}

void check_elem_type(const Value& seq, const Tensor& t, const ir::Node& node) {
  PI_CHECK(seq.elem_type() == DType::Undefined || seq.elem_type() == t.dtype(), InvalidArgument,
           node.label(), ": a ", dtype_name(t.dtype()), " tensor cannot join a sequence of ",
           dtype_name(seq.elem_type()));
}

// The static element type of a sequence output, for sequences that come out empty.
DType declared_elem(const ir::TypeInfo* t) {
  if (!t) return DType::Undefined;
  if (t->inner) return t->inner->elem;
  return t->elem;
}

// ---------------------------------------------------------------------------------------------

class SequenceEmptyKernel final : public Kernel {
 public:
  explicit SequenceEmptyKernel(const KernelInfo& info)
      : dtype_(static_cast<DType>(info.attr_int("dtype", static_cast<int64_t>(DType::Float32)))) {
    PI_CHECK(dtype_size(dtype_) > 0 && dtype_ != DType::Complex64 && dtype_ != DType::Complex128,
             InvalidModel, info.node().label(), ": dtype ", static_cast<int>(dtype_),
             " is not a supported element type");
  }
  void run(KernelContext& ctx) override { ctx.set_output(0, Value::sequence({}, dtype_)); }

 private:
  DType dtype_;
};

class SequenceConstructKernel final : public Kernel {
 public:
  explicit SequenceConstructKernel(const KernelInfo&) {}
  void run(KernelContext& ctx) override {
    PI_CHECK(ctx.num_inputs() >= 1, InvalidModel, ctx.node().label(), ": needs an input");
    std::vector<Tensor> items;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      items.push_back(ctx.input(i));
      PI_CHECK(items.back().dtype() == items[0].dtype(), InvalidArgument, ctx.node().label(),
               ": input ", i, " is ", dtype_name(items.back().dtype()), ", input 0 ",
               dtype_name(items[0].dtype()), "; a sequence holds one element type");
    }
    const DType elem = items[0].dtype();
    ctx.set_output(0, Value::sequence(std::move(items), elem));
  }
};

class SequenceInsertKernel final : public Kernel {
 public:
  explicit SequenceInsertKernel(const KernelInfo&) {}
  void run(KernelContext& ctx) override {
    const Value& seq = input_sequence(ctx, 0);
    const Tensor& t = ctx.input(1);
    check_elem_type(seq, t, ctx.node());
    std::vector<Tensor> items = seq.items();
    const int64_t size = static_cast<int64_t>(items.size());
    const int64_t pos =
        ctx.has_input(2)
            ? normalize_position(read_position(ctx.input(2), ctx.node()), size, true, ctx.node())
            : size;
    items.insert(items.begin() + pos, t);
    ctx.set_output(0, Value::sequence(std::move(items), t.dtype()));
  }
};

class SequenceAtKernel final : public Kernel {
 public:
  explicit SequenceAtKernel(const KernelInfo&) {}
  void run(KernelContext& ctx) override {
    const Value& seq = input_sequence(ctx, 0);
    const int64_t size = static_cast<int64_t>(seq.items().size());
    const int64_t pos =
        normalize_position(read_position(ctx.input(1), ctx.node()), size, false, ctx.node());
    ctx.set_output(0, seq.items()[pos]);
  }
};

class SequenceEraseKernel final : public Kernel {
 public:
  explicit SequenceEraseKernel(const KernelInfo&) {}
  void run(KernelContext& ctx) override {
    const Value& seq = input_sequence(ctx, 0);
    std::vector<Tensor> items = seq.items();
    const int64_t size = static_cast<int64_t>(items.size());
    const int64_t given = ctx.has_input(1) ? read_position(ctx.input(1), ctx.node()) : -1;
    const int64_t pos = normalize_position(given, size, false, ctx.node());
    items.erase(items.begin() + pos);
    ctx.set_output(0, Value::sequence(std::move(items), seq.elem_type()));
  }
};

class SequenceLengthKernel final : public Kernel {
 public:
  explicit SequenceLengthKernel(const KernelInfo&) {}
  void run(KernelContext& ctx) override {
    const Value& seq = input_sequence(ctx, 0);
    ctx.output(0, DType::Int64, {}).data<int64_t>()[0] = static_cast<int64_t>(seq.items().size());
  }
};

// ---------------------------------------------------------------------------------------------

// SplitToSequence: without `split`, pieces of length 1 (axis dropped when keepdims=0); with a
// scalar `split`, pieces of that length (the last may be shorter); with a 1-D `split`, pieces
// of the given lengths, which must add up to the axis.
class SplitToSequenceKernel final : public Kernel {
 public:
  explicit SplitToSequenceKernel(const KernelInfo& info)
      : axis_(info.attr_int("axis", 0)), keepdims_(info.attr_int("keepdims", 1) != 0) {}

  void run(KernelContext& ctx) override {
    const ir::Node& n = ctx.node();
    const Tensor x = ctx.input(0).to(Device::cpu());
    PI_CHECK(x.rank() >= 1, InvalidArgument, n.label(), ": cannot split a scalar");
    const int64_t axis = normalize_axis(axis_, x.rank(), "SplitToSequence axis");
    const int64_t dim = x.shape()[axis];

    std::vector<int64_t> lengths;
    bool squeeze = false;
    if (!ctx.has_input(1)) {
      lengths.assign(dim, 1);
      squeeze = !keepdims_;
    } else {
      const Tensor& split = ctx.input(1);
      if (split.rank() == 0) {
        const int64_t chunk = read_int_list(split, "SplitToSequence split")[0];
        PI_CHECK(chunk > 0, InvalidArgument, n.label(), ": split must be positive, got ", chunk);
        for (int64_t start = 0; start < dim; start += chunk)
          lengths.push_back(std::min(chunk, dim - start));
      } else {
        lengths = read_int_list(split, "SplitToSequence split");
        int64_t sum = 0;
        for (int64_t l : lengths) {
          PI_CHECK(l >= 0, InvalidArgument, n.label(), ": split lengths must be >= 0, got ", l);
          sum += l;
        }
        PI_CHECK(sum == dim, InvalidArgument, n.label(), ": split lengths add up to ", sum,
                 ", the axis has ", dim);
      }
    }

    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x.shape()[d];
    for (int d = static_cast<int>(axis) + 1; d < x.rank(); ++d) inner *= x.shape()[d];
    std::vector<Tensor> items;
    int64_t start = 0;
    for (int64_t len : lengths) {
      Shape shape = x.shape();
      shape[axis] = len;
      Tensor piece = Tensor::empty(x.dtype(), shape);
      for (int64_t o = 0; o < outer; ++o)
        copy_elems(piece, o * len * inner, x, (o * dim + start) * inner, len * inner);
      if (squeeze) {
        shape.erase(shape.begin() + axis);
        piece = piece.reshaped(shape);
      }
      items.push_back(std::move(piece));
      start += len;
    }
    ctx.set_output(0, Value::sequence(std::move(items), x.dtype()));
  }

 private:
  int64_t axis_;
  bool keepdims_;
};

// ConcatFromSequence: Concat of the items along `axis`, or, with new_axis=1, their stack along
// a new axis (then axis may also be rank, for a new last axis).
class ConcatFromSequenceKernel final : public Kernel {
 public:
  explicit ConcatFromSequenceKernel(const KernelInfo& info)
      : axis_(info.attr_int("axis")), new_axis_(info.attr_int("new_axis", 0)) {
    PI_CHECK(new_axis_ == 0 || new_axis_ == 1, InvalidModel, info.node().label(),
             ": new_axis must be 0 or 1, got ", new_axis_);
  }

  void run(KernelContext& ctx) override {
    const ir::Node& n = ctx.node();
    const Value& seq = input_sequence(ctx, 0);
    PI_CHECK(!seq.items().empty(), InvalidArgument, n.label(),
             ": cannot concatenate an empty sequence");
    std::vector<Tensor> items;
    for (const Tensor& t : seq.items()) {
      Tensor h = t.to(Device::cpu());
      if (new_axis_) {
        Shape s = h.shape();
        s.insert(s.begin() + normalize_axis(axis_, h.rank() + 1, "ConcatFromSequence axis"), 1);
        h = h.reshaped(s);
      }
      items.push_back(std::move(h));
    }
    const Tensor& first = items[0];
    PI_CHECK(first.rank() >= 1, InvalidArgument, n.label(),
             ": cannot concatenate scalars "
             "(use new_axis=1 to stack them)");
    // With new_axis the items already carry the new axis, so one range check serves both modes.
    const int64_t axis = normalize_axis(axis_, first.rank(), "ConcatFromSequence axis");
    Shape out_shape = first.shape();
    out_shape[axis] = 0;
    for (size_t i = 0; i < items.size(); ++i) {
      const Tensor& t = items[i];
      PI_CHECK(t.dtype() == first.dtype(), InvalidArgument, n.label(), ": item ", i, " is ",
               dtype_name(t.dtype()), ", item 0 ", dtype_name(first.dtype()));
      bool ok = t.rank() == first.rank();
      for (int d = 0; ok && d < t.rank(); ++d) ok = d == axis || t.shape()[d] == first.shape()[d];
      PI_CHECK(ok, ShapeMismatch, n.label(), ": item ", i, " ", t.describe(),
               " does not match "
               "item 0 ",
               first.describe(), " outside axis ", axis);
      out_shape[axis] += t.shape()[axis];
    }
    Tensor& y = ctx.output(0, first.dtype(), out_shape);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= out_shape[d];
    for (size_t d = axis + 1; d < out_shape.size(); ++d) inner *= out_shape[d];
    int64_t at = 0;
    for (const Tensor& t : items) {
      const int64_t len = t.shape()[axis];
      for (int64_t o = 0; o < outer; ++o)
        copy_elems(y, (o * out_shape[axis] + at) * inner, t, o * len * inner, len * inner);
      at += len;
    }
  }

 private:
  int64_t axis_, new_axis_;
};

// ---------------------------------------------------------------------------------------------

// SequenceMap: runs the body once per position of the input sequences; sequence inputs give
// their item at that position, tensor inputs are passed whole every time. Each body output is
// collected into an output sequence.
class SequenceMapKernel final : public Kernel {
 public:
  explicit SequenceMapKernel(const KernelInfo& info) : body_(info.subgraph("body")) {
    const ir::Graph& g = body_->graph();
    PI_CHECK(g.inputs.size() == info.num_inputs() && g.outputs.size() == info.num_outputs(),
             InvalidModel, info.node().label(), ": body has ", g.inputs.size(), " inputs and ",
             g.outputs.size(), " outputs, the node ", info.num_inputs(), " and ",
             info.num_outputs());
    for (size_t k = 0; k < info.num_outputs(); ++k) {
      DType dt = declared_elem(info.output_type(k));
      if (dt == DType::Undefined) dt = g.outputs[k].type.elem;
      out_elem_.push_back(dt);
    }
  }

  void run(KernelContext& ctx) override {
    const ir::Node& n = ctx.node();
    const Value& first = input_sequence(ctx, 0);
    const size_t len = first.items().size();
    for (size_t i = 1; i < ctx.num_inputs(); ++i) {
      const Value& v = ctx.value(i);
      PI_CHECK(v.is_tensor() || v.is_sequence(), InvalidArgument, n.label(), ": input ", i,
               " must be a tensor or a sequence, got ", v.describe());
      PI_CHECK(!v.is_sequence() || v.items().size() == len, ShapeMismatch, n.label(), ": input ", i,
               " has ", v.items().size(), " items, input 0 has ", len);
    }
    std::vector<std::vector<Tensor>> outs(ctx.num_outputs());
    std::vector<Value> in(ctx.num_inputs());
    for (size_t pos = 0; pos < len; ++pos) {
      for (size_t i = 0; i < ctx.num_inputs(); ++i) {
        const Value& v = ctx.value(i);
        in[i] = v.is_sequence() ? Value(v.items()[pos]) : v;
      }
      std::vector<Value> out = body_->run(in, ctx.scope());
      for (size_t k = 0; k < out.size(); ++k) {
        PI_CHECK(out[k].is_tensor(), InvalidArgument, n.label(), ": body output ", k,
                 " must be a tensor, got ", out[k].describe());
        outs[k].push_back(std::move(out[k].tensor()));
      }
    }
    for (size_t k = 0; k < outs.size(); ++k) {
      if (!ctx.wants_output(k)) continue;
      const DType elem = outs[k].empty() ? out_elem_[k] : outs[k][0].dtype();
      for (const Tensor& t : outs[k])
        PI_CHECK(t.dtype() == elem, InvalidArgument, n.label(), ": body output ", k,
                 " changed its element type between iterations");
      ctx.set_output(k, Value::sequence(std::move(outs[k]), elem));
    }
  }

 private:
  std::unique_ptr<SubgraphRunner> body_;
  std::vector<DType> out_elem_;
};

}  // namespace

// The sequence operators have one version each (11; SequenceMap 17) through opset 23.
PI_CPU_KERNEL(SequenceEmpty, 11, 28, SequenceEmptyKernel);
PI_CPU_KERNEL(SequenceConstruct, 11, 28, SequenceConstructKernel);
PI_CPU_KERNEL(SequenceInsert, 11, 28, SequenceInsertKernel);
PI_CPU_KERNEL(SequenceAt, 11, 28, SequenceAtKernel);
PI_CPU_KERNEL(SequenceErase, 11, 28, SequenceEraseKernel);
PI_CPU_KERNEL(SequenceLength, 11, 28, SequenceLengthKernel);
PI_CPU_KERNEL(SplitToSequence, 11, 28, SplitToSequenceKernel);
PI_CPU_KERNEL(ConcatFromSequence, 11, 28, ConcatFromSequenceKernel);
PI_CPU_KERNEL(SequenceMap, 17, 28, SequenceMapKernel);

}  // namespace polyinfer
