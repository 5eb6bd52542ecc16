// Data steps of figures 7-12 (softmax attention; implicit-dynamics paper), registered in
// figures.cpp. Internal to icl_paperfigs.
#pragma once
#include "paper_figs/figures.hpp"

namespace icl::paperfigs {

FigureData fig_softmax(const Settings& s);        // 7
FigureData fig_patch_loss(const Settings& s);     // 8
FigureData fig_patch_layers(const Settings& s);   // 9
FigureData fig_patch_steps(const Settings& s);    // 10
FigureData fig_patch_align(const Settings& s);    // 11
FigureData fig_thought_patch(const Settings& s);  // 12

}  // namespace icl::paperfigs
