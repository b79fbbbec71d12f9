// polyinfer.Tensor's C++ side (python/polyinfer/_tensor.py wraps it): a polyinfer::Tensor made
// from a numpy array (copied: the Tensor owns its memory), moved between devices with to(),
// read back as a numpy array, and the eager operators of polyinfer/ops.h on it. The GIL is
// released while a tensor moves or an operator runs.
#pragma once

#include <nanobind/nanobind.h>

namespace polyinfer::python {

void register_tensor(nanobind::module_& m);

}  // namespace polyinfer::python
