#include "numerics/atomic_file.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace icl::numerics {

void write_file_atomically(const std::string& path, const std::string& content) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  fs::path dir = target.parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw std::runtime_error("cannot write '" + path + "': folder '" + dir.string() +
                             "' does not exist");
  // Unique per process: two processes writing the same target do not share a temporary file.
  std::string name = ".";  // (appending avoids a GCC 12 -Wrestrict false positive)
  name.append(target.filename().string()).append(".tmp.");
  name.append(std::to_string(static_cast<long>(::getpid())));
  const fs::path tmp = dir / name;
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write '" + tmp.string() + "'");
    out << content;
    out.flush();
    if (!out) {
      out.close();
      fs::remove(tmp, ec);
      throw std::runtime_error("write to '" + tmp.string() + "' failed");
    }
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw std::runtime_error("cannot rename into '" + path + "'");
  }
}

}  // namespace icl::numerics
