// The kernels of each device provider (vulkan, opencl; device_util.h) on integer, bool and other
// non-float32 tensors (issue 42: the int64 masks and shape arithmetic of exported transformers),
// against cpu-ref, byte for byte: the data-movement kernels on every element size (Vulkan's
// move.glsl packs 1-byte elements in words written with atomics and 8-byte ones as word pairs;
// OpenCL stores bytes and 64-bit integers natively), Cast between every pair of bool, the 8- to
// 64-bit integers, float16 and float32 on edge values (rounding, saturation, wrapping, NaN), the
// comparisons and logic, and Shape, Size, ConstantOfShape and Range (computed on the host, kept on
// the device while unchanged). Every node must run on the device (strict: the provider alone);
// the refusals fall back with their reasons.
//
// The oracle harness (oracle.h) declares and compares a few dtypes only, so this file has its
// own: a one-node model with inputs of any dtype, run-time or constant, outputs compared as bytes
// (nothing here computes in floating point but the conversions, which must be exact).
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>

#include "device_util.h"
#include "model_builder.h"

namespace polyinfer {
namespace {

// Element i of t as text, for failure messages.
std::string elem_str(const Tensor& t, int64_t i) {
  std::ostringstream s;
  const auto* p = static_cast<const uint8_t*>(t.raw_data()) + i * int64_t(dtype_size(t.dtype()));
  switch (t.dtype()) {
    case DType::Float32: {
      float f;
      std::memcpy(&f, p, 4);
      s << f;
      break;
    }
    case DType::Float64: {
      double f;
      std::memcpy(&f, p, 8);
      s << f;
      break;
    }
    case DType::Float16: {
      Float16 h;
      std::memcpy(&h.bits, p, 2);
      s << float(h);
      break;
    }
    default: {
      uint64_t v = 0;
      std::memcpy(&v, p, dtype_size(t.dtype()));
      s << "0x" << std::hex << v;
    }
  }
  return s.str();
}

// One node with inputs of any dtype (constants as initializers), run on `provider` alone and on
// cpu-ref at optimization level 0; outputs must match byte for byte.
class IntOp {
 public:
  IntOp(std::string provider, std::string op, int opset)
      : provider_(std::move(provider)), op_(std::move(op)), opset_(opset) {}
  IntOp& in(Tensor t, bool constant = false) {
    inputs_.push_back(std::move(t));
    constant_.push_back(constant);
    return *this;
  }
  IntOp& attr(const std::string& name, int64_t v) {
    onnx::AttributeProto& a = add(name, onnx::AttributeProto::INT);
    a.set_i(v);
    return *this;
  }
  IntOp& attr(const std::string& name, const std::vector<int64_t>& v) {
    onnx::AttributeProto& a = add(name, onnx::AttributeProto::INTS);
    for (int64_t x : v) a.add_ints(x);
    return *this;
  }
  IntOp& attr(const std::string& name, const std::string& v) {
    add(name, onnx::AttributeProto::STRING).set_s(v);
    return *this;
  }
  IntOp& attr(const std::string& name, const Tensor& v) {
    to_proto(v, "", add(name, onnx::AttributeProto::TENSOR).mutable_t());
    return *this;
  }
  IntOp& outputs(int n) {
    outputs_ = n;
    return *this;
  }
  // Run-time inputs declared with symbolic dimensions, so later runs may change their shapes.
  IntOp& dynamic() {
    dynamic_ = true;
    return *this;
  }

  // Runs with the inputs given, then with each of `more` (every input, constants at their
  // places ignored): kernels that keep state between runs must serve them all. `providers`
  // (the device alone when empty) with a fallback let refusals fall back; returns the node's
  // provider and the reason.
  test::ConstantsResult check(const std::vector<std::vector<Tensor>>& more = {},
                              std::vector<std::string> providers = {}) const {
    const std::string bytes = model();
    SessionOptions vo, ro;
    vo.providers = providers.empty() ? std::vector<std::string>{provider_} : std::move(providers);
    ro.providers = {"cpu-ref"};
    vo.optimization_level = ro.optimization_level = 0;
    test::ConstantsResult r;
    try {
      Session vk = Session::load_bytes(bytes.data(), bytes.size(), vo);
      Session ref = Session::load_bytes(bytes.data(), bytes.size(), ro);
      if (!vk.placement().nodes.empty()) r.provider = vk.placement().nodes[0].provider;
      if (!vk.placement().fallbacks.empty()) r.reason = vk.placement().fallbacks[0].reason;
      std::vector<std::vector<Tensor>> runs = {inputs_};
      runs.insert(runs.end(), more.begin(), more.end());
      for (size_t k = 0; k < runs.size(); ++k) {
        std::map<std::string, Value> feeds;
        for (size_t i = 0; i < runs[k].size(); ++i)
          if (!constant_[i] && runs[k][i].defined())
            feeds["in" + std::to_string(i)] = Value(runs[k][i]);
        compare(vk.run(feeds), ref.run(feeds), k);
      }
    } catch (const Error& e) {
      ADD_FAILURE() << op_ << ": " << e.what();
    }
    return r;
  }

  // Loads the model on the device alone, which must fail at creation (a kernel's refusal):
  // returns the error's text ("" when it loaded).
  std::string strict_refusal() const {
    const std::string bytes = model();
    SessionOptions o;
    o.providers = {provider_};
    o.optimization_level = 0;
    try {
      Session::load_bytes(bytes.data(), bytes.size(), o);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::UnsupportedOp) << e.what();
      return e.what();
    }
    return "";
  }

 private:
  onnx::AttributeProto& add(const std::string& name, onnx::AttributeProto::AttributeType t) {
    attrs_.emplace_back();
    attrs_.back().set_name(name);
    attrs_.back().set_type(t);
    return attrs_.back();
  }
  static void to_proto(const Tensor& t, const std::string& name, onnx::TensorProto* p) {
    p->set_name(name);
    p->set_data_type(static_cast<int>(t.dtype()));  // DType numbers are ONNX's
    for (int64_t d : t.shape()) p->add_dims(d);
    p->set_raw_data(
        std::string(static_cast<const char*>(t.raw_data()), dtype_nbytes(t.dtype(), t.numel())));
  }
  std::string model() const {
    test::ModelBuilder b(opset_);
    onnx::ModelProto& m = b.proto();
    auto* g = m.mutable_graph();
    auto* n = g->add_node();
    n->set_op_type(op_);
    n->set_name("int_node");
    for (size_t i = 0; i < inputs_.size(); ++i) {
      if (!inputs_[i].defined()) {
        n->add_input("");
        continue;
      }
      const std::string name = "in" + std::to_string(i);
      n->add_input(name);
      if (constant_[i]) {
        to_proto(inputs_[i], name, g->add_initializer());
        continue;
      }
      auto* v = g->add_input();
      v->set_name(name);
      auto* tt = v->mutable_type()->mutable_tensor_type();
      tt->set_elem_type(static_cast<int>(inputs_[i].dtype()));
      auto* sh = tt->mutable_shape();
      for (size_t d = 0; d < inputs_[i].shape().size(); ++d) {
        if (dynamic_)
          sh->add_dim()->set_dim_param("d" + std::to_string(i) + "_" + std::to_string(d));
        else
          sh->add_dim()->set_dim_value(inputs_[i].shape()[d]);
      }
    }
    for (int i = 0; i < outputs_; ++i) {
      n->add_output("out" + std::to_string(i));
      g->add_output()->set_name("out" + std::to_string(i));
    }
    for (const auto& a : attrs_) *n->add_attribute() = a;
    return m.SerializeAsString();
  }
  void compare(const std::vector<Value>& got, const std::vector<Value>& want, size_t run) const {
    ASSERT_EQ(got.size(), want.size());
    for (size_t o = 0; o < got.size(); ++o) {
      const Tensor g = got[o].tensor().to(Device::cpu()), w = want[o].tensor();
      const std::string where = op_ + " run " + std::to_string(run) + " output " +
                                std::to_string(o) + " (" + w.describe() + ")";
      ASSERT_EQ(g.dtype(), w.dtype()) << where;
      ASSERT_EQ(g.shape(), w.shape()) << where;
      const size_t size = dtype_size(w.dtype());
      int bad = 0;
      for (int64_t i = 0; i < w.numel(); ++i) {
        const auto* pg = static_cast<const uint8_t*>(g.raw_data()) + i * int64_t(size);
        const auto* pw = static_cast<const uint8_t*>(w.raw_data()) + i * int64_t(size);
        if (std::memcmp(pg, pw, size) != 0 && bad++ < 8)
          ADD_FAILURE() << where << "[" << i << "]: " << provider_ << " " << elem_str(g, i)
                        << ", cpu-ref " << elem_str(w, i) << input_note(i);
      }
    }
  }
  // For element-wise ops of one input: the input element, for the message.
  std::string input_note(int64_t i) const {
    if (inputs_.size() != 1 || i >= inputs_[0].numel()) return "";
    return " (input " + elem_str(inputs_[0], i) + ")";
  }

  std::string provider_;
  std::string op_;
  int opset_;
  std::vector<Tensor> inputs_;
  std::vector<bool> constant_;
  std::vector<onnx::AttributeProto> attrs_;
  int outputs_ = 1;
  bool dynamic_ = false;
};

// A tensor of `dtype` holding `values` converted as C++ converts (integers wrap; bool != 0).
Tensor typed(DType dtype, const Shape& shape, const std::vector<double>& values) {
  Tensor t = Tensor::empty(dtype, shape);
  auto* p = static_cast<uint8_t*>(t.raw_data());
  for (size_t i = 0; i < values.size(); ++i) {
    const double v = values[i];
    // Integers from int64 (wrapping) when the double holds one; NaN and infinities only reach the
    // float types.
    const auto i64 = [&] {
      return std::isfinite(v) && std::fabs(v) < 9.2e18 ? static_cast<int64_t>(v) : int64_t(0);
    };
    switch (dtype) {
      case DType::Bool: p[i] = v != 0; break;
      case DType::UInt8: p[i] = static_cast<uint8_t>(i64()); break;
      case DType::Int8: reinterpret_cast<int8_t*>(p)[i] = static_cast<int8_t>(i64()); break;
      case DType::UInt16: reinterpret_cast<uint16_t*>(p)[i] = static_cast<uint16_t>(i64()); break;
      case DType::Int16: reinterpret_cast<int16_t*>(p)[i] = static_cast<int16_t>(i64()); break;
      case DType::UInt32: reinterpret_cast<uint32_t*>(p)[i] = static_cast<uint32_t>(i64()); break;
      case DType::Int32: reinterpret_cast<int32_t*>(p)[i] = static_cast<int32_t>(i64()); break;
      case DType::UInt64: reinterpret_cast<uint64_t*>(p)[i] = static_cast<uint64_t>(i64()); break;
      case DType::Int64: reinterpret_cast<int64_t*>(p)[i] = i64(); break;
      case DType::Float16: reinterpret_cast<Float16*>(p)[i] = Float16(static_cast<float>(v)); break;
      case DType::Float32: reinterpret_cast<float*>(p)[i] = static_cast<float>(v); break;
      case DType::Float64: reinterpret_cast<double*>(p)[i] = v; break;
      default: ADD_FAILURE() << "typed: add " << dtype_name(dtype);
    }
  }
  return t;
}

// A tensor of `dtype` with seeded random contents: every bit pattern for the integers (both words
// of 64-bit ones), 0/1 for bool, finite values for the floats.
Tensor random_of(DType dtype, const Shape& shape, uint32_t seed) {
  std::mt19937_64 gen(seed);
  Tensor t = Tensor::empty(dtype, shape);
  auto* p = static_cast<uint8_t*>(t.raw_data());
  const size_t size = dtype_size(dtype);
  for (int64_t i = 0; i < t.numel(); ++i) {
    uint64_t bits = gen();
    if (dtype == DType::Bool) bits &= 1;
    if (dtype == DType::Float64) {
      const double d = double(int64_t(bits >> 11)) / 3e12;
      std::memcpy(&bits, &d, 8);
    }
    if (dtype == DType::Float32 || dtype == DType::Float16) {
      const float f = float(int64_t(bits >> 40)) / 1e5f;
      if (dtype == DType::Float32) std::memcpy(&bits, &f, 4);
      else
        bits = Float16(f).bits;
    }
    std::memcpy(p + size_t(i) * size, &bits, size);
  }
  return t;
}

Tensor ints(std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::from_vector<int64_t>({n}, std::move(v));
}

// The element sizes the data-movement kernels have variants for: 1 (bool, uint8, int8), 2
// (int16: on Vulkan, needs 16-bit storage), 4 (int32), 8 (int64, uint64, float64).
std::vector<DType> movable_dtypes(const std::string& provider) {
  std::vector<DType> d = {DType::Bool,  DType::UInt8,  DType::Int8,   DType::Int32,
                          DType::Int64, DType::UInt64, DType::Float64};
  if (test::float16_storage(provider)) d.push_back(DType::Int16);
  return d;
}

class DeviceInt : public test::DeviceTest {
 protected:
  // A node of `op` checked on this provider.
  IntOp node(std::string op, int opset) const { return IntOp(provider(), std::move(op), opset); }
};

TEST_P(DeviceInt, ViewsOfEveryDtype) {
  uint32_t seed = 1;
  for (DType d : movable_dtypes(provider())) {
    SCOPED_TRACE(dtype_name(d));
    const Tensor x = random_of(d, {2, 3, 5}, seed++);
    for (bool constant : {true, false}) {
      node("Reshape", 14).in(x).in(ints({-1, 5}), constant).check();
      node("Unsqueeze", 13).in(x).in(ints({0, -1}), constant).check();
      node("Squeeze", 13).in(random_of(d, {1, 7, 1}, seed++)).in(ints({2}), constant).check();
    }
    node("Unsqueeze", 11).in(x).attr("axes", std::vector<int64_t>{1}).check();
    node("Flatten", 13).in(x).attr("axis", int64_t{2}).check();
    node("Identity", 16).in(x).check();
  }
}

TEST_P(DeviceInt, CopiesOfEveryDtype) {
  uint32_t seed = 100;
  for (DType d : movable_dtypes(provider())) {
    SCOPED_TRACE(dtype_name(d));
    // Odd sizes, so 1-byte elements start and end inside 32-bit words.
    const Tensor x = random_of(d, {3, 5, 7}, seed++);
    node("Transpose", 13).in(x).attr("perm", std::vector<int64_t>{2, 0, 1}).check();
    node("Concat", 13)
        .in(random_of(d, {2, 3}, seed + 1000))
        .in(random_of(d, {2, 5}, seed + 2000))
        .in(random_of(d, {2, 1}, seed + 3000))
        .attr("axis", int64_t{1})
        .check();
    node("Slice", 13)
        .in(x)
        .in(ints({4, 6}), true)
        .in(ints({0, 0}), true)
        .in(ints({1, 2}), true)
        .in(ints({-1, -2}), true)
        .check();
    node("Split", 13).in(x).in(ints({3, 4}), true).attr("axis", int64_t{2}).outputs(2).check();
    node("Expand", 13).in(random_of(d, {3, 1}, seed++)).in(ints({2, 3, 5}), true).check();
    node("Expand", 13).in(random_of(d, {3, 1}, seed++)).in(ints({2, 3, 5})).check();
    node("Tile", 13).in(random_of(d, {3, 5}, seed++)).in(ints({2, 3}), true).check();
    const Tensor one = random_of(d, {1}, seed++);
    Tensor value = Tensor::empty(d, {});
    std::memcpy(value.raw_data(), one.raw_data(), dtype_size(d));
    node("Pad", 13).in(x).in(ints({0, 1, 2, 1, 0, 3}), true).in(value, true).check();
    node("Pad", 13).in(x).in(ints({0, 1, 2, 1, 0, 3}), true).check();  // 0 of every dtype
    node("Pad", 13)
        .in(x)
        .in(ints({0, 2, 1, 0, 2, 1}), true)
        .attr("mode", std::string("reflect"))
        .check();
    node("Gather", 13).in(x).in(ints({2, 0, -1, 2}), true).attr("axis", int64_t{0}).check();
    node("Gather", 13)
        .in(x)
        .in(Tensor::from_vector<int32_t>({2, 2}, {6, 0, -3, 5}))
        .attr("axis", int64_t{2})
        .check();
  }
}

// An int64 embedding-table Gather (token ids into int64 rows) past the dispatch limit, and a
// Concat of 1-byte tensors whose parts meet inside words across several workgroups: the atomic
// byte stores of neighbouring threads must not lose each other's writes.
TEST_P(DeviceInt, PastTheDispatchLimit) {
  test::DeviceGroupLimit limit(provider(), 2);
  std::vector<int64_t> idx(777);
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int64_t>((i * 37) % 300);
  node("Gather", 13).in(random_of(DType::Int64, {300, 3}, 5)).in(ints(idx)).check();
  node("Concat", 13)
      .in(random_of(DType::Bool, {3, 1001}, 6))
      .in(random_of(DType::Bool, {3, 3}, 7))
      .in(random_of(DType::Bool, {3, 517}, 8))
      .attr("axis", int64_t{1})
      .check();
  node("Concat", 13)
      .in(random_of(DType::UInt8, {3, 1001}, 9))
      .in(random_of(DType::UInt8, {3, 3}, 10))
      .in(random_of(DType::UInt8, {3, 517}, 11))
      .attr("axis", int64_t{1})
      .check();
  node("Transpose", 13).in(random_of(DType::Int8, {37, 61}, 12)).check();
}

TEST_P(DeviceInt, WhereOfEveryDtype) {
  uint32_t seed = 200;
  for (DType d : movable_dtypes(provider())) {
    SCOPED_TRACE(dtype_name(d));
    node("Where", 16)
        .in(random_of(DType::Bool, {5, 1}, seed + 1000))
        .in(random_of(d, {1, 7}, seed + 2000))
        .in(random_of(d, {5, 7}, seed + 3000))
        .check();
    node("Where", 16)
        .in(random_of(DType::Bool, {2, 1, 3}, seed + 4000))
        .in(random_of(d, {3}, seed + 5000), true)
        .in(random_of(d, {}, seed + 6000), true)
        .check();
    ++seed;
  }
}

// Edge values for the casts: zeros, halves, the limits of every integer width and their
// neighbours, float16's largest and overflow thresholds, integers past float32's 24 bits (ties
// rounding to even both ways), past 2^63, infinities, NaN and a subnormal.
std::vector<double> cast_values() {
  std::vector<double> v = {0.0,
                           -0.0,
                           0.5,
                           -0.5,
                           0.99,
                           1.0,
                           1.5,
                           -1.5,
                           2.5,
                           -2.7,
                           127.0,
                           127.9,
                           128.0,
                           -128.0,
                           -129.0,
                           255.0,
                           255.5,
                           256.0,
                           -1.0,
                           32767.0,
                           32768.0,
                           -32769.0,
                           65504.0,
                           65519.0,
                           65520.0,
                           65535.0,
                           65536.0,
                           16777215.0,
                           16777216.0,
                           16777217.0,
                           16777218.0,
                           16777219.0,
                           -16777219.0,
                           2147483520.0,
                           2147483647.0,
                           2147483648.0,
                           -2147483648.0,
                           -2147483904.0,
                           4294967295.0,
                           4294967296.0,
                           9007199254740993.0,
                           4.611686018427388e18,
                           9.2e18,
                           -9.2e18,
                           9.3e18,
                           -9.3e18,
                           1.9e19,
                           1e30,
                           -1e30,
                           1e-40,
                           3.0e38,
                           std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(),
                           std::nan("")};
  return v;
}

// Integers beyond what a double holds: the 64-bit limits, and values whose low bits decide the
// rounding to float32 (the bit below the 24 kept ones set, with and without bits under it).
std::vector<int64_t> int64_edges() {
  std::vector<int64_t> v = {std::numeric_limits<int64_t>::max(),
                            std::numeric_limits<int64_t>::min(),
                            std::numeric_limits<int64_t>::min() + 1,
                            -1,
                            (int64_t{1} << 40) + (int64_t{1} << 16),
                            (int64_t{1} << 40) + (int64_t{3} << 16),
                            (int64_t{1} << 40) + (int64_t{1} << 16) + 1,
                            (int64_t{1} << 40) + (int64_t{1} << 17),
                            -((int64_t{1} << 40) + (int64_t{1} << 16) + 1),
                            (int64_t{0xffffff} << 39),
                            (int64_t{0xffffff} << 39) + (int64_t{1} << 38),
                            int64_t{0x7fffffffffffffff} - (int64_t{1} << 38),
                            int64_t(0x8000008000000001ull),
                            int64_t(0xffffffff00000000ull),
                            int64_t(0x00000000ffffffffull),
                            int64_t(0x0000000100000000ull)};
  std::mt19937_64 gen(3);
  for (int k = 0; k < 64; ++k) v.push_back(int64_t(gen() >> (k % 60)));
  return v;
}

const std::vector<DType> kCastTypes = {DType::Bool,  DType::UInt8,   DType::Int8,   DType::UInt16,
                                       DType::Int16, DType::UInt32,  DType::Int32,  DType::UInt64,
                                       DType::Int64, DType::Float16, DType::Float32};

TEST_P(DeviceInt, CastEveryPair) {
  const std::vector<double> values = cast_values();
  const Shape shape{static_cast<int64_t>(values.size())};
  for (DType from : kCastTypes)
    for (DType to : kCastTypes) {
      const bool floats = (from == DType::Float32 || from == DType::Float16) &&
                          (to == DType::Float32 || to == DType::Float16);
      // Float32 <-> float16 needs 16-bit storage on Vulkan; a cast to the same dtype is a view.
      if (from == to || (floats && !float16_storage())) continue;
      SCOPED_TRACE(std::string(dtype_name(from)) + " -> " + dtype_name(to));
      node("Cast", 19).in(typed(from, shape, values)).attr("to", int64_t(to)).check();
      if (dtype_size(from) == 8) {
        const std::vector<int64_t> e = int64_edges();
        Tensor t = Tensor::from_vector<int64_t>({int64_t(e.size())}, e);
        Tensor u = Tensor::empty(from, t.shape());
        std::memcpy(u.raw_data(), t.raw_data(), e.size() * 8);
        node("Cast", 19).in(u).attr("to", int64_t(to)).check();
      }
    }
}

// Random bit patterns through the conversions that round or saturate, more elements than two
// workgroups cover (the kernel's grid-stride loop).
TEST_P(DeviceInt, CastRandomBits) {
  test::DeviceGroupLimit limit(provider(), 2);
  std::mt19937_64 gen(9);
  std::vector<int64_t> wide(3001);
  for (size_t i = 0; i < wide.size(); ++i) wide[i] = int64_t(gen() >> (i % 64));
  std::vector<float> f(3001);
  for (size_t i = 0; i < f.size(); ++i) {
    uint32_t b = uint32_t(gen());
    b = (b & 0x807fffffu) | ((100u + (b >> 23) % 100u) << 23);  // 2^-27 .. 2^72
    std::memcpy(&f[i], &b, 4);
  }
  const Tensor x64 = Tensor::from_vector<int64_t>({3001}, wide);
  Tensor u64 = Tensor::empty(DType::UInt64, {3001});
  std::memcpy(u64.raw_data(), x64.raw_data(), 3001 * 8);
  const Tensor x32 = Tensor::from_vector<float>({3001}, f);
  for (DType to : {DType::Float32, DType::Float16, DType::Int32, DType::Bool}) {
    node("Cast", 19).in(x64).attr("to", int64_t(to)).check();
    node("Cast", 19).in(u64).attr("to", int64_t(to)).check();
  }
  for (DType to : {DType::Int64, DType::UInt64, DType::Int32, DType::UInt32, DType::Int16})
    node("Cast", 19).in(x32).attr("to", int64_t(to)).check();
  // Float16's subnormals, roundings and overflow from the same range.
  if (float16_storage()) node("Cast", 19).in(x32).attr("to", int64_t(DType::Float16)).check();
}

// `t` with every other element replaced by a random one: comparisons see equal and unequal pairs.
Tensor half_equal(Tensor t, uint32_t seed) {
  const Tensor other = random_of(t.dtype(), t.shape(), seed);
  const size_t size = dtype_size(t.dtype());
  for (int64_t i = 1; i < t.numel(); i += 2)
    std::memcpy(static_cast<uint8_t*>(t.raw_data()) + size_t(i) * size,
                static_cast<const uint8_t*>(other.raw_data()) + size_t(i) * size, size);
  return t;
}

TEST_P(DeviceInt, Comparisons) {
  // Broadcast [4, 1] against [3, 1, 5]; values that differ in one 32-bit word only, signs, NaN,
  // -0 against 0.
  const std::vector<double> a = {0.0, -1.0, 4294967296.0, std::nan("")};
  const std::vector<double> b = {0.0,          -0.0,         1.0,           -1.0, 4294967297.0,
                                 4294967296.0, 4294967295.0, 2.0,           -2.0, 3.0,
                                 std::nan(""), 7.0,          -4294967296.0, 0.5,  1e10};
  const std::vector<DType> types = {DType::Int64,  DType::UInt64,  DType::Int32,
                                    DType::UInt32, DType::Int8,    DType::UInt8,
                                    DType::Int16,  DType::Float32, DType::Float16};
  for (DType d : types)
    for (const char* op : {"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"}) {
      SCOPED_TRACE(std::string(op) + " " + dtype_name(d));
      node(op, 16).in(typed(d, {4, 1}, a)).in(typed(d, {3, 1, 5}, b)).check();
      node(op, 16).in(random_of(d, {37}, 1)).in(half_equal(random_of(d, {37}, 1), 2)).check();
    }
  node("Equal", 13)
      .in(random_of(DType::Bool, {9, 1}, 2))
      .in(random_of(DType::Bool, {1, 11}, 3))
      .check();
  for (const char* op : {"And", "Or", "Xor"})
    node(op, 7)
        .in(random_of(DType::Bool, {9, 1}, 4))
        .in(random_of(DType::Bool, {2, 1, 11}, 5), true)
        .check();
  node("Not", 1).in(random_of(DType::Bool, {3, 7}, 6)).check();
}

// Computed on the host, handed on as device tensors, and kept while unchanged: every run must
// give its own values (shapes and scalars change between runs here).
TEST_P(DeviceInt, ShapeSizeConstantOfShapeRange) {
  const Tensor a = random_of(DType::Int64, {2, 3, 5}, 1), b = random_of(DType::Int64, {4, 1, 6}, 2);
  node("Shape", 13).in(a).dynamic().check({{b}, {a}});
  node("Shape", 15).in(a).attr("start", int64_t{-2}).dynamic().check({{b}});
  node("Shape", 15).in(a).attr("start", int64_t{1}).attr("end", int64_t{-1}).check();
  node("Shape", 15).in(random_of(DType::Bool, {3, 0}, 3)).check();
  node("Size", 13).in(a).dynamic().check({{b}});
  // The shape input's length changes between runs: declared with a symbolic dimension.
  node("ConstantOfShape", 9).in(ints({2, 3})).dynamic().check({{ints({4, 1, 3})}, {ints({0, 2})}});
  node("ConstantOfShape", 9)
      .in(ints({3, 5}))
      .attr("value", Tensor::from_vector<int64_t>({1}, {-7}))
      .check({{ints({5, 1})}});
  node("ConstantOfShape", 9).in(ints({3})).attr("value", typed(DType::Bool, {1}, {1.0})).check();
  node("ConstantOfShape", 20)
      .in(ints({2, 2}), true)
      .attr("value", typed(DType::Float16, {1}, {2.5}))
      .check();
  node("Range", 11)
      .in(Tensor::scalar<int64_t>(2))
      .in(Tensor::scalar<int64_t>(11))
      .in(Tensor::scalar<int64_t>(3))
      .check(
          {{Tensor::scalar<int64_t>(0), Tensor::scalar<int64_t>(8), Tensor::scalar<int64_t>(1)},
           {Tensor::scalar<int64_t>(5), Tensor::scalar<int64_t>(-4), Tensor::scalar<int64_t>(-2)}});
  node("Range", 11)
      .in(Tensor::scalar<float>(0.5f))
      .in(Tensor::scalar<float>(3.0f))
      .in(Tensor::scalar<float>(0.25f))
      .check();
}

// What the device still does not take falls back to cpu with the reason; strict it fails naming it.
TEST_P(DeviceInt, RefusalsFallBackWithTheReason) {
  const Tensor d = typed(DType::Float64, {3}, {1.5, -2.0, 1e300});
  auto r =
      node("Cast", 19).in(d).attr("to", int64_t(DType::Float32)).check({}, {provider(), "cpu"});
  EXPECT_EQ(r.provider, "cpu");
  EXPECT_NE(r.reason.find("Cast from float64 to float32"), std::string::npos) << r.reason;
  // The comparisons take float32, float16 and the integers; float64 falls back. (Less of bools
  // is not ONNX: no provider runs it.)
  r = node("Less", 13)
          .in(typed(DType::Float64, {3}, {0.5, 1.0, -2.0}))
          .in(typed(DType::Float64, {3}, {1.0, 1.0, -3.0}))
          .check({}, {provider(), "cpu"});
  EXPECT_EQ(r.provider, "cpu");
  EXPECT_NE(r.reason.find("dtype float64"), std::string::npos) << r.reason;
  // The ordering comparisons refuse bool (Equal alone takes it); strict, the load fails naming it.
  const std::string why = node("Less", 13)
                              .in(typed(DType::Bool, {2}, {0, 1}))
                              .in(typed(DType::Bool, {2}, {1, 1}))
                              .strict_refusal();
  EXPECT_NE(why.find("dtype bool"), std::string::npos) << why;
  r = node("Add", 14)
          .in(typed(DType::Int64, {2}, {1, 2}))
          .in(typed(DType::Int64, {2}, {3, 4}))
          .check({}, {provider(), "cpu"});
  EXPECT_EQ(r.provider, "cpu");
  EXPECT_NE(r.reason.find("dtype int64"), std::string::npos) << r.reason;
}

PI_INSTANTIATE_DEVICE_TESTS(DeviceInt);

}  // namespace
}  // namespace polyinfer
