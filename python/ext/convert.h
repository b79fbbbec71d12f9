// Values between numpy and polyinfer (python/ext/module.cpp): numpy arrays lent to a run, string
// arrays copied in, outputs out as numpy arrays, lists and dicts the way ONNX Runtime gives them.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <string>
#include <vector>

#include "polyinfer/tensor.h"

namespace polyinfer::python {

using InputArray = nanobind::ndarray<nanobind::ro, nanobind::c_contig, nanobind::device::cpu>;

// The array's memory as a tensor, without a copy; the array must outlive the tensor's use.
// Throws InvalidArgument for an element type polyinfer has no dtype for.
Tensor borrow_array(const std::string& name, const InputArray& a);
// A string tensor of `shape` from its items in row-major order.
Tensor string_tensor(const std::string& name, const Shape& shape,
                     const std::vector<std::string>& items);
// Copies a value's tensors that share memory with anything else and moves device tensors to the
// host, so that to_python can hand their memory to numpy. Needs no GIL.
void own_memory(Value& v);
// A numeric tensor as a numpy array over its memory; a string tensor as a numpy array of str
// objects; a sequence as a list; a map as a dict; none as None.
nanobind::object to_python(Value v);

}  // namespace polyinfer::python
