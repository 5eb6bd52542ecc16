// depth: to be written (docs/multistep.md).
#include "python/bindings.hpp"

namespace icl::python {
void bind_depth(py::module_&) {}
}  // namespace icl::python
