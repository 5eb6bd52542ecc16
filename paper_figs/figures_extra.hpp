// Data steps of the figures (registered in registry.cpp) and the helpers the data steps
// share. Internal to icl_paperfigs.
#pragma once
#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "paper_figs/figures.hpp"
#include "theory/params.hpp"

namespace icl::paperfigs {

FigureData fig_decomposition(const Settings& s);  // 1
FigureData fig_order_params(const Settings& s);   // 2
FigureData fig_test_context(const Settings& s);   // 3
FigureData fig_implicit_reg(const Settings& s);   // 4
FigureData fig_phase(const Settings& s);          // 5
FigureData fig_spectrum(const Settings& s);       // 6
FigureData fig_softmax(const Settings& s);        // 7
FigureData fig_patch_loss(const Settings& s);     // 8
FigureData fig_patch_layers(const Settings& s);   // 9
FigureData fig_patch_steps(const Settings& s);    // 10
FigureData fig_patch_align(const Settings& s);    // 11
FigureData fig_thought_patch(const Settings& s);  // 12
FigureData fig_transition_alpha(const Settings& s);  // 13 (beyond the papers)
// Beyond the papers (figures_beyond.cpp).
FigureData fig_bayes_gap(const Settings& s);      // 14
FigureData fig_optimal_ridge(const Settings& s);  // 15
FigureData fig_test_overlap(const Settings& s);   // 16
FigureData fig_finite_dim(const Settings& s);     // 18 (the finite-D theory)
FigureData fig_patch_blocks(const Settings& s);   // 17 (implicit dynamics, modern blocks)


// Shared by the data steps of figures 1-6 (figures.cpp).
theory::Params decomposition_params();  // the paper's decomposition-figure point
// Sidecar fields common to every table of a figure.
nlohmann::json table_meta(const Settings& s, int figure, const theory::Params& base,
                          const std::string& what);
// Settings::progress, when set.
void report(const Settings& s, const std::string& what, std::size_t done, std::size_t total);

}  // namespace icl::paperfigs
