# Compile time (issue 23, install time; measured in bench/README.md "Build and install time").
# The Python module's units are compiled as unity units of 6 sources (two for its 12 sources, so
# that 2 cores stay busy): each of its units spent 6-8 s of its 10-16 s in pybind11's headers and
# the pybind11 templates they all instantiate, which the sources of a unity unit share (the module:
# 117 s of CPU -> 49 s). A source that cannot share a unit with others (a name defined in an
# anonymous namespace of another source) opts out with
# set_source_files_properties(F PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON). ICL_UNITY_PYTHON=OFF:
# one unit per source (e.g. to see which source a compiler message belongs to).
option(ICL_UNITY_PYTHON "Compile the Python module's sources as unity units" ON)

function(icl_compile_time_settings)
  if(ICL_UNITY_PYTHON AND TARGET icl_theory_py)
    set_target_properties(icl_theory_py PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 6)
  endif()
endfunction()
