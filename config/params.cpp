#include "config/params.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace pp {

namespace {
std::string quoted(const std::vector<std::string>& values) {
  std::vector<std::string> q;
  for (const auto& v : values) q.push_back(v);
  return joinList(q);
}
}  // namespace

Rule<int> intIn(int lo, int hi) {
  return {"an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]",
          [lo, hi](const int& v) { return v >= lo && v <= hi; }};
}

Rule<double> numberIn(double lo, double hi) {
  return {"a number in [" + toText(lo) + ", " + toText(hi) + "]",
          [lo, hi](const double& v) { return std::isfinite(v) && v >= lo && v <= hi; }};
}

Rule<std::string> oneOf(std::vector<std::string> values) {
  return {"one of: " + quoted(values),
          [values](const std::string& v) { return std::find(values.begin(), values.end(), v) != values.end(); }};
}

Rule<std::vector<int>> permutationOf(std::vector<int> values) {
  std::sort(values.begin(), values.end());
  std::string text;
  for (int v : values) text += (text.empty() ? "" : ", ") + std::to_string(v);
  return {"each of " + text + " once, in any order", [values](const std::vector<int>& v) {
            std::vector<int> sorted = v;
            std::sort(sorted.begin(), sorted.end());
            return sorted == values;
          }};
}

Rule<std::vector<std::string>> listOf(std::vector<std::string> values) {
  // The first value that is not allowed or comes twice, else "".
  auto problem = [values](const std::vector<std::string>& list) -> std::string {
    for (size_t i = 0; i < list.size(); ++i) {
      if (std::find(values.begin(), values.end(), list[i]) == values.end()) {
        std::string hint = suggestion(list[i], values);
        return "'" + list[i] + "' is not one of them" + (hint.empty() ? "" : "; " + hint);
      }
      if (std::find(list.begin(), list.begin() + static_cast<std::ptrdiff_t>(i), list[i]) !=
          list.begin() + static_cast<std::ptrdiff_t>(i))
        return "'" + list[i] + "' comes twice";
    }
    return "";
  };
  return {"a list of distinct values from: " + quoted(values),
          [problem](const std::vector<std::string>& list) { return problem(list).empty(); }, problem};
}

Rule<std::vector<int>> intListOf(size_t count, int lo, int hi) {
  return {
      "a list of " + std::to_string(count) + " integers in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]",
      [=](const std::vector<int>& list) {
        return list.size() == count && std::all_of(list.begin(), list.end(), [=](int v) { return v >= lo && v <= hi; });
      }};
}

Rule<std::vector<double>> numberListOf(size_t minCount, size_t maxCount) {
  return {"a list of " + std::to_string(minCount) + " to " + std::to_string(maxCount) + " numbers",
          [=](const std::vector<double>& list) {
            return list.size() >= minCount && list.size() <= maxCount &&
                   std::all_of(list.begin(), list.end(), [](double v) { return std::isfinite(v); });
          }};
}

Rule<Path> existingFile() {
  return {"the path of an existing file", [](const Path& p) { return std::filesystem::is_regular_file(p.value); }};
}
Rule<Path> anyPath() {
  return {"a path", [](const Path&) { return true; }};
}

template <> Rule<int> anyValue<int>() {
  return {"an integer", [](const int&) { return true; }};
}
template <> Rule<double> anyValue<double>() {
  return {"a number", [](const double& v) { return std::isfinite(v); }};
}
template <> Rule<bool> anyValue<bool>() {
  return {"true or false", [](const bool&) { return true; }};
}
template <> Rule<std::string> anyValue<std::string>() {
  return {"a string", [](const std::string&) { return true; }};
}
template <> Rule<Path> anyValue<Path>() { return anyPath(); }
template <> Rule<TextMap> anyValue<TextMap>() {
  return {"a map of names to values", [](const TextMap&) { return true; }};
}

bool decode(const YAML::Node& node, TextMap& out) {
  if (!node.IsMap()) return false;
  out.clear();
  for (const auto& entry : node) {
    if (!entry.second.IsScalar()) return false;
    out[entry.first.Scalar()] = entry.second.Scalar();
  }
  return true;
}

std::string toText(const TextMap& v) {
  std::string out = "{";
  for (const auto& [key, value] : v) out += (out.size() > 1 ? ", " : "") + key + ": " + value;
  return out + "}";
}

namespace {
template <class T> bool decodeScalar(const YAML::Node& node, T& out) {
  if (!node.IsScalar()) return false;
  try {
    out = node.as<T>();
    return true;
  } catch (const YAML::Exception&) {
    return false;
  }
}
}  // namespace

bool decode(const YAML::Node& node, int& out) { return decodeScalar(node, out); }
bool decode(const YAML::Node& node, double& out) { return decodeScalar(node, out); }
bool decode(const YAML::Node& node, bool& out) { return decodeScalar(node, out); }

bool decode(const YAML::Node& node, std::string& out) {
  if (!node.IsScalar()) return false;
  out = node.Scalar();
  return true;
}

bool decode(const YAML::Node& node, Path& out) {
  if (!node.IsScalar() || node.Scalar().empty()) return false;
  out.value = node.Scalar();
  return true;
}

std::string describe(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "nothing";
  if (node.IsScalar()) return "'" + node.Scalar() + "'";
  if (node.IsSequence()) {
    std::string items;
    for (const auto& item : node) {
      if (!item.IsScalar() || items.size() > 80) return "a list of " + std::to_string(node.size()) + " items";
      items += (items.empty() ? "" : ", ") + item.Scalar();
    }
    return "[" + items + "]";
  }
  return "a map";
}

std::string toText(int v) { return std::to_string(v); }
std::string toText(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}
std::string toText(bool v) { return v ? "true" : "false"; }
std::string toText(const std::string& v) { return v.empty() ? "''" : v; }
std::string toText(const Path& v) { return v.value.empty() ? "none" : v.value; }

std::string resolvePath(const std::string& path, const std::string& baseDir) {
  std::filesystem::path p(path);
  if (p.is_absolute() || baseDir.empty()) return p.lexically_normal().string();
  return (std::filesystem::path(baseDir) / p).lexically_normal().string();
}

}  // namespace pp
