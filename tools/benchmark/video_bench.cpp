// tools/bench cases video/*: the H.264 sink with x264 at half (1224x1024) and full (2448x2048) size.
// latency: one frame in, wait for its encoded access unit (frame-in to encoded-out).
// throughput: 16 frames pushed back to back (waiting only for room in the sink's queue) until all
// are encoded: ms is per 16 frames, Mpix/s the sustained rate.
#include <condition_variable>
#include <mutex>
#include <thread>

#include "pipeline/gst/video_output.hpp"
#include "tools/benchmark/bench.hpp"

namespace pp::gst {
namespace {

class VideoRun : public bench::Run {
 public:
  VideoRun(int width, int height, bool waitForEach)
      : waitForEach_(waitForEach), frame_({Depth::u8, 3}, width, height, MemoryKind::host) {
    auto v = frame_.view<uint8_t>();
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width * 3; ++x) v.row(y)[x] = static_cast<uint8_t>((x * 7 + y * 13) & 0xFF);
    VideoOptions o;
    o.width = width;
    o.height = height;
    o.encoder = "x264";
    o.queueFrames = 4;
    o.onEncoded = [this](uint64_t, size_t) {
      std::lock_guard lock(mutex_);
      ++encoded_;
      changed_.notify_all();
    };
    output_ = std::make_unique<VideoOutput>(o);
  }
  ~VideoRun() override { output_->finish(); }

  void iterate(int, StreamHandle) override {
    for (int i = 0; i < framesPerIteration(); ++i) {
      // Moving content, so the encoder cannot coast on identical frames.
      auto v = frame_.view<uint8_t>();
      for (int y = 0; y < v.height; y += 2) v.row(y)[(pushed_ * 3) % (v.width * 3)] ^= 0xFF;
      while (!output_->push(frame_, pushed_)) std::this_thread::sleep_for(std::chrono::microseconds(200));
      ++pushed_;
    }
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return encoded_ >= pushed_; });
  }
  double bytesMoved() const override {
    return static_cast<double>(frame_.width()) * frame_.height() * 3 * framesPerIteration();
  }
  double pixels() const override {
    return static_cast<double>(frame_.width()) * frame_.height() * framesPerIteration();
  }
  std::string note() const override {
    return waitForEach_ ? "x264 ultrafast zerolatency: frame in to encoded out"
                        : "x264 ultrafast zerolatency: ms per 16 frames pipelined";
  }

 private:
  int framesPerIteration() const { return waitForEach_ ? 1 : 16; }

  bool waitForEach_;
  Image frame_;
  std::unique_ptr<VideoOutput> output_;
  std::mutex mutex_;
  std::condition_variable changed_;
  uint64_t pushed_ = 0, encoded_ = 0;
};

bench::Case videoCase(const std::string& name, int divisor, bool latency) {
  return {name,
          std::string(latency ? "latency" : "throughput") + " of the H.264 sink (x264) on RGB frames at " +
              (divisor == 1 ? "the frame size" : "half the frame size"),
          false, [divisor, latency](bench::Size s, int) {
            return std::make_unique<VideoRun>(s.width / divisor, s.height / divisor, latency);
          }};
}

const bench::Register kCases[] = {
    bench::Register(videoCase("video/x264-half-latency", 2, true)),
    bench::Register(videoCase("video/x264-half-throughput", 2, false)),
    bench::Register(videoCase("video/x264-full-latency", 1, true)),
    bench::Register(videoCase("video/x264-full-throughput", 1, false)),
};

}  // namespace
}  // namespace pp::gst
