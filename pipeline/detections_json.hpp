// One frame's detections as JSON: what the `detections` sink writes a line of and the `mqtt` sink
// publishes, so that one consumer reads both (the schema is in the README).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipeline/node.hpp"

namespace pp {

// {source, frame, camera_timestamp_ns, received_steady_ns, camera_frame_id, exposure_us, gain,
//  [chunks], <input>: [{x, y, w, h, neighbors, [depth]}] for each of `inputs`}.
nlohmann::json detectionsJson(const SinkFrame& frame, const std::vector<std::string>& inputs);

}  // namespace pp
