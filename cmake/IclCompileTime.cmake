# Compile time (issue 23, install time; measured in bench/README.md "Build and install time").
#
# Unity units: the sources of a target are compiled a batch at a time, each batch one unit that
# includes them, so the headers (Eigen, nlohmann/json, pybind11) are parsed and their templates
# instantiated once per batch instead of once per source. Measured alone on one core: the 17
# sources of verify/patch 97 s as separate units against 53 s as one; verify/lowrank 84 s against
# 42 s; the Python module 117 s -> 49 s (its units spent 6-8 s each in pybind11's headers). Each
# target is cut into two batches, so that both cores of the 2-core machines stay busy.
# Sources of one unit share their anonymous namespaces: a helper that several sources need is
# defined once (theory/detail/common.hpp), and a file-local name is not reused by another source
# of the same target. Not a unity target: icl_numerics (a program links the archive members it
# needs, and a unity unit whole: the patch programs would link Ceres through the unit that holds
# the solver, which tests/layering_test_patch_links_no_theory_or_ceres forbids; its units are
# small, 46 s in all).
# A source that cannot share a unit with others opts out with
# set_source_files_properties(F PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON).
# ICL_UNITY_BUILD=OFF: one unit per source (e.g. to check that every source compiles alone, or to
# see which source a compiler message belongs to: GCC names the included file either way).
option(ICL_UNITY_BUILD "Compile the libraries' and the Python module's sources as unity units" ON)

function(icl_compile_time_settings)
  if(NOT ICL_UNITY_BUILD)
    return()
  endif()
  foreach(target IN ITEMS icl_theory icl_verify_lowrank icl_verify_patch icl_verify_multistep
                          icl_verify_softmax icl_theory_py)
    if(TARGET ${target})
      get_target_property(sources ${target} SOURCES)
      list(LENGTH sources n)
      math(EXPR half "(${n} + 1) / 2")
      set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${half})
    endif()
  endforeach()
  # Its `#pragma GCC optimize` (no fused multiply-add, docs/patch.md §2.6) would hold for the
  # sources after it in a unit.
  set_source_files_properties(${PROJECT_SOURCE_DIR}/verify/patch/model/vmath.cpp
                              TARGET_DIRECTORY icl_verify_patch PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
endfunction()
