// Where a sink will write, checked without writing: what `validate` may do.
#pragma once
#include <unistd.h>

#include <filesystem>
#include <string>

namespace pp {

// "" when `path` can be written (its folder exists and is writable, or the nearest folder above it
// that exists is, so that it can be made); else why not, naming the folder.
inline std::string whyNotWritable(const std::string& path, bool isFolder = false) {
  std::filesystem::path at =
      std::filesystem::absolute(isFolder ? std::filesystem::path(path) : std::filesystem::path(path).parent_path());
  std::error_code ec;
  while (!at.empty() && !std::filesystem::exists(at, ec) && at != at.root_path()) at = at.parent_path();
  if (!std::filesystem::is_directory(at, ec)) return at.string() + " is not a folder";
  if (access(at.c_str(), W_OK) != 0) return "folder " + at.string() + " is not writable";
  return "";
}

}  // namespace pp
