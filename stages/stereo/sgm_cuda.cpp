#include "stages/stereo/sgm.hpp"

#include <utility>

#if POLARPIPE_HAS_CUDA
#include "cuda/device.hpp"
#include "cuda/luma.cuh"
#include "cuda/sgm.cuh"
#include "pipeline/device_buffer.hpp"
#endif

namespace pp::stereo {

#if POLARPIPE_HAS_CUDA

namespace {

// The directions' layout: the sweeps where they have bands; else the walkers, with the rows walked
// before and after them (cuda/sgm_rows.cu) or with them (where leftWalkFirst, after the walk from
// the left).
struct Layout {
  SweepPlan sweeps;  // bands == 0: the directions from above and below by the aggregation's walkers
  bool rowsAround = false;
  bool leftFirst = false;  // the walkers after the walk from the left
};

// The rows are walked around the other directions wherever the sweeps run, and at auto's size without them.
Layout planLayout(const SgmParams& p, int width, int height) {
  SweepPlan sweeps = planSweeps(p, width, height);
  const bool rowsAround = sweeps.bands > 0 || rowsAroundColumns(p, width, height);
  return {std::move(sweeps), rowsAround, !rowsAround && leftWalkFirst(p)};
}

std::string describeLayout(const SgmParams& p, const Layout& layout) {
  const SweepPlan& s = layout.sweeps;
  if (s.bands > 0)
    return "the sweeps: " + std::to_string(s.bands) + " bands of " + std::to_string(s.bandWidth) +
           " columns a sweep, " + (s.sweepsALaunch == 2 ? "both sweeps in one launch" : "one sweep a launch") +
           (s.ring ? ", costs in a ring" : "");
  std::string text = layout.rowsAround  ? "the rows walked around the other walkers"
                     : layout.leftFirst ? "the walk from the left, then the other walkers"
                                        : "the walkers";
  if (p.paths == 8)
    text += "; not the sweeps: " + s.without;
  else if (p.sweeps == Sweeps::off)
    text += "; sweeps: false";
  if (p.sweeps == Sweeps::automatic && rowsAroundByPixels(p))
    text += std::string("; auto: ") + (layout.rowsAround ? "at least " : "fewer than ") +
            std::to_string(rowsAroundPixelsPerSm(p.paths, p.disparities)) + " pixels of the image an SM";
  return text;
}

int volumePassesOf(const SgmParams& p, const Layout& layout) {
  if (layout.sweeps.bands > 0) return 6;
  if (layout.rowsAround) return 2 * p.paths - 2;
  return layout.leftFirst ? 2 * p.paths : 2 * p.paths + 2;
}

}  // namespace

struct SgmCuda::Buffers {
  DeviceBuffer<uint32_t> censusLeft, censusRight;
  DeviceBuffer<uint16_t> volume;
  Layout layout;
  DeviceBuffer<uint8_t> handoff;    // with the sweeps: their bands' edge columns
  DeviceBuffer<unsigned> flags;     // and their handoffs' flags
  DeviceBuffer<uint2> records;      // with the rows around: the rows' winner's, a pixel each
  DeviceBuffer<uint8_t> rightBest;  // and the right image's best d a pixel
  unsigned frames = 0;
  // The winner-takes-all leaves it so where the aggregation adds to zeros; a frame cut short does not.
  bool volumeZero = false;
  Image raw;  // before the median
};

SgmCuda::SgmCuda(const SgmParams& p, int width, int height)
    : p_(p), width_(width), height_(height), buffers_(std::make_unique<Buffers>()) {
  checkParams(p);
  size_t pixels = static_cast<size_t>(width) * height;
  buffers_->censusLeft = DeviceBuffer<uint32_t>(pixels);
  buffers_->censusRight = DeviceBuffer<uint32_t>(pixels);
  buffers_->volume = DeviceBuffer<uint16_t>(pixels * p.disparities);
  if (p.median) buffers_->raw = Image({Depth::u16, 1}, width, height, MemoryKind::device);
  buffers_->layout = planLayout(p, width, height);
  const SweepPlan& sweeps = buffers_->layout.sweeps;
  if (sweeps.bands > 0) {
    buffers_->handoff = DeviceBuffer<uint8_t>(sweeps.handoffBytes);
    buffers_->flags = DeviceBuffer<unsigned>(sweeps.flags);
    PP_CUDA_CHECK(cudaMemset(buffers_->flags.get(), 0, buffers_->flags.bytes()));
    finishSynchronousCopies();
  }
  if (buffers_->layout.rowsAround) {
    buffers_->records = DeviceBuffer<uint2>(pixels);
    buffers_->rightBest = DeviceBuffer<uint8_t>(pixels);
  }
}

SgmCuda::~SgmCuda() = default;

std::string sgmCudaLayout(const SgmParams& p, int width, int height) {
  return describeLayout(p, planLayout(p, width, height));
}

std::string SgmCuda::layout() const { return describeLayout(p_, buffers_->layout); }

int SgmCuda::volumePasses() const { return volumePassesOf(p_, buffers_->layout); }

size_t SgmCuda::deviceBytes() const {
  return buffers_->censusLeft.bytes() + buffers_->censusRight.bytes() + buffers_->volume.bytes() +
         buffers_->handoff.bytes() + buffers_->flags.bytes() + buffers_->records.bytes() + buffers_->rightBest.bytes() +
         (buffers_->raw.empty() ? 0 : buffers_->raw.bytes());
}

void SgmCuda::compute(const Image& left, const Image& right, Image& disparity, Image* confidence, StreamHandle stream) {
  if (left.width() != width_ || left.height() != height_ || right.width() != width_ || right.height() != height_)
    throw std::invalid_argument("stereo_sgm: images must be " + std::to_string(width_) + "x" + std::to_string(height_));
  // The memset before the census, so that the kernels from the census on follow each other
  // directly (see launchCensus). Where the walk from the left goes first it stores the first sums,
  // and at 256 disparities the matching costs' pass stores every word: no zeros.
  const Layout& layout = buffers_->layout;
  const bool addsToZeros = !costsInVolume(p_.disparities) && !layout.rowsAround && !layout.leftFirst;
  if (addsToZeros && !buffers_->volumeZero)
    PP_CUDA_CHECK(cudaMemsetAsync(buffers_->volume.get(), 0, buffers_->volume.bytes(), stream));
  buffers_->volumeZero = false;
  launchCensus(left.view<uint8_t>(), right.view<uint8_t>(), buffers_->censusLeft.get(), buffers_->censusRight.get(),
               stream);
  SgmBuffers b{width_,
               height_,
               buffers_->censusLeft.get(),
               buffers_->censusRight.get(),
               left.view<uint8_t>(),
               buffers_->volume.get()};
  Image& raw = p_.median ? buffers_->raw : disparity;
  ImageView<uint8_t> conf = confidence ? confidence->view<uint8_t>() : ImageView<uint8_t>{};
  if (layout.rowsAround) {
    launchRowsFromLeft(p_, b, stream);
    if (layout.sweeps.bands > 0) {
      const unsigned epoch = 1 + buffers_->frames++ % 65535;
      launchSweeps(p_, b, layout.sweeps, SweepBuffers{buffers_->handoff.get(), buffers_->flags.get(), epoch}, stream);
    } else {
      launchPathAggregation(p_, b, Lines::columns, stream);
    }
    launchRowsFromRight(p_, b, buffers_->records.get(), buffers_->rightBest.get(), raw.view<uint16_t>(), conf, stream);
  } else {
    if (layout.leftFirst)
      launchRowsFromLeft(p_, b, stream);
    else if (costsInVolume(p_.disparities))
      launchMatchingCost(p_, b, stream);
    launchPathAggregation(p_, b, layout.leftFirst ? Lines::allButFromLeft : Lines::all, stream);
    launchWinnerTakesAll(p_, b, raw.view<uint16_t>(), conf, stream, addsToZeros);
    buffers_->volumeZero = addsToZeros;
  }
  if (p_.median) launchDisparityMedian(raw.view<uint16_t>(), disparity.view<uint16_t>(), stream);
}

void lumaCuda(const Image& rgb, Image& grey, StreamHandle stream) {
  launchLuma(rgb.view<uint8_t>(), grey.view<uint8_t>(), stream);
}

void depthCuda(const Image& disparity, const DepthModel& m, Image& depth, StreamHandle stream) {
  launchDisparityToDepth(disparity.view<uint16_t>(), depth.view<float>(), m, stream);
}

#else

struct SgmCuda::Buffers {};
SgmCuda::SgmCuda(const SgmParams&, int, int) { throw std::logic_error("stereo_sgm: this build has no CUDA"); }
SgmCuda::~SgmCuda() = default;
size_t SgmCuda::deviceBytes() const { return 0; }
std::string SgmCuda::layout() const { return {}; }
int SgmCuda::volumePasses() const { return 0; }
std::string sgmCudaLayout(const SgmParams&, int, int) { return {}; }
void SgmCuda::compute(const Image&, const Image&, Image&, Image*, StreamHandle) {}
void depthCuda(const Image&, const DepthModel&, Image&, StreamHandle) {
  throw std::logic_error("stereo_sgm: this build has no CUDA");
}
void lumaCuda(const Image&, Image&, StreamHandle) { throw std::logic_error("stereo_sgm: this build has no CUDA"); }

#endif

}  // namespace pp::stereo
