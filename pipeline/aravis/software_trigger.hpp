// Software triggers fired from one steady clock for the cameras of a rig (`trigger: software` with
// the same `trigger_group`), so that each tick gives one frame from every camera; a camera alone is a
// group of one. A tick on which any acquiring camera has no free buffer is skipped for all of them
// (counted by each), so the rig's frames stay in step: paced by rate, never by free slots.
#pragma once
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace pp::aravis {

// What the trigger clock asks of a camera. Called with the group's lock held: quick, no waiting.
class TriggerTarget {
 public:
  virtual ~TriggerTarget() = default;
  virtual bool bufferFree() = 0;  // a frame triggered now would have somewhere to land
  virtual void fire() = 0;        // send the trigger (and count it)
  virtual void skip() = 0;        // count a tick not fired
};

class SoftwareTrigger {
 public:
  // The group `name` (a new one when no camera has joined it yet, or when `name` is empty: a group of
  // one) firing `rateHz` a second. Throws std::invalid_argument when the group already fires at
  // another rate.
  static std::shared_ptr<SoftwareTrigger> join(const std::string& name, double rateHz);
  ~SoftwareTrigger();

  // A camera of the group begins or ends acquiring: ticks fire it from the next one on. end()
  // returns once no tick is firing the camera.
  void begin(TriggerTarget* target);
  void end(TriggerTarget* target);

  explicit SoftwareTrigger(double rateHz) : rateHz_(rateHz) {}
  double rateHz() const { return rateHz_; }

 private:
  void tick();

  const double rateHz_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<TriggerTarget*> acquiring_;
  bool stopping_ = false;
  std::thread thread_;  // runs from the first begin() to the destructor
};

}  // namespace pp::aravis
