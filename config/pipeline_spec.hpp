// A pipeline file: `pipeline`, `metrics`, and the lists `sources`, `stages`, `sinks`. Loading
// checks the document's structure; each node's params and wiring are checked when the graph is
// built (pipeline/graph), into the same Diagnostics.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "config/diagnostics.hpp"
#include "config/params.hpp"

namespace pp {

// What `backend` accepts, in the pipeline, on a node and on the file commands.
const std::vector<std::string>& backendNames();  // auto, cuda, cpu

enum class Role { source, stage, sink };
const char* roleName(Role role);  // "source"
const char* roleList(Role role);  // "sources"

struct PortRef {
  std::string node, port;
  std::string text() const { return node + "." + port; }
};

struct InputSpec {
  std::string port;  // the consumer's input
  PortRef from;      // the producer's output
  YAML::Mark mark;
};

struct NodeSpec {
  Role role = Role::stage;
  std::string name, type;
  std::string backend;  // "" = the pipeline's
  YAML::Node params;    // may be undefined
  std::vector<InputSpec> inputs;
  std::string keyPath;  // "stages.dof"
  YAML::Mark mark, typeMark;
};

struct PipelineSettings {
  int framesInFlight = 3;
  std::string backend = "auto";
  double pairToleranceMs = 0;      // several sources: frames further apart are not paired
  std::string pairBy = "arrival";  // arrival | camera_timestamp
  static const ParamSchema<PipelineSettings>& schema();
};

struct MetricsSettings {
  int port = -1;  // -1: not served; 0: an ephemeral port, logged
  std::string address = "127.0.0.1";
  double intervalS = 1.0;
  static const ParamSchema<MetricsSettings>& schema();
};

struct PipelineSpec {
  std::string file, baseDir;
  PipelineSettings pipeline;
  MetricsSettings metrics;
  std::vector<NodeSpec> nodes;  // sources, then stages, then sinks, each in file order
  const NodeSpec* find(const std::string& name) const;
};

// The largest config file read: configs are a few kilobytes, and refusing a huge file early keeps
// a wrong path (a recording, an image) from costing seconds and gigabytes.
constexpr uintmax_t kMaxConfigBytes = 1u << 20;

// Reads `path`, applies `overrides` ("key.path=value", YAML value), checks the structure.
PipelineSpec loadPipeline(const std::string& path, const std::vector<std::string>& overrides, Diagnostics& diagnostics);
// The same from text (tests); `file` names it in messages and sets the base folder.
PipelineSpec parsePipeline(const std::string& text, const std::string& file, const std::vector<std::string>& overrides,
                           Diagnostics& diagnostics);

}  // namespace pp
