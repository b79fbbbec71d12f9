// polyinfer::Error as Python exceptions: each ErrorCode raises the class of the same name in
// polyinfer._errors (python/polyinfer/_errors.py), which also derives from the Python exception
// a caller would catch for it (InvalidArgument from ValueError, Io from OSError, ...).
#pragma once

namespace polyinfer::python {

// Registers the translator; call once, from the module's initializer.
void register_errors();

}  // namespace polyinfer::python
