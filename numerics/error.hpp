// Error types shared by every layer, and the GSL error-handler guard.
#pragma once
#include <limits>
#include <stdexcept>
#include <string>

namespace icl {

// A parameter (field) is outside its allowed range or not finite. `field()` names it so that
// the command line can name the flag.
class InvalidParams : public std::invalid_argument {
 public:
  InvalidParams(std::string field, const std::string& message)
      : std::invalid_argument(field + ": " + message), field_(std::move(field)), detail_(message) {}
  const std::string& field() const noexcept { return field_; }
  const std::string& detail() const noexcept { return detail_; }  // the message without the field

 private:
  std::string field_, detail_;
};

// A numerical routine could not deliver a trustworthy value (GSL status, failed root bracket,
// non-convergence). `residual_norm()` is the residual reached, NaN when not applicable (the
// default).
class NumericalError : public std::runtime_error {
 public:
  explicit NumericalError(const std::string& message,
                          double residual_norm = std::numeric_limits<double>::quiet_NaN())
      : std::runtime_error(message), residual_norm_(residual_norm) {}
  double residual_norm() const noexcept { return residual_norm_; }

 private:
  double residual_norm_;
};

namespace numerics {
// GSL's default handler calls abort(). Every entry point of this library that calls GSL first
// calls this (thread-safe, idempotent) so that GSL returns status codes, which we turn into
// NumericalError with GSL's message.
void ensure_gsl_error_handler_off();
// Throw NumericalError("<where>: <gsl_strerror(status)>") when status != GSL_SUCCESS.
void check_gsl_status(int status, const char* where);
}  // namespace numerics

}  // namespace icl
