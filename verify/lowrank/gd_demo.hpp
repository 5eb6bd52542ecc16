// The ill-posedness demo (docs/errors_phases.md §9): gradient descent on the training loss of one
// seed's data from several initializations, against the CG (ridge / exact) solution. Where S
// is singular the loss does not pin Gamma on null(S), and GD keeps what its start put there.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "numerics/progress.hpp"
#include "numerics/status.hpp"
#include "theory/params.hpp"
#include "verify/lowrank/data.hpp"
#include "verify/lowrank/simulator.hpp"
#include "verify/lowrank/training.hpp"

namespace icl::verify::lowrank {

struct GdDemoOptions {
  int dim = 60;                     // token dimension D, 2..2000
  // The data are those of seed 0 of a simulation with this base seed (derive_seed(base_seed, 0)).
  std::uint64_t base_seed = 20251;
  std::vector<double> init_scales{0.0, 1.0, 2.0, 4.0};  // Gamma0 = scale Z, Z iid N(0, 1/D); >= 0
  int steps = 300;                  // gradient-descent steps, >= 1
  OdgKind odg = OdgKind::Isotropic; // Subspace only for low-rank tasks
  CgOptions reference{.tolerance = 1e-10, .max_iterations = 20000};  // the CG solution
  void validate() const;            // InvalidParams naming the field
  // These options on the data of seed 0 of simulation `s` (its dim, base seed and ODG kind):
  // `icl simulate --gd-demo`.
  GdDemoOptions on_data_of(const SimOptions& s) const;
};

struct GdRun {
  double init_scale = 0;
  int steps = 0;
  double loss = 0, odg = 0, idg = 0, tm = 0;
  double null_norm2 = 0;        // |Gamma P0|_F^2 / D  (P0 = projector on null(S))
  double null_dist2 = 0;        // |(Gamma - Gamma_cg) P0|_F^2 / D
  double span_dist2 = 0;        // |(Gamma - Gamma_cg) P_S|_F^2 / D
};
struct GdDemoResult {
  GdDemoOptions options;
  numerics::Status status = numerics::Status::Converged;  // the CG reference's
  std::string message;
  double residual_norm = 0;  // relative residual of the CG reference
  double cg_odg = 0, cg_idg = 0, cg_tm = 0, cg_null_norm2 = 0, cg_loss = 0;
  std::vector<GdRun> runs;
  double odg_spread = 0;  // standard deviation of ODG across initializations
  double null_spread = 0; // standard deviation of |Gamma P0|^2/D across initializations
  bool converged() const { return status == numerics::Status::Converged; }
};

// progress(k, init_scales.size(), "initialization") after each GD run.
GdDemoResult run(const theory::Params& p, const GdDemoOptions& o,
                 const numerics::Progress& progress = {});

}  // namespace icl::verify::lowrank
