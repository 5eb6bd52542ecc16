// Internal to the icl_theory Python module: a Python callable progress(done, total, what) as the
// library's numerics::Progress, for calls that run with the GIL released.
//
// Each report with a callable takes the GIL, checks for pending signals (Ctrl-C raises
// KeyboardInterrupt there) and calls the callable; without one, only the signal check is made,
// at most every 20 ms (and after the last unit). An exception (the interrupt, or one raised by
// the callable) stops the reporting: where the library lets progress cancel (theory::sweep,
// solve_points, phase_grid, the simulator's run) it is thrown at once and the library stops and
// rethrows it; elsewhere (entries that do not document cancellation) it is kept and raised by
// rethrow_if_failed() once the call returns. Reports are serialized by the library, so the state needs no lock of its own.
#pragma once
#include <pybind11/pybind11.h>

#include <chrono>
#include <cstddef>
#include <exception>
#include <memory>
#include <string>

#include "numerics/progress.hpp"

namespace icl::python {

class PyProgress {
 public:
  // callback: None (no reporting) or a callable; it must outlive the call (the caller's frame
  // holds it). cancels: throw the exception into the library at once (see above).
  PyProgress(const pybind11::object& callback, bool cancels)
      : state_(std::make_shared<State>(State{callback.is_none() ? nullptr : callback.ptr(),
                                             cancels, nullptr})) {}

  // Without a callable the function still checks for Ctrl-C: after a unit of work when
  // kSignalCheckInterval has passed since the last check, and after the last unit. Taking the
  // GIL after each point of a vectorized solve (about a microsecond of work) cost as much as
  // the point itself; an interrupt now stops the call within the interval instead of after the
  // current point, which for units longer than the interval (seeds, sweep points with
  // simulations) is the same.
  numerics::Progress function() const {
    return [s = state_](std::size_t done, std::size_t total, const std::string& what) {
      if (s->error) return;
      if (s->callback == nullptr && done != total) {
        const auto now = std::chrono::steady_clock::now();
        if (now - s->last_check < kSignalCheckInterval) return;
        s->last_check = now;
      }
      pybind11::gil_scoped_acquire gil;
      try {
        if (PyErr_CheckSignals() != 0) throw pybind11::error_already_set();
        if (s->callback != nullptr) pybind11::handle(s->callback)(done, total, what);
      } catch (...) {
        s->error = std::current_exception();
        if (s->cancels) throw;
      }
    };
  }

  // With the GIL held, after the library call: raise what a report raised.
  void rethrow_if_failed() const {
    if (state_->error) std::rethrow_exception(state_->error);
  }

  // With the GIL held, after a library call that returns what finished when it is stopped (the
  // simulator's run): true, and the interrupt dropped, when the report stopped on Ctrl-C
  // (KeyboardInterrupt); any other exception stays for rethrow_if_failed().
  bool take_keyboard_interrupt() const {
    if (!state_->error) return false;
    try {
      std::rethrow_exception(state_->error);
    } catch (pybind11::error_already_set& e) {
      if (!e.matches(PyExc_KeyboardInterrupt)) return false;
    } catch (...) {
      return false;
    }
    state_->error = nullptr;
    return true;
  }

 private:
  static constexpr std::chrono::milliseconds kSignalCheckInterval{20};
  struct State {
    PyObject* callback;  // borrowed: the caller keeps it alive
    bool cancels;
    std::exception_ptr error;
    std::chrono::steady_clock::time_point last_check{};  // of Ctrl-C without a callable
  };
  std::shared_ptr<State> state_;
};

}  // namespace icl::python
