// Config errors: each names where (file:line:column, or the --set that made the value), the key
// path, and what is allowed. All of a document's errors are collected and reported together.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace pp {

struct Diagnostic {
  std::string location;  // "config/demo.yaml:12:5" or "--set stages.dof.params.k=3"
  std::string keyPath;   // "stages.dof.params.k"
  std::string message;   // "expected a number in [0, 100], got 'abc'"
  std::string text() const;
};

class Diagnostics {
 public:
  explicit Diagnostics(std::string file = "<config>") : file_(std::move(file)) {}

  // A value set with --set is reported at the --set, not at a line of the file.
  void addOverride(std::string keyPath, std::string expression);

  void error(const YAML::Mark& mark, const std::string& keyPath, const std::string& message);
  void error(const YAML::Node& at, const std::string& keyPath, const std::string& message);
  // Where the place is not in the file ("--set stages.x.params.k=3").
  void error(std::string location, std::string keyPath, std::string message) {
    errors_.push_back({std::move(location), std::move(keyPath), std::move(message)});
  }

  // Something the errors kept from being checked, said after them ("not checked: ...").
  void note(std::string text) { notes_.push_back(std::move(text)); }
  const std::vector<std::string>& notes() const { return notes_; }

  bool empty() const { return errors_.empty(); }
  size_t size() const { return errors_.size(); }
  const std::vector<Diagnostic>& errors() const { return errors_; }
  const std::string& file() const { return file_; }
  std::string text() const;  // one error a line

 private:
  std::string file_;
  std::vector<std::pair<std::string, std::string>> overrides_;
  std::vector<Diagnostic> errors_;
  std::vector<std::string> notes_;
};

// Thrown where a caller needs an exception; carries every error.
struct ConfigError : std::runtime_error {
  explicit ConfigError(const Diagnostics& d) : std::runtime_error(d.text()), diagnostics(d) {}
  Diagnostics diagnostics;
};

// "did you mean 'layout'?" for a misspelt key or value, or "" when nothing is close.
std::string suggestion(const std::string& word, const std::vector<std::string>& allowed);
std::string joinList(const std::vector<std::string>& items, const char* separator = ", ");

}  // namespace pp
