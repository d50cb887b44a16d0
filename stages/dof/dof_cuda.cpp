#include <mutex>

#include "stages/dof/dof.hpp"
#include "stages/dof/separable.hpp"

#if POLARPIPE_HAS_CUDA
#include "cuda/dof_gather.cuh"
#endif

namespace pp::dof {

#if POLARPIPE_HAS_CUDA

void renderCuda(const Settings& s, const Image& image, const Image& plane, bool disparity, float baselineFocal,
                Image& out, StreamHandle stream) {
  checkSettings(s);
  static std::once_flag uploaded;
  std::call_once(uploaded, [] {  // the taps of every radius, as the CPU reference makes them
    std::vector<float> table((kMaxGatherRadius + 1) * (kMaxGatherRadius + 1), 0.f);
    for (int r = 0; r <= kMaxGatherRadius; ++r) {
      std::vector<float> taps = r == 0 ? std::vector<float>{1.f} : filter::gaussianTaps(2 * r + 1, 0.5 * r);
      std::copy(taps.begin(), taps.end(), table.begin() + r * r);
    }
    uploadRadiusTaps(table.data(), static_cast<int>(table.size()));
  });
  if (s.focusPixels.size() > static_cast<size_t>(kMaxFocusPixels))
    throw std::invalid_argument("dof: at most 16 focus pixels (faces) a frame");
  GatherSettings g{};
  g.focusDepth = s.focusDepth;
  g.k = s.k;
  g.rMax = s.rMax;
  g.focusCount = static_cast<int>(s.focusPixels.size());
  for (size_t i = 0; i < s.focusPixels.size(); ++i)
    g.focusX[i] = s.focusPixels[i][0], g.focusY[i] = s.focusPixels[i][1];
  auto [scale, larger] = mapPlane(plane.width(), plane.height(), image.width(), image.height());
  g.plane = {scale, larger, plane.format().depth == Depth::u16, disparity, baselineFocal};
  ImageView<const uint8_t> planeBytes{
      static_cast<const uint8_t*>(plane.data()), plane.width(), plane.height(), plane.pitch(), 1, plane.memory()};
  launchDofGather(image.view<uint8_t>(), planeBytes, out.view<uint8_t>(), g, stream);
}

#else

void renderCuda(const Settings&, const Image&, const Image&, bool, float, Image&, StreamHandle) {
  throw std::logic_error("dof: this build has no CUDA");
}

#endif

}  // namespace pp::dof
