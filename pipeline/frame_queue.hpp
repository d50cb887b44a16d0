// The bounded queue between a source and the scheduler. Live sources push with dropOldest (the
// returned frame goes back to the pool, counted as dropped); file sources block until there is
// room, so nothing is lost.
#pragma once
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>

namespace pp {

template <class T> class FrameQueue {
 public:
  explicit FrameQueue(size_t capacity) : capacity_(capacity) {}

  // Blocks while full; false when the queue was closed meanwhile.
  bool push(T item) {
    std::unique_lock lock(mutex_);
    notFull_.wait(lock, [&] { return items_.size() < capacity_ || closed_; });
    if (closed_) return false;
    items_.push_back(std::move(item));
    notEmpty_.notify_one();
    return true;
  }

  // Never blocks; returns the oldest item when it had to make room.
  std::optional<T> pushDropOldest(T item) {
    std::lock_guard lock(mutex_);
    std::optional<T> dropped;
    if (items_.size() >= capacity_) {
      dropped = std::move(items_.front());
      items_.pop_front();
    }
    items_.push_back(std::move(item));
    notEmpty_.notify_one();
    return dropped;
  }

  // Blocks until an item arrives; nullopt once closed and drained.
  std::optional<T> pop() {
    std::unique_lock lock(mutex_);
    notEmpty_.wait(lock, [&] { return !items_.empty() || closed_; });
    if (items_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    notFull_.notify_one();
    return item;
  }

  void close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    notEmpty_.notify_all();
    notFull_.notify_all();
  }

  size_t size() const {
    std::lock_guard lock(mutex_);
    return items_.size();
  }

 private:
  size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable notEmpty_, notFull_;
  std::deque<T> items_;
  bool closed_ = false;
};

}  // namespace pp
