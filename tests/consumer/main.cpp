// A tiny consumer of the installed library: the Marchenko-Pastur Stieltjes transform by
// quadrature must match its closed form.
#include <cmath>
#include <cstdio>

#include "numerics/spectral_integral.hpp"

int main() {
  icl::numerics::MarchenkoPastur mp(0.5, 2.0);
  const double z = -0.7;
  const double quad = icl::numerics::resolvent_moment_quadrature(mp, z, 0, 1);
  const double exact = mp.stieltjes(z);
  std::printf("quadrature %.17g closed form %.17g\n", quad, exact);
  return std::abs(quad - exact) <= 1e-10 * std::abs(exact) ? 0 : 1;
}
