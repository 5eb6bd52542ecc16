// Data steps of the figures (registered in registry.cpp) and the helpers the data steps
// share. Internal to icl_paperfigs.
#pragma once
#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "paper_figs/figures.hpp"
#include "theory/params.hpp"

namespace icl::paperfigs {

// The data step of each figure (a DataStep), by figure number (registry.cpp).
using FigureStep = FigureData(const Settings& s, const numerics::Progress& progress);
FigureStep fig_decomposition, fig_order_params, fig_test_context, fig_implicit_reg,  // 1-4
    fig_phase, fig_spectrum;                                                        // 5, 6
FigureStep fig_softmax;                                                             // 7
FigureStep fig_patch_loss, fig_patch_layers, fig_patch_steps, fig_patch_align,      // 8-11
    fig_thought_patch, fig_patch_blocks;                                            // 12, 17
// Beyond the papers.
FigureStep fig_transition_alpha;                                                    // 13
FigureStep fig_bayes_gap, fig_optimal_ridge, fig_test_overlap, fig_finite_dim;      // 14-16, 18
FigureStep fig_sensitivity;                                                         // 19
FigureStep fig_cot, fig_depth;                                                      // 20, 21
FigureStep fig_finite_dim_grid;                                                     // 22

// Shared by the data steps of figures 1-6 (figures.cpp).
theory::Params decomposition_params();  // the paper's decomposition-figure point
// Sidecar fields common to every table of a figure.
nlohmann::json table_meta(const Settings& s, int figure, const theory::Params& base,
                          const std::string& what);
// progress(done, total, what), when set.
void report(const numerics::Progress& progress, const std::string& what, std::size_t done,
            std::size_t total);

}  // namespace icl::paperfigs
