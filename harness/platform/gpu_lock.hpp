// A cross-process reader/writer lock that gives exclusive cases the GPU to themselves.
#pragma once

#include <string>

namespace cuparity {

/// The runner sets this variable to a directory shared by all cell processes of a run.
inline constexpr const char *gpu_lock_variable = "CUPARITY_GPU_LOCK";

/// Ordinary cases hold the lock shared, exclusive cases hold it exclusively. Two flock(2) files
/// give writers preference: a writer first takes the "turnstile", which new readers must pass,
/// so a stream of overlapping readers in other processes cannot starve it. Locks held by a
/// process that dies are released by the kernel. Without a directory it does nothing.
class gpu_lock {
public:
  explicit gpu_lock(const std::string &directory);
  ~gpu_lock();
  gpu_lock(const gpu_lock &) = delete;
  gpu_lock &operator=(const gpu_lock &) = delete;

  /// Blocks until the lock is held in the given mode; release() lets it go.
  void acquire(bool exclusive);
  void release() noexcept;

private:
  int m_turnstile = -1;
  int m_data = -1;
};

} // namespace cuparity
