#include "pipeline/aravis/software_trigger.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <stdexcept>

namespace pp::aravis {

std::shared_ptr<SoftwareTrigger> SoftwareTrigger::join(const std::string& name, double rateHz) {
  if (name.empty()) return std::make_shared<SoftwareTrigger>(rateHz);
  static std::mutex mutex;
  static std::map<std::string, std::weak_ptr<SoftwareTrigger>> groups;
  std::lock_guard lock(mutex);
  std::shared_ptr<SoftwareTrigger> group = groups[name].lock();
  if (!group) {
    group = std::make_shared<SoftwareTrigger>(rateHz);
    groups[name] = group;
  } else if (group->rateHz() != rateHz) {
    throw std::invalid_argument("trigger_group '" + name + "' already fires at " + std::to_string(group->rateHz()) +
                                " Hz; every camera of a group fires at one rate");
  }
  return group;
}

SoftwareTrigger::~SoftwareTrigger() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void SoftwareTrigger::begin(TriggerTarget* target) {
  std::lock_guard lock(mutex_);
  if (std::find(acquiring_.begin(), acquiring_.end(), target) == acquiring_.end()) acquiring_.push_back(target);
  if (!thread_.joinable()) thread_ = std::thread([this] { tick(); });
  changed_.notify_all();
}

void SoftwareTrigger::end(TriggerTarget* target) {
  std::lock_guard lock(mutex_);  // a tick fires under this lock, so none is firing `target` past here
  acquiring_.erase(std::remove(acquiring_.begin(), acquiring_.end(), target), acquiring_.end());
}

// One tick every 1 / rate s on the steady clock while any camera acquires; the clock starts again
// when the first camera (re)starts, so a rig that waited does not fire a burst of missed ticks.
void SoftwareTrigger::tick() {
  using Clock = std::chrono::steady_clock;
  const auto period = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / rateHz_));
  std::unique_lock lock(mutex_);
  auto next = Clock::now();
  while (!stopping_) {
    if (acquiring_.empty()) {
      changed_.wait(lock, [&] { return stopping_ || !acquiring_.empty(); });
      next = Clock::now();
      continue;
    }
    bool ready = std::all_of(acquiring_.begin(), acquiring_.end(), [](TriggerTarget* t) { return t->bufferFree(); });
    for (TriggerTarget* t : acquiring_) ready ? t->fire() : t->skip();
    next += period;
    changed_.wait_until(lock, next, [&] { return stopping_; });
  }
}

}  // namespace pp::aravis
