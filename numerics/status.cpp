// The status names (numerics/status.hpp), in a unit of their own: a library that reports a
// Status (e.g. icl::verify_patch) does not pull in the Ceres solver with it.
#include "numerics/status.hpp"

namespace icl::numerics {

const char* to_string(Status status) {
  switch (status) {
    case Status::Converged: return "converged";
    case Status::NotConverged: return "not_converged";
    case Status::NumericalFailure: return "numerical_failure";
    case Status::CheckFailed: return "check_failed";
    case Status::Interrupted: return "interrupted";
  }
  return "unknown";
}

}  // namespace icl::numerics
