#include "config/pipeline_spec.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace pp {

namespace {

const std::vector<std::string> kTopKeys = {"pipeline", "metrics", "sources", "stages", "sinks"};
const std::vector<std::string> kNodeKeys = {"name", "type", "params", "inputs", "backend"};
const Role kRoles[] = {Role::source, Role::stage, Role::sink};

bool validName(const std::string& name) {
  static const std::regex pattern("[A-Za-z_][A-Za-z0-9_-]*");
  return std::regex_match(name, pattern);
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, separator)) parts.push_back(part);
  return parts;
}

// "stages.dof.params.k=3": stages, sources and sinks are addressed by node name (or index).
void applyOverride(YAML::Node root, const std::string& expression, Diagnostics& d) {
  auto eq = expression.find('=');
  std::string where = "--set " + expression;
  if (eq == std::string::npos || eq == 0) {
    d.error(where, "", "expected key.path=value");
    return;
  }
  std::string keyPath = expression.substr(0, eq);
  std::vector<std::string> keys = split(keyPath, '.');
  YAML::Node value;
  try {
    value = YAML::Load(expression.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    d.error(where, keyPath, std::string("the value is not valid YAML: ") + e.msg);
    return;
  }
  std::string canonical;
  YAML::Node node = root;
  for (size_t i = 0; i < keys.size(); ++i) {
    const std::string& key = keys[i];
    canonical += (i ? "." : "") + key;
    if (i + 1 == keys.size()) {
      if (!node.IsMap() && !node.IsNull()) {
        d.error(where, canonical, "'" + canonical.substr(0, canonical.rfind('.')) + "' is not a map");
        return;
      }
      d.addOverride(canonical, expression);
      node[key] = value;
      return;
    }
    if (node.IsSequence()) {  // a node list: find the item by name or index
      size_t found = node.size();
      for (size_t n = 0; n < node.size(); ++n)
        if ((node[n]["name"].IsScalar() && node[n]["name"].Scalar() == key) || std::to_string(n) == key) found = n;
      if (found == node.size()) {
        d.error(where, canonical, "no node named '" + key + "' under '" + keys[i - 1] + "'");
        return;
      }
      YAML::Node item = node[found];
      node.reset(item);
    } else {
      if (!node.IsMap() && !node.IsNull()) {
        d.error(where, canonical, "'" + canonical.substr(0, canonical.rfind('.')) + "' is not a map");
        return;
      }
      if (!node[key].IsDefined() || node[key].IsNull()) node[key] = YAML::Node(YAML::NodeType::Map);
      YAML::Node child = node[key];
      node.reset(child);
    }
  }
}

void parseInputs(const YAML::Node& inputs, NodeSpec& spec, Diagnostics& d) {
  if (!inputs.IsDefined() || inputs.IsNull()) return;
  std::string path = spec.keyPath + ".inputs";
  if (!inputs.IsMap()) {
    d.error(inputs, path, "expected a map of input port to 'node.port', got " + describe(inputs));
    return;
  }
  for (const auto& entry : inputs) {
    std::string port = entry.first.Scalar();
    const YAML::Node& from = entry.second;
    std::vector<std::string> parts = from.IsScalar() ? split(from.Scalar(), '.') : std::vector<std::string>{};
    if (parts.size() != 2 || !validName(parts[0]) || parts[1].empty()) {
      d.error(from, path + "." + port, "expected 'node.port' (for example cam.image), got " + describe(from));
      continue;
    }
    spec.inputs.push_back({port, {parts[0], parts[1]}, from.Mark()});
  }
}

void parseNodeList(const YAML::Node& list, Role role, PipelineSpec& spec, Diagnostics& d) {
  std::string listKey = roleList(role);
  if (!list.IsDefined() || list.IsNull()) return;
  if (!list.IsSequence()) {
    d.error(list, listKey, std::string("expected a list of ") + listKey + ", each a map with name and type");
    return;
  }
  for (size_t i = 0; i < list.size(); ++i) {
    const YAML::Node item = list[i];
    std::string fallbackPath = listKey + "[" + std::to_string(i) + "]";
    if (!item.IsMap()) {
      d.error(item, fallbackPath, "expected a map with name and type, got " + describe(item));
      continue;
    }
    NodeSpec node;
    node.role = role;
    node.mark = item.Mark();
    const YAML::Node name = item["name"];
    if (!name.IsDefined() || !name.IsScalar()) {
      d.error(item, fallbackPath + ".name", "missing: every " + std::string(roleName(role)) + " needs a name");
    } else if (!validName(name.Scalar())) {
      d.error(name, fallbackPath + ".name",
              "'" + name.Scalar() + "' is not a valid name (letters, digits, _ and -, not starting with a digit)");
    } else {
      node.name = name.Scalar();
    }
    node.keyPath = node.name.empty() ? fallbackPath : listKey + "." + node.name;
    for (const auto& entry : item) {
      std::string key = entry.first.Scalar();
      if (std::find(kNodeKeys.begin(), kNodeKeys.end(), key) == kNodeKeys.end()) {
        std::string hint = suggestion(key, kNodeKeys);
        d.error(entry.first, node.keyPath + "." + key,
                "unknown key" + (hint.empty() ? "" : "; " + hint) + " (allowed: " + joinList(kNodeKeys) + ")");
      }
    }
    const YAML::Node type = item["type"];
    if (!type.IsDefined() || !type.IsScalar() || type.Scalar().empty()) {
      d.error(item, node.keyPath + ".type", std::string("missing: every ") + roleName(role) + " needs a type");
    } else {
      node.type = type.Scalar();
      node.typeMark = type.Mark();
    }
    if (const YAML::Node backend = item["backend"]) {
      if (role != Role::stage) {
        d.error(backend, node.keyPath + ".backend", std::string("only stages have a backend, not ") + listKey);
      } else if (!backend.IsScalar() || !oneOf(backendNames()).accepts(backend.Scalar())) {
        d.error(backend, node.keyPath + ".backend",
                "expected " + oneOf(backendNames()).allowed + ", got " + describe(backend));
      } else {
        node.backend = backend.Scalar();
      }
    }
    if (item["params"]) node.params = item["params"];
    if (role == Role::source && item["inputs"]) {
      d.error(item["inputs"], node.keyPath + ".inputs", "sources have no inputs");
    } else {
      parseInputs(item["inputs"], node, d);
    }
    if (!node.name.empty() && spec.find(node.name)) {
      d.error(name, node.keyPath + ".name",
              "the name '" + node.name + "' is used twice; names must be unique across sources, stages and sinks");
      continue;
    }
    spec.nodes.push_back(std::move(node));
  }
}

PipelineSpec parseRoot(YAML::Node root, const std::string& file, const std::vector<std::string>& overrides,
                       Diagnostics& d) {
  PipelineSpec spec;
  spec.file = file;
  spec.baseDir = std::filesystem::path(file).parent_path().string();
  if (root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  if (!root.IsMap()) {
    d.error(root, "", "expected a map with the keys " + joinList(kTopKeys) + ", got " + describe(root));
    return spec;
  }
  for (const auto& expression : overrides) applyOverride(root, expression, d);
  for (const auto& entry : root) {
    std::string key = entry.first.Scalar();
    if (std::find(kTopKeys.begin(), kTopKeys.end(), key) == kTopKeys.end()) {
      std::string hint = suggestion(key, kTopKeys);
      d.error(entry.first, key,
              "unknown key" + (hint.empty() ? "" : "; " + hint) + " (allowed: " + joinList(kTopKeys) + ")");
    }
  }
  ParamContext pipelineCtx{d, "pipeline", spec.baseDir, root["pipeline"]};
  spec.pipeline = PipelineSettings::schema().parse(pipelineCtx);
  ParamContext metricsCtx{d, "metrics", spec.baseDir, root["metrics"]};
  spec.metrics = MetricsSettings::schema().parse(metricsCtx);
  for (Role role : kRoles) parseNodeList(root[roleList(role)], role, spec, d);
  if (!std::any_of(spec.nodes.begin(), spec.nodes.end(), [](const NodeSpec& n) { return n.role == Role::source; }))
    d.error(root, "sources", "a pipeline needs at least one source");
  return spec;
}

}  // namespace

const char* roleName(Role role) { return role == Role::source ? "source" : role == Role::stage ? "stage" : "sink"; }
const char* roleList(Role role) { return role == Role::source ? "sources" : role == Role::stage ? "stages" : "sinks"; }

const NodeSpec* PipelineSpec::find(const std::string& name) const {
  for (const auto& n : nodes)
    if (n.name == name) return &n;
  return nullptr;
}

const std::vector<std::string>& backendNames() {
  static const std::vector<std::string> names = {"auto", "cuda", "cpu"};
  return names;
}

const ParamSchema<PipelineSettings>& PipelineSettings::schema() {
  static const auto schema =
      ParamSchema<PipelineSettings>()
          .add("frames_in_flight", &PipelineSettings::framesInFlight,
               "frames processed concurrently (each holds its own buffers)", intIn(1, 16))
          .add("backend", &PipelineSettings::backend,
               "default backend of every stage: auto takes CUDA when a device is present", oneOf(backendNames()))
          .add("pair_tolerance_ms", &PipelineSettings::pairToleranceMs,
               "several sources (a stereo pair of cameras): frames more than this apart are not "
               "paired; the older is dropped and counted. 0: one frame from each in turn",
               numberIn(0, 1e6))
          .add("pair_by", &PipelineSettings::pairBy,
               "time the pairing compares: arrival on the host (right for cameras fired by one "
               "trigger), or camera_timestamp (PTP-synchronised cameras)",
               oneOf({"arrival", "camera_timestamp"}));
  return schema;
}

const ParamSchema<MetricsSettings>& MetricsSettings::schema() {
  static const auto schema =
      ParamSchema<MetricsSettings>()
          .add("port", &MetricsSettings::port,
               "serve Prometheus text at http://ADDRESS:PORT/metrics (0: any free port)", intIn(0, 65535))
          .add("address", &MetricsSettings::address, "address the metrics server listens on")
          .add("interval_s", &MetricsSettings::intervalS, "seconds between summary lines on stderr",
               numberIn(0.1, 3600));
  return schema;
}

PipelineSpec parsePipeline(const std::string& text, const std::string& file, const std::vector<std::string>& overrides,
                           Diagnostics& d) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    d.error(e.mark, "", "YAML syntax error: " + e.msg);
    return {};
  }
  return parseRoot(root, file, overrides, d);
}

PipelineSpec loadPipeline(const std::string& path, const std::vector<std::string>& overrides, Diagnostics& d) {
  std::ifstream in(path);
  if (!in) {
    d.error(YAML::Mark::null_mark(), "", std::string("cannot open the config file: ") + std::strerror(errno));
    return {};
  }
  // Refused before parsing: yaml-cpp takes seconds and gigabytes over a file of tens of megabytes.
  std::error_code ec;
  if (uintmax_t size = std::filesystem::file_size(path, ec); !ec && size > kMaxConfigBytes) {
    d.error(YAML::Mark::null_mark(), "",
            "the config file is " + std::to_string(size) + " bytes; a pipeline config is at most " +
                std::to_string(kMaxConfigBytes) + " (is this the right file?)");
    return {};
  }
  std::stringstream text;
  text << in.rdbuf();
  return parsePipeline(text.str(), path, overrides, d);
}

}  // namespace pp
