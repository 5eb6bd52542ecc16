// A solve that does not converge reports NaN values, keeps its last iterate apart, and is
// never a warm start (theory/lowrank.hpp: solve; theory/serialize.hpp: to_json).
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "theory/lowrank.hpp"
#include "theory/serialize.hpp"
#include "theory/sweep.hpp"

using namespace icl::theory;

namespace {

// Every reported value: order parameters, errors, decomposition pieces, z, e.
std::vector<double> values(const OrderParams& o, const Errors& er, const Decomposition& d,
                           double z, double e) {
  std::vector<double> v = {o.q,    o.m,      o.chi,     o.qbar,      o.chibar, o.mbar, o.m0,
                           o.q0,   o.qhat,   o.mhat,    o.chihat,    o.qbarhat,
                           o.chibarhat,      er.tm,     er.idg,      er.odg,   z,      e};
  for (const Components& c : {d.tm, d.idg, d.odg}) {
    v.push_back(c.algo);
    v.push_back(c.mem);
    v.push_back(c.structural);
  }
  return v;
}

std::vector<double> values(const Solution& s) {
  return values(s.order, s.error, s.decomposition, s.z, s.e);
}

void check_all_nan(const Solution& s) {
  for (double v : values(s)) CHECK(std::isnan(v));
  // Functions of the parameters are kept.
  CHECK(s.nu == doctest::Approx(s.params.nu()).epsilon(1e-15));
  CHECK(s.regime == regime(s.params));
  CHECK(std::isfinite(s.bayes_optimal.odg));
}

// A tolerance no residual meets: the saddle point's solver stops at the true root, unconverged.
SolveOptions unreachable(Method method) {
  SolveOptions o;
  o.method = method;
  o.solver.residual_tolerance = 1e-300;
  o.solver.max_iterations = 3;
  return o;
}

}  // namespace

TEST_CASE("a non-converged solve has NaN in every value and its last iterate apart") {
  const Params p;
  const Solution ref = solve(p);
  REQUIRE(ref.converged());
  CHECK_FALSE(ref.last_iterate.has_value());
  for (double v : values(ref)) CHECK(std::isfinite(v));

  for (Method m : {Method::Saddle, Method::Reduced}) {
    INFO("method " << to_string(m));
    const Solution s = solve(p, unreachable(m));
    REQUIRE_FALSE(s.converged());
    CHECK(s.status == icl::numerics::Status::NotConverged);
    CHECK(std::isfinite(s.residual_norm));
    check_all_nan(s);
    REQUIRE(s.last_iterate.has_value());
    const LastIterate& l = *s.last_iterate;
    for (double v : values(l.order, l.error, l.decomposition, l.z, l.e)) CHECK(std::isfinite(v));
    // The last iterate is (here) the root itself, only the tolerance was out of reach.
    CHECK(l.error.idg == doctest::Approx(ref.error.idg).epsilon(1e-9));
    CHECK(l.order.q == doctest::Approx(ref.order.q).epsilon(1e-9));
  }
}

TEST_CASE("Params(kappa = 1e-300) does not converge and reports no numbers") {
  const Params p{.kappa = 1e-300};
  const Solution s = solve(p);
  CHECK_FALSE(s.converged());
  check_all_nan(s);
  // Its JSON: NaN -> null, the last iterate (when there is one) under its own key.
  const auto j = to_json(s);
  const std::string text = j.dump();
  CHECK(j.at("converged") == false);
  CHECK(j.at("error").at("idg").is_null() == false);  // the value holds NaN ...
  CHECK(std::isnan(j.at("error").at("idg").get<double>()));
  CHECK(text.find("\"error\":{\"tm\":null,\"idg\":null,\"odg\":null}") != std::string::npos);
  CHECK(j.contains("last_iterate") == s.last_iterate.has_value());
  CHECK(j.at("nu").get<double>() == doctest::Approx(p.nu()));
  // The text never shows values for it.
  const std::string t = to_text(s);
  CHECK(t.find("IDG") == std::string::npos);
  CHECK(t.find(icl::numerics::to_string(s.status)) != std::string::npos);
}

TEST_CASE("to_json: last_iterate only for a non-converged solution, with finite values") {
  const Params p;
  CHECK_FALSE(to_json(solve(p)).contains("last_iterate"));
  const Solution s = solve(p, unreachable(Method::Saddle));
  const auto j = to_json(s);
  REQUIRE(j.contains("last_iterate"));
  const auto& l = j.at("last_iterate");
  CHECK(l.at("error").at("idg").get<double>() == doctest::Approx(s.last_iterate->error.idg));
  CHECK(l.at("decomposition").at("odg").at("struct").get<double>() ==
        doctest::Approx(s.last_iterate->decomposition.odg.structural));
  CHECK(l.at("order").size() == j.at("order").size());
  CHECK(std::isfinite(l.at("z").get<double>()));
  CHECK(j.dump().find("\"effective_ridge\":null") != std::string::npos);
}

TEST_CASE("a sweep never continues from a failed point and keeps its best attempt") {
  // The middle point fails; the last one is solved as if alone (not from NaN).
  const std::vector<double> kappas = {1.5, 1e-300, 1.2};
  const auto curve = sweep(Params{}, "kappa", kappas);
  REQUIRE(curve.size() == 3);
  CHECK(curve[0].converged());
  CHECK_FALSE(curve[1].converged());
  check_all_nan(curve[1]);
  REQUIRE(curve[2].converged());
  const Solution alone = solve(Params{.kappa = 1.2});
  CHECK(curve[2].error.idg == doctest::Approx(alone.error.idg).epsilon(1e-9));
  // Every point out of reach: all NaN with their residuals, last iterates kept.
  SweepOptions so;
  so.solve = unreachable(Method::Saddle);
  for (const Solution& s : sweep(Params{}, "alpha", {1.5, 2.0, 2.5}, so)) {
    CHECK_FALSE(s.converged());
    check_all_nan(s);
    CHECK(std::isfinite(s.residual_norm));
    CHECK(s.last_iterate.has_value());
  }
}
