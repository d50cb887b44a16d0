#include "config/diagnostics.hpp"

#include <algorithm>

namespace pp {

std::string Diagnostic::text() const { return location + ": " + (keyPath.empty() ? "" : keyPath + ": ") + message; }

void Diagnostics::addOverride(std::string keyPath, std::string expression) {
  overrides_.emplace_back(std::move(keyPath), std::move(expression));
}

void Diagnostics::error(const YAML::Mark& mark, const std::string& keyPath, const std::string& message) {
  for (const auto& [path, expression] : overrides_) {
    bool within = keyPath == path || (keyPath.size() > path.size() && keyPath.compare(0, path.size(), path) == 0 &&
                                      (keyPath[path.size()] == '.' || keyPath[path.size()] == '['));
    if (within) {
      errors_.push_back({"--set " + expression, keyPath, message});
      return;
    }
  }
  std::string location = file_;
  if (!mark.is_null()) location += ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
  errors_.push_back({location, keyPath, message});
}

void Diagnostics::error(const YAML::Node& at, const std::string& keyPath, const std::string& message) {
  error(at.IsDefined() ? at.Mark() : YAML::Mark::null_mark(), keyPath, message);
}

std::string Diagnostics::text() const {
  std::string out;
  for (const auto& e : errors_) out += e.text() + "\n";
  return out;
}

namespace {
size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}
}  // namespace

std::string suggestion(const std::string& word, const std::vector<std::string>& allowed) {
  std::string best;
  size_t bestDistance = 3;  // at most two edits away
  for (const auto& candidate : allowed) {
    size_t d = editDistance(word, candidate);
    if (d < bestDistance) bestDistance = d, best = candidate;
  }
  return best.empty() ? "" : "did you mean '" + best + "'?";
}

std::string joinList(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? separator : "") + items[i];
  return out;
}

}  // namespace pp
