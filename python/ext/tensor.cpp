#include "tensor.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "convert.h"
#include "polyinfer/ops.h"
#include "polyinfer/status.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace polyinfer::python {
namespace {

// An array's elements copied into a tensor of its own (the array may change or go after).
Tensor from_array(const InputArray& a, int dtype) {
  Feeds lent;
  lent.add_array("tensor", a, dtype);
  // The array's memory is only lent (Tensor::borrow): the Tensor gets a copy of its own.
  return lent.values().at("tensor").tensor().clone();
}

nb::object to_numpy(const Tensor& t) {
  Value v(t);
  {
    nb::gil_scoped_release unlocked;
    own_memory(v);  // on the host, and a copy: the Tensor object keeps its own memory
  }
  return to_python(std::move(v));
}

Tensor unary(const std::string& op, const Tensor& x) {
  static const std::map<std::string, Tensor (*)(const Tensor&)> kOps = {
      {"relu", &ops::relu}, {"sigmoid", &ops::sigmoid}, {"tanh", &ops::tanh}, {"exp", &ops::exp},
      {"neg", &ops::neg},   {"abs", &ops::abs},         {"sqrt", &ops::sqrt}};
  auto it = kOps.find(op);
  PI_CHECK(it != kOps.end(), InvalidArgument, "no eager operator '", op, "'");
  nb::gil_scoped_release unlocked;
  return it->second(x);
}

Tensor binary(const std::string& op, const Tensor& a, const Tensor& b) {
  static const std::map<std::string, Tensor (*)(const Tensor&, const Tensor&)> kOps = {
      {"add", &ops::add},
      {"sub", &ops::sub},
      {"mul", &ops::mul},
      {"div", &ops::div},
      {"matmul", &ops::matmul}};
  auto it = kOps.find(op);
  PI_CHECK(it != kOps.end(), InvalidArgument, "no eager operator '", op, "'");
  nb::gil_scoped_release unlocked;
  return it->second(a, b);
}

}  // namespace

void register_tensor(nb::module_& m) {
  nb::class_<Tensor>(m, "Tensor")
      .def_static("from_array", &from_array, "array"_a, "dtype"_a)
      .def(
          "to",
          [](const Tensor& t, const std::string& device) {
            const Device d = Device::parse(device);
            nb::gil_scoped_release unlocked;
            return t.to(d);
          },
          "device"_a)
      .def("numpy", &to_numpy)
      .def_prop_ro(
          "shape",
          [](const Tensor& t) { return std::vector<int64_t>(t.shape().begin(), t.shape().end()); })
      .def_prop_ro("dtype", [](const Tensor& t) { return static_cast<int>(t.dtype()); })
      .def_prop_ro("device", [](const Tensor& t) { return t.device().str(); })
      .def("describe", &Tensor::describe);
  m.def("unary", &unary, "op"_a, "x"_a);
  m.def("binary", &binary, "op"_a, "a"_a, "b"_a);
}

}  // namespace polyinfer::python
