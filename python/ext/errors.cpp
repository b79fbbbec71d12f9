#include "errors.h"

#include <nanobind/nanobind.h>

#include "polyinfer/status.h"

namespace nb = nanobind;

namespace polyinfer::python {

void register_errors() {
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      // Looked up when raised, not at import: _errors is pure Python, imported by the package
      // before this module, and a failed lookup must not hide the error itself.
      nb::object cls;
      try {
        cls = nb::module_::import_("polyinfer._errors").attr(error_code_name(e.code()));
      } catch (const nb::python_error&) {
        PyErr_SetString(PyExc_RuntimeError, e.what());
        return;
      }
      PyErr_SetString(cls.ptr(), e.what());
    }
  });
}

}  // namespace polyinfer::python
