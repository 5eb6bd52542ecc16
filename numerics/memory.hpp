// Memory of this machine and of this process (docs/cli.md, "Memory and size"): a run whose
// estimated memory exceeds what the machine has available is refused before any work, with the
// estimate and where the available memory was read, instead of dying on std::bad_alloc.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace icl::numerics {

struct AvailableMemory {
  std::uint64_t bytes = 0;
  std::string source;  // e.g. "MemAvailable in /proc/meminfo", "the cgroup limit memory.max"
};
// The memory a new allocation can count on: MemAvailable of /proc/meminfo, lowered to the
// cgroup (v2) limit memory.max - memory.current when that is smaller; nullopt when neither can
// be read (then no check is made).
std::optional<AvailableMemory> available_memory();

// The free space where a file will be written: the file system of the folder of `path`
// (".": the working folder), or of the file stdout is redirected to; nullopt when it cannot be
// read or stdout is not a regular file (a terminal, a pipe). `source` names it for messages.
std::optional<AvailableMemory> free_space_of_folder(const std::string& path);
std::optional<AvailableMemory> free_space_of_stdout();

// Asks the C library (glibc: mallopt M_TRIM_THRESHOLD) to keep up to `bytes` of freed memory at
// the top of the heap instead of returning it to the system at every free, once per process (the
// first call sets it; later calls do nothing). For work that allocates and frees many blocks of
// a few kB to a few hundred kB in a loop: without it, each free that leaves more than 128 kB at
// the top shrinks the heap and the next allocation grows it again, page by page, in the kernel
// (the patch model's training: a third of its time, docs/patch.md §13). glibc then also stops
// adapting its mmap threshold: blocks above 128 kB are always mapped (and returned when freed).
// Elsewhere (not glibc) it does nothing.
void keep_freed_heap(std::size_t bytes);

// The largest resident set of this process so far (getrusage ru_maxrss), in bytes.
std::uint64_t peak_resident_bytes();

// "1.2 GB", "340 MB", "12 kB" (powers of 1000, three significant digits).
std::string format_bytes(double bytes);

// Throws InvalidParams(field) when `bytes` exceeds the available memory: "<what> needs about X;
// Y available (<source>)". Passes when the available memory cannot be read.
void check_fits_in_memory(double bytes, const std::string& field, const std::string& what);

}  // namespace icl::numerics
