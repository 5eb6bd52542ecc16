// The one serializer of FiniteDimResult (theory/serialize.hpp): its JSON layout, the NaN rule
// for a failed result, and the sweep's fd_* columns.
#include <algorithm>
#include <cmath>
#include <string>

#include <doctest/doctest.h>

#include "theory/finite_dim.hpp"
#include "theory/serialize.hpp"

using namespace icl::theory;

TEST_CASE("finite_dim_to_json_round_trips_the_result") {
  Params p;
  p.lambda = 0.05;
  FiniteDimOptions o;
  o.dim = 40;
  o.switches.sphere_queries = true;
  const FiniteDimResult r = solve_finite_dim(p, o);
  REQUIRE(r.converged());
  // dump() writes doubles so that they parse back to the same bits.
  const auto j = nlohmann::json::parse(to_json(r).dump());
  CHECK(j.at("dim") == 40);
  CHECK(j.at("status") == "converged");
  CHECK(j.at("message") == r.message);
  CHECK(j.at("sized") == nlohmann::json::parse(to_json(r.sized).dump()));
  CHECK(j.at("error").at("tm").get<double>() == r.error.tm);
  CHECK(j.at("limit").at("idg").get<double>() == r.limit.error.idg);
  CHECK(j.at("slope").at("odg").get<double>() == r.slope.odg);
  CHECK(j.at("order").at("q0").get<double>() == r.order.q0);
  REQUIRE(j.at("sources").size() == r.sources.size());
  for (const auto& s : r.sources) {
    CHECK(j.at("sources").at(s.name).at("slope").at("idg").get<double>() == s.slope.idg);
    CHECK(j.at("sources").at(s.name).at("correction").at("tm").get<double>() == s.correction.tm);
  }
  CHECK(j.at("omitted").get<std::vector<std::string>>() == r.omitted);
  CHECK(j.at("finite_d_switches").at("sphere_queries") == true);
  CHECK(j.at("finite_d_switches").at("fixed_norm_tasks") == false);
  // The ordered layout: the documented key order.
  std::vector<std::string> keys;
  const nlohmann::ordered_json ordered = to_json(r);
  for (const auto& [k, v] : ordered.items()) keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"dim", "status", "message", "residual_norm", "sized",
                                         "error", "limit", "slope", "second_order", "order",
                                         "decomposition", "sources",
                                         "omitted", "uncertainty", "validity",
                                         "finite_d_switches", "bayes_optimal"});
  CHECK(j.at("bayes_optimal").at("idg").get<double>() == r.bayes_optimal.idg);
  // The decomposition at D (docs/finite_dim.md §21.17): algo, with mem and struct null.
  CHECK(j.at("decomposition").at("idg").at("algo").get<double>() == r.decomposition.idg.algo);
  CHECK(j.at("decomposition").at("tm").at("mem").is_null());
  CHECK(j.at("decomposition").at("odg").at("struct").is_null());
  CHECK(j.at("bayes_optimal").at("limit").at("odg").get<double>() == r.limit.bayes_optimal.odg);
  // The error bar (docs/finite_dim.md §21.12) is the estimated O(1/D^2) rest.
  CHECK(j.at("uncertainty").at("idg").get<double>() == r.validity.remainder.idg);
  CHECK(r.validity.remainder.idg > 0);
  CHECK(j.at("validity").at("valid") == r.valid());
  CHECK(j.at("validity").at("relative_correction").at("idg") == r.validity.relative_correction.idg);
  CHECK(j.at("validity").at("remainder").at("odg") == r.validity.remainder.odg);
  const auto row = finite_dim_row(&r);
  CHECK(row == std::vector<double>{r.error.tm, r.error.idg, r.error.odg,
                                   r.decomposition.tm.algo, r.decomposition.idg.algo,
                                   r.decomposition.odg.algo, r.bayes_optimal.idg,
                                   r.bayes_optimal.odg, r.valid() ? 1.0 : 0.0});
  CHECK(finite_dim_columns() ==
        std::vector<std::string>{"fd_tm", "fd_idg", "fd_odg", "fd_tm_algo", "fd_idg_algo",
                                 "fd_odg_algo", "fd_bayes_idg", "fd_bayes_odg", "fd_valid"});
  CHECK(finite_dim_columns(true).size() == finite_dim_row(&r, true).size());
  CHECK(finite_dim_row(nullptr, true).size() == finite_dim_columns(true).size());
}

TEST_CASE("finite_dim_to_json_of_a_failed_result_has_no_values") {
  // A result that did not converge shows null values everywhere (its limit's too), with its
  // status, message and inputs kept. Built by hand: the values set here must not appear.
  FiniteDimResult r;
  r.options.dim = 12;
  r.status = icl::numerics::Status::NumericalFailure;
  r.message = "a perturbed map left the domain";
  r.error = r.slope = r.limit.error = {0.1, 0.2, 0.3};
  r.order.q = 0.4;
  r.sources.push_back({"test_context", {1, 2, 3}, {0.5, 0.6, 0.7}, {}});
  r.omitted = {"sequences"};
  const auto j = nlohmann::json::parse(to_json(r).dump());
  CHECK(j.at("status") == "numerical_failure");
  CHECK(j.at("message") == r.message);
  for (const char* block : {"error", "limit", "slope"})
    for (const char* e : {"tm", "idg", "odg"}) CHECK(j.at(block).at(e).is_null());
  CHECK(j.at("order").at("q").is_null());
  CHECK(j.at("decomposition").at("tm").at("algo").is_null());
  CHECK(j.at("sources").at("test_context").at("slope").at("tm").is_null());
  CHECK(j.at("sources").at("test_context").at("correction").at("odg").is_null());
  CHECK(j.at("omitted") == nlohmann::json::array({"sequences"}));
  CHECK(j.at("sized").contains("alpha"));
  for (double v : finite_dim_row(&r)) CHECK(std::isnan(v));
  for (double v : finite_dim_row(nullptr)) CHECK(std::isnan(v));
  CHECK(to_text(r).find("no finite-D prediction") != std::string::npos);
  CHECK(to_text(r).find("0.1") == std::string::npos);
}

TEST_CASE("finite_dim_to_json_carries_the_shifted_protocol_per_source") {
  // docs/finite_dim.md §21.11, §21.12: with a shifted protocol each source's slope and correction
  // carry `shift`, and test_shift its error bar; without one neither key exists.
  Params p{.alpha = 2, .tau = 2.25, .kappa = 1.5, .rho = 0.9, .sigma = 0.3};
  FiniteDimOptions o;
  o.dim = 30;
  const auto plain = nlohmann::json::parse(to_json(solve_finite_dim(p, o)).dump());
  CHECK_FALSE(plain.contains("test_shift"));
  CHECK_FALSE(plain.at("sources").at("query_norms").at("slope").contains("shift"));
  p.test_overlap = 0.3;
  const FiniteDimResult r = solve_finite_dim(p, o);
  REQUIRE(r.converged());
  const auto j = nlohmann::json::parse(to_json(r).dump());
  for (const auto& s : r.sources) {
    INFO(s.name);
    CHECK(j.at("sources").at(s.name).at("slope").at("shift").get<double>() == s.shift_slope);
    CHECK(j.at("sources").at(s.name).at("correction").at("shift").get<double>() ==
          s.shift_slope / 30);
  }
  CHECK(j.at("test_shift").at("error").get<double>() == r.test_shift->error);
  const double u = j.at("test_shift").at("uncertainty").get<double>();
  CHECK(u == r.validity.shift_remainder);
  // eps^2 |limit| from the shift's own corrections: positive, of the size of the others'.
  CHECK(u > 0);
  CHECK(u < 10 * std::max({r.validity.remainder.tm, r.validity.remainder.idg,
                           r.validity.remainder.odg}));
}
