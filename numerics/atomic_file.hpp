// Writing a file atomically: the content goes to a temporary file in the same folder, which is
// then renamed over the target, so a reader never sees a half-written file.
#pragma once
#include <string>

namespace icl::numerics {

// Throws std::runtime_error with a clear message when the folder does not exist or the write or
// rename fails (the temporary file is removed then).
void write_file_atomically(const std::string& path, const std::string& content);

}  // namespace icl::numerics
