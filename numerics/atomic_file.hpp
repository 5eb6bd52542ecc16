// Writing a file atomically: the content goes to a temporary file in the same folder, which is
// then renamed over the target, so a reader never sees a half-written file.
#pragma once
#include <cstdio>
#include <string>

namespace icl::numerics {

// Throws std::runtime_error with a clear message when the folder does not exist or the write or
// rename fails (the temporary file is removed then).
void write_file_atomically(const std::string& path, const std::string& content);

// A file written in pieces, then published atomically: the pieces go to a temporary file in the
// target's folder, commit() renames it over the target; destroyed without commit() (an error, an
// interrupt), the temporary file is removed and the target left as it was.
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(std::string path);  // throws std::runtime_error as write_file_atomically
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;
  ~AtomicFileWriter();
  void write(const std::string& text);  // throws std::runtime_error when the write fails
  void commit();

 private:
  std::string path_, tmp_;
  std::FILE* file_ = nullptr;
};

// The one rule for every file a run will write (--out, --save, sidecars, checkpoints), applied
// before any work so that no result is lost at the end: the path names a file (not "", not
// ending in '/', not an existing folder), its folder is created when missing, and a file can be
// created in that folder (tried, then removed). Throws InvalidParams(field) saying which of these
// failed. "-" (stdout) passes.
void prepare_output_file(const std::string& path, const std::string& field);
// The same for an output folder (icl figs --out DIR): created when missing, must be writable.
void prepare_output_folder(const std::string& dir, const std::string& field);

}  // namespace icl::numerics
