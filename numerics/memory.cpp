#include "numerics/memory.hpp"

#include <sys/resource.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "numerics/error.hpp"

namespace icl::numerics {
namespace {

// The value of a "Key:   123 kB" line of /proc/meminfo, in bytes.
std::optional<std::uint64_t> meminfo(const std::string& key) {
  std::ifstream in("/proc/meminfo");
  std::string name, unit;
  std::uint64_t value = 0;
  while (in >> name >> value) {
    std::getline(in, unit);
    if (name == key + ":") return value * (unit.find("kB") != std::string::npos ? 1024 : 1);
  }
  return std::nullopt;
}

// A number of bytes from a one-line cgroup file; nullopt for "max" or when unreadable.
std::optional<std::uint64_t> cgroup_value(const char* path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text == "max") return std::nullopt;
  try {
    return std::stoull(text);
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace

std::optional<AvailableMemory> available_memory() {
  std::optional<AvailableMemory> out;
  if (const auto m = meminfo("MemAvailable")) out = AvailableMemory{*m, "MemAvailable in /proc/meminfo"};
  const auto limit = cgroup_value("/sys/fs/cgroup/memory.max");
  const auto used = cgroup_value("/sys/fs/cgroup/memory.current");
  if (limit && used) {
    const std::uint64_t room = *limit > *used ? *limit - *used : 0;
    if (!out || room < out->bytes)
      out = AvailableMemory{room, "the cgroup limit /sys/fs/cgroup/memory.max minus memory.current"};
  }
  return out;
}

std::optional<AvailableMemory> free_space_of_folder(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  const fs::space_info space = fs::space(dir, ec);
  if (ec) return std::nullopt;
  return AvailableMemory{space.available, "the file system of '" + dir.string() + "'"};
}

std::optional<AvailableMemory> free_space_of_stdout() {
  struct stat st {};
  struct statvfs vfs {};
  if (::fstat(STDOUT_FILENO, &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  if (::fstatvfs(STDOUT_FILENO, &vfs) != 0) return std::nullopt;
  return AvailableMemory{std::uint64_t(vfs.f_bavail) * vfs.f_frsize,
                         "the file system stdout is redirected to"};
}

void keep_freed_heap(std::size_t bytes) {
#if defined(__GLIBC__)
  static const bool set = [bytes] {
    return mallopt(M_TRIM_THRESHOLD, static_cast<int>(std::min<std::size_t>(bytes, INT_MAX))) == 1;
  }();
  (void)set;
#else
  (void)bytes;
#endif
}

std::uint64_t peak_resident_bytes() {
  struct rusage u {};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<std::uint64_t>(u.ru_maxrss) * 1024;  // kilobytes on Linux
}

std::string format_bytes(double bytes) {
  static const char* units[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
  int k = 0;
  while (bytes >= 1000 && k < 6) {
    bytes /= 1000;
    ++k;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, k == 0 ? "%.0f %s" : "%.3g %s", bytes, units[k]);
  return buf;
}

void check_fits_in_memory(double bytes, const std::string& field, const std::string& what) {
  const auto avail = available_memory();
  if (!avail || !(bytes > double(avail->bytes))) return;
  throw InvalidParams(field, what + " needs about " + format_bytes(bytes) + "; " +
                                 format_bytes(double(avail->bytes)) + " available (" +
                                 avail->source + ")");
}

}  // namespace icl::numerics
