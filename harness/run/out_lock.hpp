// Ownership of an output directory: one cuparity process writes into it at a time.
#pragma once

#include <string>

namespace cuparity {

/// An exclusive flock(2) on "<dir>/.cuparity.lock", held for the object's life. The kernel drops
/// it when the process dies, however it dies, so a killed run never leaves a stale lock; the file
/// holds the owner's pid for the message a second writer gets. The descriptor is close-on-exec:
/// cells and helpers do not inherit the lock (an orphan must not keep a folder locked).
class out_lock {
public:
  /// Throws std::runtime_error naming the folder (and the owner's pid when known) when another
  /// process holds it or the lock file cannot be made.
  explicit out_lock(const std::string &dir);
  ~out_lock();
  out_lock(const out_lock &) = delete;
  out_lock &operator=(const out_lock &) = delete;

private:
  int m_fd = -1;
};

} // namespace cuparity
