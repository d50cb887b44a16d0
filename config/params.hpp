// Typed parameters declared once per node type: key, member, allowed values, default, help.
// The same declaration validates YAML (every error at once, with file:line and key path), prints
// the parameter table in --help, and gives the file commands their options (tools/cli/param_options.hpp).
#pragma once
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "config/diagnostics.hpp"

namespace pp {

struct ParamContext {
  Diagnostics& diagnostics;
  std::string keyPath;                         // "stages.dof.params"
  std::string baseDir;                         // relative paths resolve against the config file's folder
  YAML::Node node;                             // the params map (may be undefined)
  YAML::Mark owner = YAML::Mark::null_mark();  // the node that has these params
  std::string pipeline = {};                   // the pipeline's name: its config file's stem
  // An error about the params as a whole: at the params map, else at the node that owns it.
  void error(const std::string& message) {
    bool located = node.IsDefined() && !node.Mark().is_null();
    diagnostics.error(located ? node.Mark() : owner, keyPath, message);
  }
};

// A file-system path; relative ones are resolved against ParamContext::baseDir.
struct Path {
  std::string value;
  bool empty() const { return value.empty(); }
};

// What values a key accepts, in words ("an integer in [1, 16]") and as a predicate.
template <class T> struct Rule {
  std::string allowed;
  std::function<bool(const T&)> accepts;
  std::function<std::string(const T&)> why = {};  // optional: which part of a refused value is wrong
};

Rule<int> intIn(int lo, int hi);
Rule<double> numberIn(double lo, double hi);
Rule<std::string> oneOf(std::vector<std::string> values);
Rule<std::vector<std::string>> listOf(std::vector<std::string> values);  // each once, from values
Rule<std::vector<int>> intListOf(size_t count, int lo, int hi);          // exactly `count` integers
Rule<std::vector<int>> permutationOf(std::vector<int> values);           // each of `values` once, any order
Rule<std::vector<double>> numberListOf(size_t minCount, size_t maxCount);
Rule<Path> existingFile();
Rule<Path> anyPath();

// Named settings passed through as text (camera features: `{BalanceWhiteAuto: Off, Gamma: 0.8}`).
using TextMap = std::map<std::string, std::string>;

template <class T> Rule<T> anyValue();
template <> Rule<TextMap> anyValue<TextMap>();
template <> Rule<int> anyValue<int>();
template <> Rule<double> anyValue<double>();
template <> Rule<bool> anyValue<bool>();
template <> Rule<std::string> anyValue<std::string>();
template <> Rule<Path> anyValue<Path>();

// Converts a scalar or list; false when the YAML value is not of type T.
bool decode(const YAML::Node& node, int& out);
bool decode(const YAML::Node& node, double& out);
bool decode(const YAML::Node& node, bool& out);
bool decode(const YAML::Node& node, std::string& out);
bool decode(const YAML::Node& node, Path& out);
bool decode(const YAML::Node& node, TextMap& out);  // a map of scalars
template <class T> bool decode(const YAML::Node& node, std::vector<T>& out) {
  if (!node.IsSequence()) return false;
  out.clear();
  for (const auto& item : node) {
    T value{};
    if (!decode(item, value)) return false;
    out.push_back(value);
  }
  return true;
}

std::string describe(const YAML::Node& node);  // the offending value, quoted, for messages
std::string toText(int v);
std::string toText(double v);
std::string toText(bool v);
std::string toText(const std::string& v);
std::string toText(const Path& v);
std::string toText(const TextMap& v);
template <class T> std::string toText(const std::vector<T>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + toText(v[i]);
  return out + "]";
}

std::string resolvePath(const std::string& path, const std::string& baseDir);

template <class T> struct IsList : std::false_type {};
template <class T> struct IsList<std::vector<T>> : std::true_type {};

template <class P> class ParamSchema {
 public:
  template <class T> ParamSchema& add(std::string key, T P::*member, std::string help, Rule<T> rule = anyValue<T>()) {
    Kind kind = std::is_same_v<T, bool> ? Kind::flag : IsList<T>::value ? Kind::list : Kind::value;
    fields_.push_back({key, help, rule.allowed, kind, [member](const P& p) { return toText(p.*member); },
                       [key, member, rule](const YAML::Node& value, P& p, ParamContext& ctx) {
                         std::string path = ctx.keyPath + "." + key;
                         T parsed{};
                         if (!decode(value, parsed)) {
                           ctx.diagnostics.error(value, path, "expected " + rule.allowed + ", got " + describe(value));
                           return;
                         }
                         if constexpr (std::is_same_v<T, Path>) parsed.value = resolvePath(parsed.value, ctx.baseDir);
                         if (!rule.accepts(parsed)) {
                           ctx.diagnostics.error(value, path,
                                                 "expected " + rule.allowed + ", got " + describe(value) +
                                                     (rule.why ? ": " + rule.why(parsed) : ""));
                           return;
                         }
                         p.*member = parsed;
                       }});
    return *this;
  }

  // A key whose values name the members of an enumeration (`sweeps: auto`), `names` in the order
  // the help lists them.
  template <class E> ParamSchema& addChoice(std::string key, E P::*member, std::string help,
                                            std::vector<std::pair<std::string, E>> names) {
    std::vector<std::string> words;
    for (const auto& n : names) words.push_back(n.first);
    const std::string allowed = oneOf(words).allowed;
    fields_.push_back({key, help, allowed, Kind::value,
                       [member, names](const P& p) {
                         for (const auto& [word, value] : names)
                           if (value == p.*member) return word;
                         return std::string();
                       },
                       [key, member, names, allowed](const YAML::Node& value, P& p, ParamContext& ctx) {
                         std::string word;
                         if (decode(value, word))
                           for (const auto& [name, choice] : names)
                             if (name == word) {
                               p.*member = choice;
                               return;
                             }
                         ctx.diagnostics.error(value, ctx.keyPath + "." + key,
                                               "expected " + allowed + ", got " + describe(value));
                       }});
    return *this;
  }

  // Every key of a schema over a base of P (a stage's parameters that extend an algorithm's).
  template <class Base> ParamSchema& include(const ParamSchema<Base>& base) {
    static_assert(std::is_base_of_v<Base, P>);
    for (const auto& f : base.fields_)
      fields_.push_back(
          {f.key, f.help, f.allowed, static_cast<Kind>(f.kind), [show = f.show](const P& p) { return show(p); },
           [parse = f.parse](const YAML::Node& value, P& p, ParamContext& ctx) { parse(value, p, ctx); }});
    return *this;
  }

  // Unknown keys, wrong types and out-of-range values are reported to ctx; the result keeps the
  // default for every key that failed.
  P parse(ParamContext& ctx, P params = {}) const {
    const YAML::Node& node = ctx.node;
    if (!node.IsDefined() || node.IsNull()) return params;
    if (!node.IsMap()) {
      ctx.error("expected a map of parameters (" + joinList(keys()) + "), got " + describe(node));
      return params;
    }
    for (const auto& entry : node) {
      std::string key = entry.first.Scalar();
      const Field* field = find(key);
      if (!field) {
        std::string hint = suggestion(key, keys());
        ctx.diagnostics.error(
            entry.first, ctx.keyPath + "." + key,
            "unknown key" + (hint.empty() ? "" : "; " + hint) + " (allowed: " + joinList(keys()) + ")");
        continue;
      }
      field->parse(entry.second, params, ctx);
    }
    return params;
  }

  std::vector<std::string> keys() const {
    std::vector<std::string> out;
    for (const auto& f : fields_) out.push_back(f.key);
    return out;
  }

  // A key's value given as text, as on a command line ("12", "true", "s0,dolp" for a list): checked
  // by the same rule as in YAML; false, with the reason in `problem`, when it is refused.
  bool setText(const std::string& key, const std::string& text, P& p, std::string& problem) const {
    const Field* field = find(key);
    if (!field) {
      problem = "unknown key '" + key + "'";
      return false;
    }
    YAML::Node value;
    if (field->kind == Kind::list) {
      std::istringstream items(text);
      for (std::string item; std::getline(items, item, ',');) value.push_back(YAML::Node(item));
    } else {
      value = YAML::Node(text);
    }
    Diagnostics diagnostics;
    ParamContext ctx{diagnostics, key, "", {}};
    field->parse(value, p, ctx);
    if (diagnostics.empty()) return true;
    problem = diagnostics.errors().front().message;
    return false;
  }

  // What a command line needs to offer a key as an option.
  struct Option {
    std::string key, help, allowed;
    bool flag;  // a bool: --key / --no-key
    bool list;  // comma-separated values
  };
  std::vector<Option> options() const {
    std::vector<Option> out;
    for (const auto& f : fields_) out.push_back({f.key, f.help, f.allowed, f.kind == Kind::flag, f.kind == Kind::list});
    return out;
  }
  std::string valueText(const std::string& key, const P& p) const { return find(key) ? find(key)->show(p) : ""; }

  // One line a key: name, allowed values, default, help.
  std::string help(const P& defaults = {}) const {
    std::ostringstream out;
    for (const auto& f : fields_)
      out << "    " << f.key << ": " << f.help << "\n        " << f.allowed << "; default " << f.show(defaults) << "\n";
    return out.str();
  }

 private:
  template <class Other> friend class ParamSchema;
  enum class Kind { value, flag, list };
  struct Field {
    std::string key, help, allowed;
    Kind kind;
    std::function<std::string(const P&)> show;
    std::function<void(const YAML::Node&, P&, ParamContext&)> parse;
  };
  const Field* find(const std::string& key) const {
    for (const auto& f : fields_)
      if (f.key == key) return &f;
    return nullptr;
  }
  std::vector<Field> fields_;
};

}  // namespace pp
