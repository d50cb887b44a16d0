// Frames a GigE Vision camera numbered that never arrived, counted from the frame (block) ids of
// the buffers that did. A buffer whose frame lost its leader packet comes back from Aravis 0.8 with
// the id it held before (0 for a new buffer): that id is not its frame's, but the frame did arrive,
// so it takes one place of the next gap instead of opening one. An id that goes back starts the
// count again (a camera restarted); a 16-bit block id that wraps (65535 to 1: 0 is not an id) is
// counted across the wrap.
#pragma once
#include <cstdint>
#include <optional>

namespace pp::aravis {

class FrameGaps {
 public:
  // A buffer arrived with frame id `id`; `known`: whether the id is its own frame's.
  void arrived(uint64_t id, bool known) {
    if (!known || id == 0) {
      ++unnumbered_;
      return;
    }
    if (last_) {
      uint64_t skipped = 0;
      if (id > *last_)
        skipped = id - *last_ - 1;
      else if (*last_ <= kLastBlockId && *last_ > kLastBlockId - kWrapWindow && id <= kWrapWindow)
        skipped = (kLastBlockId - *last_) + (id - 1);
      else
        unnumbered_ = 0;  // went back: counted again from here
      gaps_ += skipped > unnumbered_ ? skipped - unnumbered_ : 0;
    }
    unnumbered_ = 0;
    last_ = id;
  }

  // A new stream (a reconnect): ids before it say nothing about ids after it.
  void restart() {
    last_.reset();
    unnumbered_ = 0;
  }

  uint64_t gaps() const { return gaps_; }

 private:
  static constexpr uint64_t kLastBlockId = 0xFFFF;  // GigE Vision 1.x block ids: 1..65535
  static constexpr uint64_t kWrapWindow = 1024;     // a wrap loses fewer frames than this
  std::optional<uint64_t> last_;
  uint64_t unnumbered_ = 0;  // frames arrived since last_ whose id was not their own
  uint64_t gaps_ = 0;
};

}  // namespace pp::aravis
