// The vectorized exp and erf of the patch model (verify/patch/model/detail/vmath.hpp, docs/patch.md
// §2.6): the same bits at every width this CPU runs and at every array length, and within 1 ulp
// of glibc's std::exp and std::erf.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "verify/patch/model/detail/vmath.hpp"

using namespace icl::verify::patch::detail;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Inputs: normal draws at two scales, a wide uniform range, and the edge cases.
std::vector<double> inputs(double wide) {
  std::mt19937_64 g(7);
  std::normal_distribution<double> n1(0, 1.5), n2(0, 30);
  std::uniform_real_distribution<double> u(-wide, wide);
  std::vector<double> x;
  for (int i = 0; i < 100000; ++i) x.push_back(n1(g));
  for (int i = 0; i < 50000; ++i) x.push_back(n2(g));
  for (int i = 0; i < 50000; ++i) x.push_back(u(g));
  for (double s : {0.0, -0.0, 1e-310, -1e-310, 1e-300, 1.0, -1.0, std::nextafter(1.0, 0.0), 6.0,
                   -6.0, std::nextafter(6.0, 0.0), kInf, -kInf, kNaN, 708.9, 709.0, 709.5, -708.0,
                   -708.5, -745.2, -800.0, 1e300, -1e300})
    x.push_back(s);
  return x;
}

// |a - b| in units in the last place of b (0 when both are NaN or equal).
double ulps(double a, double b) {
  if (a == b || (std::isnan(a) && std::isnan(b))) return 0;
  if (std::isnan(a) || std::isnan(b) || std::isinf(b)) return kInf;
  const double ulp = std::nextafter(std::fabs(b), kInf) - std::fabs(b);
  return std::fabs(a - b) / ulp;
}

using Kernel = void (*)(int, double*, std::size_t);

void check(Kernel kernel, double (*ref)(double), double wide) {
  const std::vector<double> x = inputs(wide);
  std::vector<double> one = x;
  kernel(1, one.data(), one.size());
  double worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) worst = std::max(worst, ulps(one[i], ref(x[i])));
  CHECK(worst <= 1.0);
  // Every width (as far as this CPU goes), every length up to 40 (the tails), and the whole array:
  // the same bits as one lane at a time.
  for (int width : {2, 4, 8}) {
    if (width > vmath_width()) continue;
    CAPTURE(width);
    std::vector<double> y = x;
    kernel(width, y.data(), y.size());
    CHECK(std::memcmp(y.data(), one.data(), y.size() * sizeof(double)) == 0);
    for (std::size_t n = 0; n <= 40; ++n) {
      std::vector<double> part(x.end() - 40, x.end());  // the edge cases and some wide draws
      kernel(width, part.data(), n);
      CHECK(std::memcmp(part.data(), &one[x.size() - 40], n * sizeof(double)) == 0);
      CHECK(std::memcmp(part.data() + n, &x[x.size() - 40 + n], (40 - n) * sizeof(double)) == 0);
    }
  }
}

double erf_ref(double x) { return std::erf(x); }
double exp_ref(double x) { return std::exp(x); }

}  // namespace

TEST_CASE("vectorized exp: the same bits at every width and length, within 1 ulp of std::exp") {
  check(exp_inplace_width, exp_ref, 760);
  double e[] = {-kInf, kInf, 0.0, -800.0};
  exp_inplace(e, 4);
  CHECK(e[0] == 0.0);
  CHECK(e[1] == kInf);
  CHECK(e[2] == 1.0);
  CHECK(e[3] == 0.0);
}

TEST_CASE("vectorized erf: the same bits at every width and length, within 1 ulp of std::erf") {
  check(erf_inplace_width, erf_ref, 8);
  double e[] = {-kInf, kInf, -0.0, 6.0, kNaN};
  erf_inplace(e, 5);
  CHECK(e[0] == -1.0);
  CHECK(e[1] == 1.0);
  CHECK((e[2] == 0.0 && std::signbit(e[2])));
  CHECK(e[3] == 1.0);
  CHECK(std::isnan(e[4]));
}
