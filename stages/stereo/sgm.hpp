// Semi-global matching on a rectified pair: CPU reference and CUDA backend, the same integer
// pipeline (rules in cuda/sgm_types.hpp), bit for bit. Disparity comes out as u16 x 16
// (kInvalidDisparity where there is none); confidence as u8.
#pragma once
#include <memory>
#include <string>

#include "config/params.hpp"
#include "cuda/sgm_types.hpp"
#include "pipeline/gpu.hpp"
#include "pipeline/image.hpp"

namespace pp::stereo {

// The parameters as YAML keys and command-line options: their names, help and ranges.
const ParamSchema<SgmParams>& sgmParamSchema();
// Throws std::invalid_argument naming the parameter that is out of range, or the pair that
// disagree (p2 below p1, min_disparity + disparities at kDisparityLimit).
void checkParams(const SgmParams& p);

// left, right: u8x1 host images of one size; disparity u16x1 and (when given) confidence u8x1 of
// that size.
void sgmCpu(const SgmParams& p, const Image& left, const Image& right, Image& disparity, Image* confidence = nullptr);

// Depth from disparity (depthOf in cuda/sgm_types.hpp): +inf where the disparity is invalid or the
// point is not in front.
void depthCpu(const Image& disparity, const DepthModel& m, Image& depth);
void depthCuda(const Image& disparity, const DepthModel& m, Image& depth, StreamHandle stream);

// A colour S0's luma on the device (rgbToGrey's weights), for matching.
void lumaCuda(const Image& rgb, Image& grey, StreamHandle stream);

// What SgmCuda(p, width, height).layout() would say, from the plan alone: nothing allocated (a graph
// built to validate names the layout).
std::string sgmCudaLayout(const SgmParams& p, int width, int height);

// CUDA: holds the census codes, the one 16-bit volume (width x height x disparities; zero between
// frames, left so by each frame's winner-takes-all, or at 256 disparities rewritten with the
// matching costs at the start of each frame) and the raw disparity for a frame size;
// compute() enqueues the whole pipeline on `stream`. One stream at a time: frames share the volume.
class SgmCuda {
 public:
  SgmCuda(const SgmParams& p, int width, int height);
  ~SgmCuda();
  // Device images; confidence may be null.
  void compute(const Image& left, const Image& right, Image& disparity, Image* confidence, StreamHandle stream);
  size_t deviceBytes() const;  // scratch this object holds
  // The layout compute() runs for the planned device (stages/stereo/PERFORMANCE.md, "The matcher
  // today"), and why not the sweeps or the rows around where `sweeps` left the choice open or asked
  // for what does not apply.
  std::string layout() const;
  // Passes over the volume a frame by that layout, a reduction counted as two (a read and a write,
  // on a device whose L2 holds none of the volume, as a Jetson's): the walkers 2 a path and 2 (the
  // winner-takes-all reads it and leaves zeros; at 256 disparities the matching costs' pass writes
  // it and the winner-takes-all reads it), or 2 a path where the walk from the left goes first
  // (it stores, the others reduce, the winner-takes-all reads), the rows around 2 a path less 2
  // (stored by the walk from the left, read by the walk from the right), the sweeps 6 (stored,
  // reduced twice, read).
  int volumePasses() const;

 private:
  struct Buffers;
  SgmParams p_;
  int width_, height_;
  std::unique_ptr<Buffers> buffers_;
};

}  // namespace pp::stereo
