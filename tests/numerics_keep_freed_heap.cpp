// numerics::keep_freed_heap (numerics/memory.hpp, docs/patch.md §13): after it, memory freed at
// the top of the heap stays with the process instead of going back to the system at each free.
#include <doctest/doctest.h>

#include <cstdlib>
#include <vector>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "numerics/memory.hpp"

TEST_CASE("keep_freed_heap: blocks freed at the top of the heap are kept, not returned") {
#if defined(__GLIBC__)
  icl::numerics::keep_freed_heap(std::size_t(64) << 20);
  std::vector<void*> blocks;
  // 4 MB in blocks of 20 kB (below glibc's mmap threshold: from the heap), freed last-first
  for (int i = 0; i < 200; ++i) blocks.push_back(std::malloc(20000));
  const std::size_t grown = mallinfo2().arena;
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) std::free(*it);
  // glibc's default (128 kB) would have shrunk the heap by about 4 MB
  CHECK(mallinfo2().arena >= grown);
#endif
}
