#include "stages/demosaic/demosaic.hpp"

#if POLARPIPE_HAS_CUDA
#include "cuda/demosaic_polar.cuh"
#endif

namespace pp::demosaic {

std::vector<PlaneSpec> planesFor(const Settings& s, const std::vector<std::string>& outputs) {
  bool wide = polar::wideSamples(s);
  int channels = s.mosaic == Mosaic::rggb ? 3 : 1;
  Format sample{wide ? Depth::u16 : Depth::u8, channels};
  std::vector<PlaneSpec> planes;
  for (const auto& name : outputs) {
    if (name == "angles")
      for (int k = 0; k < 4; ++k) planes.push_back({angleName(k), sample});
    else if (name == "s0" || name == "min" || name == "max" || name == "polarizer")
      planes.push_back({name, sample});
    else if (name == "s1" || name == "s2")
      planes.push_back({name, {Depth::f32, channels}});
    else if (name == "dolp" || name == "aolp")
      planes.push_back({name, {Depth::f32, 1}});
    else if (name == "aolp_visual" || name == "normals_visual")
      planes.push_back({name, {Depth::u8, 3}});
    else if (name == "normals")
      planes.push_back({name, {Depth::f32, 3}});
    else
      throw std::invalid_argument("unknown demosaic output '" + name + "' (outputs: " + joinList(outputNames()) + ")");
  }
  return planes;
}

namespace {
template <class T> ImageView<T> viewOf(const std::map<std::string, Image*>& outputs, const std::string& name) {
  auto it = outputs.find(name);
  return it == outputs.end() ? ImageView<T>{} : it->second->view<T>();
}

template <class T> void runTyped(const Settings& s, const Image& raw, const std::map<std::string, Image*>& outputs,
                                 bool cuda, StreamHandle stream) {
  Planes<T> planes;
  for (int k = 0; k < 4; ++k) planes.angle[k] = viewOf<T>(outputs, angleName(k));
  planes.s0 = viewOf<T>(outputs, "s0");
  planes.s1 = viewOf<float>(outputs, "s1");
  planes.s2 = viewOf<float>(outputs, "s2");
  planes.dolp = viewOf<float>(outputs, "dolp");
  planes.aolp = viewOf<float>(outputs, "aolp");
  planes.aolpVisual = viewOf<uint8_t>(outputs, "aolp_visual");
  planes.minimum = viewOf<T>(outputs, "min");
  planes.maximum = viewOf<T>(outputs, "max");
  planes.polarizer = viewOf<T>(outputs, "polarizer");
  planes.normals = viewOf<float>(outputs, "normals");
  planes.normalsVisual = viewOf<uint8_t>(outputs, "normals_visual");
  ImageView<const uint8_t> bytes = rawBytes(raw, s.format);
  int rawWidth = rawPixelWidth(s.format, raw.width());
  if (!cuda) return demosaicCpu<T>(s, bytes, rawWidth, planes);
#if POLARPIPE_HAS_CUDA
  polar::launchDemosaic<T>(s, bytes, rawWidth, planes, stream);
#else
  throw std::logic_error("demosaic: this build has no CUDA");
#endif
}
}  // namespace

void run(const Settings& s, const Image& raw, const std::map<std::string, Image*>& outputs, bool cuda,
         StreamHandle stream) {
  if (!polar::wideSamples(s))
    runTyped<uint8_t>(s, raw, outputs, cuda, stream);
  else
    runTyped<uint16_t>(s, raw, outputs, cuda, stream);
}

std::map<std::string, Image> runToHost(const Settings& s, const Image& raw, const std::vector<std::string>& outputs,
                                       bool cuda, int poison, size_t rowPadding) {
  int width = 0, height = 0;
  std::string problem = checkRawSize(s, raw.width(), raw.height(), width, height);
  if (!problem.empty()) throw std::invalid_argument(problem);
  MemoryKind memory = cuda ? MemoryKind::device : MemoryKind::host;
  std::map<std::string, Image> planes, host;
  std::map<std::string, Image*> views;
  for (const auto& p : planesFor(s, outputs)) {
    Image& img = planes.emplace(p.name, Image(p.format, width, height, memory, pitchFor(p.format, width) + rowPadding))
                     .first->second;
    if (poison >= 0) fillBytes(img, static_cast<uint8_t>(poison));
    views[p.name] = &img;
  }
  if (!cuda) {
    run(s, raw, views, false, nullptr);
    return planes;
  }
  Stream stream;
  Image deviceRaw(raw.format(), raw.width(), raw.height(), MemoryKind::device,
                  raw.pitch());  // the frame's own row layout
  copyImage(raw, deviceRaw, stream.handle());
  run(s, deviceRaw, views, true, stream.handle());
  for (auto& [name, img] : planes)
    copyImage(img, host.emplace(name, Image(img.format(), width, height, MemoryKind::host)).first->second,
              stream.handle());
  stream.synchronize();
  return host;
}

}  // namespace pp::demosaic
