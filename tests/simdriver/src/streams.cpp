// Streams: in-order queues run by one worker thread each, with the legacy default stream's
// implicit synchronisation, per-thread default streams, callbacks and host functions.
#include "api.hpp"

namespace cuparity::sim {

namespace {

struct scheduler {
  std::mutex mu;
  std::condition_variable cv;
  // Handle registry of created streams (handles are the stream object's address).
  std::unordered_map<stream *, std::shared_ptr<stream>> live;
  // Every stream that has a worker (created, legacy and per-thread ones), for host_stalled().
  std::vector<std::weak_ptr<stream>> worked;
  int host_waiters = 0; // host threads blocked in a synchronising call
  int running = 0;      // operations a worker is running now
};

thread_local std::int64_t t_reached_ns = -1; // op_reached_ns() of the operation this worker runs

// Immortal: detached workers keep waiting on it while the process exits.
scheduler &sched() {
  static auto *s = new scheduler();
  return *s;
}

// Interprocess events are completed by another process: nothing notifies us, so poll.
constexpr auto external_poll = std::chrono::microseconds(200);

bool deps_ready(const stream_op &op, bool &external) {
  for (const dependency &d : op.deps) {
    if (d.on_stream && d.on_stream->completed < d.seq)
      return false;
    if (d.on_event && d.on_event->completed->load(std::memory_order_acquire) < d.seq) {
      external = external || d.on_event->external;
      return false;
    }
  }
  return true;
}

template <class F> void for_each_blocking(context *c, F &&f) {
  for (const auto &s : c->streams)
    if (s->blocking())
      f(s);
  for (const auto &[tid, s] : c->per_thread)
    f(s);
}

bool has_pending(const stream &s) {
  return s.completed < s.enqueued;
}

// Would a synchronisation of `s` return at once?
bool query_idle_locked(const std::shared_ptr<stream> &s) {
  if (has_pending(*s))
    return false;
  bool idle = true;
  if (s->what == stream::kind::legacy)
    for_each_blocking(s->ctx, [&](const auto &b) { idle = idle && !has_pending(*b); });
  return idle;
}

// Could an operation queued on `s` run right now, with nothing to wait for?
bool inline_ok_locked(const std::shared_ptr<stream> &s) {
  if (!query_idle_locked(s))
    return false;
  if (s->what != stream::kind::legacy && s->blocking() && s->ctx->legacy)
    return !has_pending(*s->ctx->legacy);
  return true;
}

// Counts a host thread as blocked in a synchronising call while it lives (scheduler mutex held).
class host_wait {
public:
  host_wait() { ++sched().host_waiters; }
  ~host_wait() { --sched().host_waiters; }
  host_wait(const host_wait &) = delete;
  host_wait &operator=(const host_wait &) = delete;
};

void remove_from_context(const std::shared_ptr<stream> &s) {
  auto &v = s->ctx->streams;
  std::erase(v, s);
}

void worker_main(std::shared_ptr<stream> s) {
  scheduler &S = sched();
  std::unique_lock lock(S.mu);
  for (;;) {
    for (;;) {
      if (s->queue.empty()) {
        if (s->destroyed) {
          if (s->what == stream::kind::created)
            remove_from_context(s);
          return;
        }
        S.cv.wait(lock);
        continue;
      }
      bool external = false;
      if (deps_ready(s->queue.front(), external))
        break;
      if (external)
        S.cv.wait_for(lock, external_poll);
      else
        S.cv.wait(lock);
    }
    stream_op op = std::move(s->queue.front());
    s->queue.pop_front();
    ++S.running;
    t_reached_ns = op.deps.empty() ? std::max(op.queued_ns, s->last_end_ns) : now_ns();
    lock.unlock();
    const std::int64_t began = now_ns();
    op.run();
    // The stream's clock moves by what the operation itself took, not by how late this worker
    // was scheduled to run it: a descheduled worker put 1.4 ms between two event records queued
    // behind a spin (CI, ctest -j2 on two cores).
    const std::int64_t ended = t_reached_ns + (now_ns() - began);
    t_reached_ns = -1;
    op = stream_op{}; // drop captures (and the references they hold) outside the lock
    lock.lock();
    s->last_end_ns = ended;
    --S.running;
    ++s->completed;
    S.cv.notify_all();
  }
}

std::uint64_t enqueue_locked(const std::shared_ptr<stream> &s, std::function<void()> run,
                             std::vector<dependency> deps) {
  context *c = s->ctx;
  // Legacy default stream semantics: it waits for all earlier work of every blocking stream of
  // its context, and later work on blocking streams waits for it. Non-blocking streams: neither.
  if (s->what == stream::kind::legacy) {
    for_each_blocking(c, [&](const std::shared_ptr<stream> &b) {
      if (has_pending(*b))
        deps.push_back({b, b->enqueued, nullptr});
    });
  } else if (s->blocking() && c->legacy && has_pending(*c->legacy)) {
    deps.push_back({c->legacy, c->legacy->enqueued, nullptr});
  }
  s->queue.push_back(stream_op{std::move(run), std::move(deps), now_ns()});
  ++s->enqueued;
  if (!s->worker_started) {
    s->worker_started = true;
    std::erase_if(sched().worked, [](const std::weak_ptr<stream> &w) { return w.expired(); });
    sched().worked.push_back(s);
    std::thread(worker_main, s).detach();
  }
  sched().cv.notify_all();
  return s->enqueued;
}

std::shared_ptr<stream> make_stream(context *c, stream::kind what, unsigned flags, int priority) {
  auto s = std::make_shared<stream>();
  s->what = what;
  s->ctx = c;
  s->flags = flags;
  s->priority = priority;
  return s;
}

std::shared_ptr<stream> legacy_stream_locked(context *c) {
  if (!c->legacy)
    c->legacy = make_stream(c, stream::kind::legacy, 0, 0);
  return c->legacy;
}

std::shared_ptr<stream> per_thread_stream_locked(context *c) {
  auto &slot = c->per_thread[std::this_thread::get_id()];
  if (!slot)
    slot = make_stream(c, stream::kind::per_thread, 0, 0);
  return slot;
}

CUresult create_stream(CUstream *ph, unsigned flags, int priority) {
  if (CUresult r = check_init())
    return r;
  if (ph == nullptr || (flags & ~static_cast<unsigned>(CU_STREAM_NON_BLOCKING)) != 0)
    return CUDA_ERROR_INVALID_VALUE;
  context *c = nullptr;
  if (CUresult r = current_context(c))
    return r;
  // Out-of-range priorities are clamped to [greatest, least] = [-5, 0], as the driver does.
  priority = std::clamp(priority, -5, 0);
  auto s = make_stream(c, stream::kind::created, flags, priority);
  scheduler &S = sched();
  std::lock_guard lock(S.mu);
  c->streams.push_back(s);
  S.live.emplace(s.get(), s);
  *ph = reinterpret_cast<CUstream>(s.get());
  return CUDA_SUCCESS;
}

CUresult destroy_stream(CUstream h) {
  if (CUresult r = check_init())
    return r;
  scheduler &S = sched();
  std::lock_guard lock(S.mu);
  auto it = S.live.find(reinterpret_cast<stream *>(h));
  if (it == S.live.end())
    return CUDA_ERROR_INVALID_HANDLE;
  // Queued work still completes (as on the device); the worker retires the stream afterwards.
  std::shared_ptr<stream> s = it->second;
  S.live.erase(it);
  s->destroyed = true;
  if (!s->worker_started)
    remove_from_context(s);
  S.cv.notify_all();
  return CUDA_SUCCESS;
}

} // namespace

std::int64_t op_reached_ns() {
  return t_reached_ns >= 0 ? t_reached_ns : now_ns();
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

CUresult resolve_stream(CUstream h, null_stream mode, std::shared_ptr<stream> &out) {
  if (CUresult r = check_init())
    return r;
  scheduler &S = sched();
  if (h == nullptr || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD) {
    context *c = nullptr;
    if (CUresult r = current_context(c))
      return r;
    // A `legacy` fault makes a per-thread symbol's stream 0 the legacy stream (faults.cpp).
    const bool per_thread =
        h == CU_STREAM_PER_THREAD ||
        (h == nullptr && mode == null_stream::per_thread && !legacy_requested());
    std::lock_guard lock(S.mu);
    out = per_thread ? per_thread_stream_locked(c) : legacy_stream_locked(c);
    return CUDA_SUCCESS;
  }
  std::lock_guard lock(S.mu);
  auto it = S.live.find(reinterpret_cast<stream *>(h));
  if (it == S.live.end())
    return CUDA_ERROR_INVALID_HANDLE;
  if (it->second->ctx->state.load() != context::life::alive)
    return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  out = it->second;
  return CUDA_SUCCESS;
}

std::uint64_t enqueue(const std::shared_ptr<stream> &s, std::function<void()> run,
                      std::vector<dependency> extra) {
  std::lock_guard lock(sched().mu);
  return enqueue_locked(s, std::move(run), std::move(extra));
}

void run_synchronously(const std::shared_ptr<stream> &s, const std::function<void()> &run) {
  scheduler &S = sched();
  std::unique_lock lock(S.mu);
  if (inline_ok_locked(s)) {
    // Nothing to wait for: run on the caller, saving two thread hand-offs per synchronous call.
    lock.unlock();
    run();
    return;
  }
  const std::uint64_t seq = enqueue_locked(s, run, {});
  const host_wait waiting;
  S.cv.wait(lock, [&] { return s->completed >= seq; });
}

void wait_stream(const std::shared_ptr<stream> &s) {
  scheduler &S = sched();
  std::unique_lock lock(S.mu);
  if (query_idle_locked(s))
    return;
  // Synchronising the legacy stream waits for the blocking streams too: a marker operation on it
  // carries exactly those dependencies.
  const std::uint64_t target =
      s->what == stream::kind::legacy ? enqueue_locked(s, [] {}, {}) : s->enqueued;
  const host_wait waiting;
  S.cv.wait(lock, [&] { return s->completed >= target; });
}

bool stream_idle(const std::shared_ptr<stream> &s) {
  std::lock_guard lock(sched().mu);
  return query_idle_locked(s);
}

void synchronize_context(context *c) {
  scheduler &S = sched();
  std::unique_lock lock(S.mu);
  std::vector<std::pair<std::shared_ptr<stream>, std::uint64_t>> targets;
  auto add = [&](const std::shared_ptr<stream> &s) {
    if (s && has_pending(*s))
      targets.emplace_back(s, s->enqueued);
  };
  for (const auto &s : c->streams)
    add(s);
  for (const auto &[tid, s] : c->per_thread)
    add(s);
  add(c->legacy);
  const host_wait waiting;
  S.cv.wait(lock, [&] {
    for (const auto &[s, seq] : targets)
      if (s->completed < seq)
        return false;
    return true;
  });
}

void drop_context_streams(context *c) {
  scheduler &S = sched();
  std::lock_guard lock(S.mu);
  auto retire = [&](const std::shared_ptr<stream> &s) {
    if (!s)
      return;
    s->destroyed = true;
    S.live.erase(s.get());
  };
  for (const auto &s : c->streams)
    retire(s);
  for (const auto &[tid, s] : c->per_thread)
    retire(s);
  retire(c->legacy);
  c->streams.clear();
  c->per_thread.clear();
  c->legacy.reset();
  S.cv.notify_all();
}

void wait_event(const std::shared_ptr<event_state> &e, std::uint64_t gen) {
  scheduler &S = sched();
  std::unique_lock lock(S.mu);
  const host_wait waiting;
  while (e->completed->load(std::memory_order_acquire) < gen) {
    if (e->external)
      S.cv.wait_for(lock, external_poll);
    else
      S.cv.wait(lock);
  }
}

bool host_stalled() {
  scheduler &S = sched();
  std::lock_guard lock(S.mu);
  if (S.host_waiters == 0 || S.running > 1)
    return false;
  for (const auto &w : S.worked) {
    const std::shared_ptr<stream> s = w.lock();
    bool external = false;
    // Ready to run: nothing of its own stream in flight (queues are in order) and no dependency
    // left.
    if (s && !s->queue.empty() && s->enqueued - s->completed == s->queue.size() &&
        deps_ready(s->queue.front(), external))
      return false;
  }
  return true;
}

void notify_progress() {
  std::lock_guard lock(sched().mu);
  sched().cv.notify_all();
}

} // namespace cuparity::sim

using namespace cuparity::sim;

namespace {

CUresult synchronize_stream(CUstream h, null_stream mode) {
  std::shared_ptr<stream> s;
  if (CUresult r = resolve_stream(h, mode, s))
    return r;
  wait_stream(s);
  return CUDA_SUCCESS;
}

CUresult query_stream(CUstream h, null_stream mode) {
  std::shared_ptr<stream> s;
  if (CUresult r = resolve_stream(h, mode, s))
    return r;
  return stream_idle(s) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult stream_wait_event(CUstream h, CUevent ev, unsigned flags, null_stream mode) {
  std::shared_ptr<stream> s;
  if (CUresult r = resolve_stream(h, mode, s))
    return r;
  std::shared_ptr<event_state> e = find_event(ev);
  if (!e)
    return CUDA_ERROR_INVALID_HANDLE;
  if ((flags & ~static_cast<unsigned>(CU_EVENT_WAIT_EXTERNAL)) != 0)
    return CUDA_ERROR_INVALID_VALUE;
  // Waits for the event's most recent record at the time of this call; a never-recorded event
  // (generation 0) is complete.
  const std::uint64_t gen = e->recorded->load(std::memory_order_acquire);
  if (gen == 0 || e->completed->load(std::memory_order_acquire) >= gen)
    return CUDA_SUCCESS;
  enqueue(s, [] {}, {dependency{nullptr, gen, e}});
  return CUDA_SUCCESS;
}

CUresult add_callback(CUstream h, CUstreamCallback cb, void *user, unsigned flags,
                      null_stream mode) {
  std::shared_ptr<stream> s;
  if (CUresult r = resolve_stream(h, mode, s))
    return r;
  if (cb == nullptr || flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  enqueue(s, [cb, h, user] { cb(h, CUDA_SUCCESS, user); });
  return CUDA_SUCCESS;
}

CUresult launch_host_func(CUstream h, CUhostFn fn, void *user, null_stream mode) {
  std::shared_ptr<stream> s;
  if (CUresult r = resolve_stream(h, mode, s))
    return r;
  if (fn == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  enqueue(s, [fn, user] { fn(user); });
  return CUDA_SUCCESS;
}

CUresult stream_priority(CUstream h, int *priority, null_stream mode) {
  if (priority == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  std::shared_ptr<stream> s;
  if (CUresult r = resolve_stream(h, mode, s))
    return r;
  *priority = s->priority;
  return CUDA_SUCCESS;
}

CUresult stream_flags(CUstream h, unsigned *flags, null_stream mode) {
  if (flags == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  std::shared_ptr<stream> s;
  if (CUresult r = resolve_stream(h, mode, s))
    return r;
  *flags = s->flags;
  return CUDA_SUCCESS;
}

constexpr null_stream legacy_mode = null_stream::legacy;
constexpr null_stream pt_mode = null_stream::per_thread;

} // namespace

CUPARITY_SIM_API(cuStreamCreate, (CUstream * phStream, unsigned int Flags), (phStream, Flags),
                 (void)0) {
  return create_stream(phStream, Flags, 0);
}
CUPARITY_SIM_API(cuStreamCreateWithPriority,
                 (CUstream * phStream, unsigned int flags, int priority),
                 (phStream, flags, priority), (void)0) {
  return create_stream(phStream, flags, priority);
}
CUPARITY_SIM_API(cuStreamDestroy, (CUstream hStream), (hStream), (void)0) {
  return destroy_stream(hStream);
}
CUPARITY_SIM_API(cuStreamDestroy_v2, (CUstream hStream), (hStream), (void)0) {
  return destroy_stream(hStream);
}

CUPARITY_SIM_API(cuStreamSynchronize, (CUstream hStream), (hStream), (void)0) {
  return synchronize_stream(hStream, legacy_mode);
}
CUPARITY_SIM_API(cuStreamSynchronize_ptsz, (CUstream hStream), (hStream), (void)0) {
  return synchronize_stream(hStream, pt_mode);
}
CUPARITY_SIM_API(cuStreamQuery, (CUstream hStream), (hStream), (void)0) {
  return query_stream(hStream, legacy_mode);
}
CUPARITY_SIM_API(cuStreamQuery_ptsz, (CUstream hStream), (hStream), (void)0) {
  return query_stream(hStream, pt_mode);
}
CUPARITY_SIM_API(cuStreamWaitEvent, (CUstream hStream, CUevent hEvent, unsigned int Flags),
                 (hStream, hEvent, Flags), (void)0) {
  return stream_wait_event(hStream, hEvent, Flags, legacy_mode);
}
CUPARITY_SIM_API(cuStreamWaitEvent_ptsz, (CUstream hStream, CUevent hEvent, unsigned int Flags),
                 (hStream, hEvent, Flags), (void)0) {
  return stream_wait_event(hStream, hEvent, Flags, pt_mode);
}
CUPARITY_SIM_API(cuStreamAddCallback,
                 (CUstream hStream, CUstreamCallback callback, void *userData, unsigned int flags),
                 (hStream, callback, userData, flags), (void)0) {
  return add_callback(hStream, callback, userData, flags, legacy_mode);
}
CUPARITY_SIM_API(cuStreamAddCallback_ptsz,
                 (CUstream hStream, CUstreamCallback callback, void *userData, unsigned int flags),
                 (hStream, callback, userData, flags), (void)0) {
  return add_callback(hStream, callback, userData, flags, pt_mode);
}
CUPARITY_SIM_API(cuStreamGetPriority, (CUstream hStream, int *priority), (hStream, priority),
                 bump(priority)) {
  return stream_priority(hStream, priority, legacy_mode);
}
CUPARITY_SIM_API(cuStreamGetPriority_ptsz, (CUstream hStream, int *priority), (hStream, priority),
                 bump(priority)) {
  return stream_priority(hStream, priority, pt_mode);
}
CUPARITY_SIM_API(cuStreamGetFlags, (CUstream hStream, unsigned int *flags), (hStream, flags),
                 bump(flags)) {
  return stream_flags(hStream, flags, legacy_mode);
}
CUPARITY_SIM_API(cuStreamGetFlags_ptsz, (CUstream hStream, unsigned int *flags), (hStream, flags),
                 bump(flags)) {
  return stream_flags(hStream, flags, pt_mode);
}
CUPARITY_SIM_API(cuLaunchHostFunc, (CUstream hStream, CUhostFn fn, void *userData),
                 (hStream, fn, userData), (void)0) {
  return launch_host_func(hStream, fn, userData, legacy_mode);
}
CUPARITY_SIM_API(cuLaunchHostFunc_ptsz, (CUstream hStream, CUhostFn fn, void *userData),
                 (hStream, fn, userData), (void)0) {
  return launch_host_func(hStream, fn, userData, pt_mode);
}
