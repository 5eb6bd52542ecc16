#include "numerics/error.hpp"

#include <mutex>

#include <gsl/gsl_errno.h>

namespace icl::numerics {

void ensure_gsl_error_handler_off() {
  // GSL's handler is process-wide state owned by GSL; switching it off once is the only way to
  // keep GSL from calling abort(). After this, every GSL call's status is checked.
  static std::once_flag once;
  std::call_once(once, [] { gsl_set_error_handler_off(); });
}

void check_gsl_status(int status, const char* where) {
  if (status != GSL_SUCCESS)
    throw NumericalError(std::string(where) + ": GSL error: " + gsl_strerror(status));
}

}  // namespace icl::numerics
