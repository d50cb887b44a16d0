// Source `images`: a folder or glob of PNG/JPEG/PGM/PFM files, or a stereo pair of them.
#include <glob.h>

#include <algorithm>
#include <filesystem>
#include <thread>

#include "pipeline/image_io.hpp"
#include "pipeline/registry.hpp"

namespace pp {

namespace {

const std::vector<std::string> kExtensions = {".png", ".jpg", ".jpeg", ".pgm", ".ppm", ".pfm"};

bool isImageFile(const std::filesystem::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return std::find(kExtensions.begin(), kExtensions.end(), ext) != kExtensions.end();
}

// A folder's image files, or the files a glob pattern matches; sorted by name.
std::vector<std::string> listImages(const std::string& pattern) {
  std::vector<std::string> files;
  if (std::filesystem::is_directory(pattern)) {
    for (const auto& entry : std::filesystem::directory_iterator(pattern))
      if (entry.is_regular_file() && isImageFile(entry.path())) files.push_back(entry.path().string());
  } else {
    glob_t matches{};
    if (glob(pattern.c_str(), 0, nullptr, &matches) == 0)
      for (size_t i = 0; i < matches.gl_pathc; ++i)
        if (isImageFile(matches.gl_pathv[i])) files.push_back(matches.gl_pathv[i]);
    globfree(&matches);
  }
  std::sort(files.begin(), files.end());
  return files;
}

struct ImagesParams {
  Path path, left, right;
  double fps = 0;
  bool loop = false;
  bool grey = false;
};

class ImagesSource : public Source {
 public:
  using Params = ImagesParams;
  static const ParamSchema<Params>& schema() {
    static const auto schema =
        ParamSchema<Params>()
            .add("path", &Params::path, "folder or glob of images (output 'image'); relative to the config file")
            .add("left", &Params::left,
                 "folder or glob of left images (outputs 'left' and 'right', paired by file name)")
            .add("right", &Params::right, "folder or glob of right images, same file names as left")
            .add("fps", &Params::fps, "frames per second; 0 reads as fast as the graph takes them", numberIn(0, 10000))
            .add("loop", &Params::loop, "start again after the last file")
            .add("grey", &Params::grey, "8-bit colour files become grey (u8x1) as they are read");
    return schema;
  }

  ImagesSource(const Params& p, ParamContext& ctx) : params_(p) {
    bool stereo = !p.left.empty() || !p.right.empty();
    if (stereo == !p.path.empty()) {
      ctx.error("give either path (one camera) or left and right (a stereo pair)");
      return;
    }
    if (!stereo) {
      files_ = list(p.path.value, ctx.keyPath + ".path", ctx);
      ports_ = {"image"};
      return;
    }
    if (p.left.empty() || p.right.empty()) {
      ctx.error("a stereo pair needs both left and right");
      return;
    }
    auto left = list(p.left.value, ctx.keyPath + ".left", ctx);
    auto right = list(p.right.value, ctx.keyPath + ".right", ctx);
    ports_ = {"left", "right"};
    for (const auto& l : left) {
      auto name = std::filesystem::path(l).filename();
      auto match = std::find_if(right.begin(), right.end(),
                                [&](const std::string& r) { return std::filesystem::path(r).filename() == name; });
      if (match == right.end()) {
        ctx.diagnostics.error(ctx.node["right"], ctx.keyPath + ".right",
                              "no right image named '" + name.string() + "' to pair with " + l);
        return;
      }
      files_.push_back(l);
      files_.push_back(*match);
    }
    if (right.size() != left.size())
      ctx.diagnostics.error(ctx.node["right"], ctx.keyPath + ".right", "has files without a left partner");
  }

  void setup(PortSetup& ports) override {
    try {
      info_ = probeImage(files_.front());
    } catch (const std::exception& e) {
      ports.fail(e.what());
      return;
    }
    if (params_.grey && info_.format.depth != Depth::u8) {
      ports.fail("grey: " + files_.front() + " is " + toString(info_.format) + ", not an 8-bit picture");
      return;
    }
    Format format = params_.grey ? Format{Depth::u8, 1} : info_.format;
    for (const auto& port : ports_) ports.output(port, PortSpec::image(format, info_.width, info_.height));
  }

  bool live() const override { return false; }

  bool read(SourceFrame& frame, const std::function<bool()>& stopping) override {
    size_t perFrame = ports_.size();
    if (next_ + perFrame > files_.size()) {
      if (!params_.loop) return false;
      next_ = 0;
    }
    if (params_.fps > 0) {
      auto period = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / params_.fps));
      if (due_ == Clock::time_point{}) due_ = Clock::now();
      while (Clock::now() < due_ && !stopping())
        std::this_thread::sleep_for(std::min<Clock::duration>(due_ - Clock::now(), std::chrono::milliseconds(20)));
      if (stopping()) return false;
      due_ += period;
    }
    for (size_t i = 0; i < perFrame; ++i) readImageInto(files_[next_ + i], frame.out(ports_[i]));
    next_ += perFrame;
    return true;
  }

 private:
  static std::vector<std::string> list(const std::string& pattern, const std::string& keyPath, ParamContext& ctx) {
    auto files = listImages(pattern);
    if (files.empty())
      ctx.diagnostics.error(ctx.node[keyPath.substr(keyPath.rfind('.') + 1)], keyPath,
                            "no image files (" + joinList(kExtensions) + ") at '" + pattern + "'");
    return files;
  }

  Params params_;
  std::vector<std::string> files_;  // in frame order; stereo: left, right, left, right, ...
  std::vector<std::string> ports_;
  ImageFileInfo info_;
  size_t next_ = 0;
  Clock::time_point due_{};
};

}  // namespace

void registerImagesSource(Registry& registry) {
  registry.add<ImagesSource>(Role::source, "images", "image files from a folder or glob, mono or a stereo pair");
}

}  // namespace pp
