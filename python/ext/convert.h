// Values between numpy and polyinfer (python/ext/module.cpp): the inputs of a run gathered from
// numpy arrays (lent, not copied), and the outputs made into numpy arrays, lists and dicts the
// way ONNX Runtime gives them.
//
// numpy has no types for bfloat16, the 8-, 6- and 4-bit floats and the 4- and 2-bit integers;
// ml_dtypes (what onnx uses) adds them, one element per byte (two for bfloat16). Such arrays
// cross as their bytes with the polyinfer dtype beside them (the Python layer views them as
// uint8/uint16 and back): whole-byte types keep their bytes, sub-byte ones are packed on the
// way in and unpacked, one element per byte, on the way out.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <map>
#include <string>
#include <variant>
#include <vector>

#include "polyinfer/tensor.h"

namespace polyinfer::python {

using InputArray = nanobind::ndarray<nanobind::ro, nanobind::c_contig, nanobind::device::cpu>;

// The inputs of one run, added one by one by the Python layer. Arrays are lent to the run: the
// Feeds holds them (and so their memory) for as long as it lives.
class Feeds {
 public:
  // A numeric array (C-contiguous, native byte order). `dtype` 0: the array's own element type;
  // otherwise the polyinfer dtype its bytes hold (an ml_dtypes array viewed as uint8/uint16).
  void add_array(const std::string& name, const InputArray& a, int dtype);
  // A string tensor of `shape` from its items in row-major order.
  void add_strings(const std::string& name, const Shape& shape,
                   const std::vector<std::string>& items);
  // A sequence of tensors whose element dtype is `elem` (needed when it is empty).
  void add_sequence(const std::string& name, const std::vector<InputArray>& items,
                    const std::vector<int>& dtypes, int elem);
  // An optional input given as None.
  void add_none(const std::string& name);
  // A map's keys or values, in the dict's order: an array (integer keys, numeric values) or
  // strings.
  using Items = std::variant<InputArray, std::vector<std::string>>;
  // A map input (a dict), and a sequence of them (a list of dicts) whose key and value dtypes
  // are `key` and `value` (needed when it is empty).
  void add_map(const std::string& name, const Items& keys, const Items& values);
  void add_map_sequence(const std::string& name, const std::vector<Items>& keys,
                        const std::vector<Items>& values, int key, int value);

  const std::map<std::string, Value>& values() const { return values_; }

 private:
  Tensor tensor(const std::string& name, const InputArray& a, int dtype);
  Value map(const std::string& name, const Items& keys, const Items& values);

  std::map<std::string, Value> values_;
  std::vector<InputArray> held_;
};

// Copies a value's tensors that share memory with anything else and moves device tensors to the
// host, so that to_python can hand their memory to numpy. Needs no GIL.
void own_memory(Value& v);
// A numeric tensor as a numpy array over its memory; a string tensor as a numpy array of str
// objects; a tensor of a type numpy lacks as (dtype, array of its codes) for the Python layer to
// view as ml_dtypes; a sequence as a list; a map as a dict; none as None.
nanobind::object to_python(Value v);

}  // namespace polyinfer::python
