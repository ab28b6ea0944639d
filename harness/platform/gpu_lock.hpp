// A cross-process reader/writer lock that gives exclusive cases the GPU to themselves.
#pragma once

#include <string>

namespace cuparity {

/// The runner sets this variable to a directory shared by all cell processes of a run.
inline constexpr const char *gpu_lock_variable = "CUPARITY_GPU_LOCK";

/// Ordinary cases, and every process's driver start and teardown, hold the lock shared; exclusive
/// cases hold it exclusively. It prefers writers: a writer waiting holds new readers back (a
/// turnstile file), so an exclusive case waits only for the cases already running. Cells run their
/// exclusive cases last, in one exclusive hold. Locks held by a process that dies are released by
/// the kernel. Without a directory it does nothing.
///
/// Starts and teardowns (acquire_for_start) are held apart from cases, and a writer waits for them
/// first, with a turnstile of their own: while it waits for a start in flight (a primary context,
/// about 0.5 s, serialised in the driver) other cells' cases still run; only then does it hold new
/// case readers back and wait for the cases running. On the H200 the single-stage lock left the
/// GPU idle for 2.3-3.9 s of a 33 s default matrix, in gaps that each ended when a writer got a
/// just-started cell's shared hold.
class gpu_lock {
public:
  explicit gpu_lock(const std::string &directory);
  /// The lock named by gpu_lock_variable in this process's environment (none when unset).
  [[nodiscard]] static std::string directory_from_environment();
  ~gpu_lock();
  gpu_lock(const gpu_lock &) = delete;
  gpu_lock &operator=(const gpu_lock &) = delete;

  /// Blocks until the lock is held in the given mode (a lock held in the other mode is let go
  /// first); release() lets it go.
  void acquire(bool exclusive);
  /// Holds it shared for a process's driver start or teardown (see the class comment).
  void acquire_for_start();
  /// Holds it shared without queueing behind a waiting writer: for a helper server's start, which
  /// its cell may await while it holds the lock shared (queueing would deadlock with the writer).
  void acquire_beside_writers();
  void release() noexcept;

private:
  enum class held { none, shared, exclusive, start };
  int m_start_turnstile = -1; ///< held by a writer from its first step to its release
  int m_start = -1;           ///< starts hold it shared, a writer exclusively
  int m_turnstile = -1;
  int m_fd = -1;
  held m_held = held::none;
};

/// Holds a gpu_lock for a scope.
class gpu_lock_hold {
public:
  gpu_lock_hold(gpu_lock &lock, bool exclusive) : m_lock(lock) { lock.acquire(exclusive); }
  struct for_start_t {};
  gpu_lock_hold(gpu_lock &lock, for_start_t) : m_lock(lock) { lock.acquire_for_start(); }
  ~gpu_lock_hold() { m_lock.release(); }
  gpu_lock_hold(const gpu_lock_hold &) = delete;
  gpu_lock_hold &operator=(const gpu_lock_hold &) = delete;

private:
  gpu_lock &m_lock;
};

} // namespace cuparity
