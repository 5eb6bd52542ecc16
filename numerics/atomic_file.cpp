#include "numerics/atomic_file.hpp"

#include <unistd.h>

#include <filesystem>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "numerics/error.hpp"

namespace icl::numerics {

namespace {

// The temporary file next to `path`, unique per process (two processes writing the same target
// do not share one); throws when the folder does not exist.
std::filesystem::path temporary_for(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  fs::path dir = target.parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw std::runtime_error("cannot write '" + path + "': folder '" + dir.string() +
                             "' does not exist");
  std::string name = ".";  // (appending avoids a GCC 12 -Wrestrict false positive)
  name.append(target.filename().string()).append(".tmp.");
  name.append(std::to_string(static_cast<long>(::getpid())));
  return dir / name;
}

}  // namespace

AtomicFileWriter::AtomicFileWriter(std::string path)
    : path_(std::move(path)), tmp_(temporary_for(path_).string()) {
  file_ = std::fopen(tmp_.c_str(), "wb");
  if (file_ == nullptr) throw std::runtime_error("cannot write '" + tmp_ + "'");
}

AtomicFileWriter::~AtomicFileWriter() {
  if (file_ == nullptr) return;
  std::fclose(file_);
  std::remove(tmp_.c_str());
}

void AtomicFileWriter::write(const std::string& text) {
  if (file_ == nullptr) throw std::runtime_error("write to '" + path_ + "' after commit");
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size())
    throw std::runtime_error("write to '" + tmp_ + "' failed");
}

void AtomicFileWriter::commit() {
  std::FILE* f = file_;
  file_ = nullptr;
  const bool written = std::fflush(f) == 0;
  const bool closed = std::fclose(f) == 0;
  std::error_code ec;
  if (written && closed) std::filesystem::rename(tmp_, path_, ec);
  if (!written || !closed || ec) {
    std::filesystem::remove(tmp_, ec);
    throw std::runtime_error(!written || !closed ? "write to '" + tmp_ + "' failed"
                                                 : "cannot rename into '" + path_ + "'");
  }
}

void write_file_atomically(const std::string& path, const std::string& content) {
  AtomicFileWriter out(path);
  out.write(content);
  out.commit();
}

namespace {

// A file can be created in `dir`: create a uniquely named empty file and remove it (permissions,
// read-only mounts and full quotas all show up here, before the run rather than after it).
std::string folder_unwritable(const std::filesystem::path& dir) {
  std::string name = ".icl-write-test.";
  name.append(std::to_string(static_cast<long>(::getpid())));
  const std::filesystem::path probe = dir / name;
  {
    std::ofstream out(probe, std::ios::binary | std::ios::trunc);
    if (!out) return "cannot create a file in the folder '" + dir.string() + "'";
  }
  std::error_code ec;
  std::filesystem::remove(probe, ec);
  return {};
}

void make_folder(const std::filesystem::path& dir, const std::string& field) {
  std::error_code ec;
  if (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec))
    throw InvalidParams(field, "'" + dir.string() + "' exists and is not a folder");
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    throw InvalidParams(field, "cannot create the folder '" + dir.string() + "'" +
                                   (ec ? ": " + ec.message() : std::string()));
  if (const std::string why = folder_unwritable(dir); !why.empty()) throw InvalidParams(field, why);
}

}  // namespace

void prepare_output_file(const std::string& path, const std::string& field) {
  namespace fs = std::filesystem;
  if (path == "-") return;
  if (path.empty()) throw InvalidParams(field, "an empty file name");
  if (path.back() == '/')
    throw InvalidParams(field, "'" + path + "' names a folder; give a file name (e.g. '" + path +
                                   "result.json')");
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw InvalidParams(field, "'" + path + "' is an existing folder; give a file name (e.g. '" +
                                   path + "/result.json')");
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  make_folder(dir, field);
}

void prepare_output_folder(const std::string& dir, const std::string& field) {
  if (dir.empty()) throw InvalidParams(field, "an empty folder name");
  make_folder(std::filesystem::path(dir), field);
}

}  // namespace icl::numerics
