// Suite `stream`: creation, queries, null-stream semantics (legacy vs per-thread), explicit
// default-stream handles, cross-stream ordering, events and host callbacks.
//
// Whether work on one stream waits for work on another is observed with two `cuparity_meet`
// kernels (cases/kernels/basic.cu), not with a clock: each raises a flag and waits for the
// other's. Of two kernels in order, the first never sees the second, so "waits" cannot appear
// without a wait, however loaded the host; "no wait" needs the second to start within
// meet_timeout_ns of the first (observations must be deterministic: docs/vocabulary.md). An
// earlier version timed a 50 ms spin against 25 ms, and lost that margin on a loaded host.
#include "cases/support.hpp"
#include "harness/framework/case_registry.hpp"

#include <atomic>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace cuparity::cases {
namespace {

const CUstream legacy_stream = CU_STREAM_LEGACY;
const CUstream per_thread_stream = CU_STREAM_PER_THREAD;

/// How long a meeting kernel waits for the other. Every "waits" pays it in full, under the GPU lock
/// held exclusively (see the note above register_stream_semantics), so it is serial time of the
/// whole matrix: 200 ms cost 8.5 s of the default matrix on an H200, 50 ms 3.6 s more than 20 ms
/// (about 120 waits). Held exclusively, no other cell's work shares the GPU: the second kernel
/// starts tens of microseconds after the first, and 20 ms still absorbs a launching thread
/// descheduled for several 4 ms ticks. (The simulated driver waits at least 100 ms of stalled host
/// time whatever the argument: tests/simdriver/src/kernels.cpp.)
constexpr unsigned long long meet_timeout_ns = 20'000'000ULL;

/// Loads the meeting kernel before anything is observed. Under CUDA_MODULE_LOADING=LAZY (the
/// default since CUDA 12.2) a function's first launch loads it, and loading can wait for work
/// already on the device (CUDA C Programming Guide, "Lazy Loading": possible concurrency issues).
/// Seen on the H200: without this, stream 0 under PTDS and even a non-blocking stream appeared to
/// wait for a spin on another stream.
void warm_up(driver &d, CUfunction meet, CUstream busy, CUstream target) {
  CUdeviceptr none = 0;
  unsigned long long zero = 0;
  launch(d, meet, {1}, {1}, 0, busy, {&none, &none, &zero, &none});
  launch(d, meet, {1}, {1}, 0, target, {&none, &none, &zero, &none});
  d.cuCtxSynchronize();
}

/// Device words for two meeting kernels: flag 0, flag 1, what kernel 0 saw, what kernel 1 saw.
struct meeting {
  explicit meeting(driver &d) : words(d, 16) { set_words(d, words.get(), 0, 4); }
  [[nodiscard]] CUdeviceptr flag(int i) const { return words.get() + 4u * i; }
  [[nodiscard]] CUdeviceptr saw(int i) const { return words.get() + 8u + 4u * i; }
  device_buffer words;
};

/// Launches kernel `me` of a meeting on `s`: it raises its flag and waits for the other's.
void meet(driver &d, CUfunction f, const meeting &at, int me, CUstream s) {
  CUdeviceptr raise = at.flag(me), await = at.flag(1 - me), saw = at.saw(me);
  unsigned long long timeout = meet_timeout_ns;
  launch(d, f, {1}, {1}, 0, s, {&raise, &await, &timeout, &saw});
}

/// Whether work on `target` waits for work queued before it on `busy`: a meeting kernel on
/// `busy`, then one on `target`; the first sees the second only when they run at once.
bool waits_for(driver &d, const loaded_module &m, CUstream busy, CUstream target) {
  const CUfunction f = m.function("cuparity_meet");
  warm_up(d, f, busy, target);
  const meeting at(d);
  meet(d, f, at, 0, busy);
  meet(d, f, at, 1, target);
  d.cuCtxSynchronize();
  unsigned int saw = 0;
  d.cuMemcpyDtoH(&saw, at.saw(0), 4);
  return saw == 0;
}

void create_flags_priorities(case_context &ctx) {
  driver &d = ctx.drv();
  primary_context pc(d);
  int least = 0, greatest = 0;
  d.cuCtxGetStreamPriorityRange(&least, &greatest);
  ctx.observe("priority_least", least);
  ctx.observe("priority_greatest", greatest);
  stream s(d, CU_STREAM_NON_BLOCKING, greatest);
  unsigned int flags = 0;
  int prio = 0;
  d.cuStreamGetFlags(s.get(), &flags);
  d.cuStreamGetPriority(s.get(), &prio);
  ctx.observe("flags", static_cast<int>(flags));
  ctx.observe("priority", prio);
  // What was asked for comes back: a driver that reports flags or priorities wrongly in every
  // cell alike fails here, not only one that differs between the bindings.
  ctx.expect(flags == CU_STREAM_NON_BLOCKING,
             "cuStreamGetFlags of a non-blocking stream gave " + std::to_string(flags));
  ctx.expect(prio == greatest, "cuStreamGetPriority gave " + std::to_string(prio) +
                                   ", not the greatest priority " + std::to_string(greatest));
  stream lowest(d, CU_STREAM_DEFAULT, least);
  int low = 0;
  d.cuStreamGetPriority(lowest.get(), &low);
  ctx.expect(low == least, "a stream made at the least priority " + std::to_string(least) +
                               " reports " + std::to_string(low) + " (the range is wrong)");
  // Out of range priorities are clamped, not refused (driver API docs for
  // cuStreamCreateWithPriority).
  stream clamped(d, CU_STREAM_DEFAULT, greatest - 100);
  d.cuStreamGetPriority(clamped.get(), &prio);
  ctx.observe("clamped_priority", prio);
  CUstream bad = nullptr;
  ctx.observe("bad_flags", code_of([&] { return d.cuStreamCreate.raw(&bad, 0x100); }));
}

void query_not_ready(case_context &ctx) {
  driver &d = ctx.drv();
  primary_context pc(d);
  loaded_module m(d, "basic.cubin");
  stream s(d);
  unsigned long long ns = spin_ns;
  launch(d, m.function("cuparity_spin"), {1}, {1}, 0, s.get(), {&ns});
  ctx.observe("while_spinning", code_of([&] { return d.cuStreamQuery.raw(s.get()); }));
  d.cuStreamSynchronize(s.get());
  ctx.observe("after_sync", code_of([&] { return d.cuStreamQuery.raw(s.get()); }));
}

/// Raises a meeting's flag 1 from the host, through a non-blocking stream (which waits for no
/// other stream in either mode), and waits until it has landed.
void raise_from_host(driver &d, const meeting &at, CUstream nonblocking) {
  static const unsigned int one = 1;
  d.cuMemcpyHtoDAsync(at.flag(1), &one, sizeof one, nonblocking);
  d.cuStreamSynchronize(nonblocking);
}

/// What one call on stream 0 waited for. A meeting kernel runs on a blocking stream and waits
/// (meet_timeout_ns) for flag 1; `call` makes the stream-0 call under test and sees that flag 1 is
/// raised: by work it queues on stream 0, or from the host once it returns. Under legacy semantics
/// stream 0 waits for (and is waited for by) the blocking stream, so the kernel never sees the
/// flag in time; a per-thread stream 0 waits for nothing, so it always does (however late the
/// kernel starts, the flag is then already up). No clock is compared.
template <class Call>
const char *stream0_mode(driver &d, CUfunction meet_fn, CUstream blocking, Call &&call) {
  const meeting at(d);
  meet(d, meet_fn, at, 0, blocking);
  call(at);
  d.cuCtxSynchronize();
  unsigned int saw = 0;
  d.cuMemcpyDtoH(&saw, at.saw(0), 4);
  return saw != 0 ? "per-thread" : "legacy";
}

/// The streams, events and buffers the stream-0 observations share, and one observation per
/// stream-0-sensitive call: "legacy" or "per-thread" (stream0_mode).
struct stream0_calls {
  driver &d;
  CUfunction f;
  stream blocking, other, nonblocking;
  event gate, marker;
  device_buffer word; ///< holds 1: the source of the device-to-device copies
  unsigned int one = 1;

  stream0_calls(driver &drv, const loaded_module &m)
      : d(drv), f(m.function("cuparity_meet")), blocking(drv, CU_STREAM_DEFAULT),
        other(drv, CU_STREAM_DEFAULT), nonblocking(drv, CU_STREAM_NON_BLOCKING),
        gate(drv, CU_EVENT_DISABLE_TIMING), marker(drv, CU_EVENT_DISABLE_TIMING), word(drv, 4) {
    d.cuMemcpyHtoD(word.get(), &one, sizeof one);
    warm_up(d, f, blocking.get(), nullptr);
    warm_up(d, f, nonblocking.get(), other.get());
  }

  template <class Call> std::string mode(Call &&call) {
    return stream0_mode(d, f, blocking.get(), std::forward<Call>(call));
  }

  /// Work queued on stream 0 that raises the flag itself.
  std::map<std::string, std::string> queued() {
    return {
        // A kernel on stream 0 meets the one on the blocking stream only if they run at once.
        {"stream0", mode([&](const meeting &at) { meet(d, f, at, 1, nullptr); })},
        {"stream0.memcpy_async", mode([&](const meeting &at) {
           d.cuMemcpyHtoDAsync(at.flag(1), &one, sizeof one, nullptr);
         })},
        {"stream0.memcpy_dtod_async", mode([&](const meeting &at) {
           d.cuMemcpyDtoDAsync(at.flag(1), word.get(), sizeof one, nullptr);
         })},
        // A synchronous copy is stream-ordered on stream 0 too (pageable: staged, then queued).
        {"stream0.memcpy",
         mode([&](const meeting &at) { d.cuMemcpyHtoD(at.flag(1), &one, sizeof one); })},
    };
  }

  /// Calls that return (or let the host go on) only once stream 0's work is done: the host
  /// raises the flag after them.
  std::map<std::string, std::string> waiting() {
    std::map<std::string, std::string> out;
    out["stream0.synchronize"] = mode([&](const meeting &at) {
      d.cuStreamSynchronize(nullptr);
      raise_from_host(d, at, nonblocking.get());
    });
    out["stream0.memcpy_dtoh"] = mode([&](const meeting &at) {
      unsigned int back = 0;
      d.cuMemcpyDtoH(&back, word.get(), sizeof back);
      raise_from_host(d, at, nonblocking.get());
    });
    // An event recorded on the legacy stream completes after the blocking stream's kernel.
    out["stream0.event_record"] = mode([&](const meeting &at) {
      d.cuEventRecord(marker.get(), nullptr);
      d.cuEventSynchronize(marker.get());
      raise_from_host(d, at, nonblocking.get());
    });
    // A wait queued on the legacy stream holds back later work of every blocking stream; on a
    // per-thread stream it holds back nothing. The meeting's first kernel runs on a non-blocking
    // stream, stream 0 waits for the event after it, and the second kernel goes to another
    // blocking stream: under legacy semantics it starts only once the first has given up.
    out["stream0.wait_event"] = stream0_mode(d, f, nonblocking.get(), [&](const meeting &at) {
      d.cuEventRecord(gate.get(), nonblocking.get());
      d.cuStreamWaitEvent(nullptr, gate.get(), 0);
      meet(d, f, at, 1, other.get());
    });
    return out;
  }

  /// cuStreamQuery on stream 0 while the blocking stream's kernel waits: NOT_READY is legacy.
  CUresult query() {
    CUresult code = CUDA_SUCCESS;
    (void)mode([&](const meeting &at) {
      code = d.cuStreamQuery.raw(nullptr);
      raise_from_host(d, at, nonblocking.get());
    });
    return code;
  }
};

/// What stream 0 means for the symbols this cell bound: the heart of the PTDS settings. Each
/// stream-0-sensitive call is observed on its own, so a driver whose per-thread variant of one
/// call acts as its legacy twin (cuStreamSynchronize_ptsz waiting for the whole context) fails the
/// per-thread cells and names that call.
void default_semantics(case_context &ctx) {
  driver &d = ctx.drv();
  primary_context pc(d);
  loaded_module m(d, "basic.cubin");
  stream0_calls calls(d, m);
  std::map<std::string, std::string> mode = calls.queued();
  mode.merge(calls.waiting());
  const CUresult query = calls.query();
  ctx.expect(query == CUDA_SUCCESS || query == CUDA_ERROR_NOT_READY,
             "cuStreamQuery on stream 0 returned " + d.error_name(query));
  mode["stream0.query"] = query == CUDA_ERROR_NOT_READY ? "legacy" : "per-thread";
  const std::map<std::string, const char *> call_of{
      {"stream0", "cuLaunchKernel"},
      {"stream0.memcpy_async", "cuMemcpyHtoDAsync"},
      {"stream0.memcpy_dtod_async", "cuMemcpyDtoDAsync"},
      {"stream0.memcpy", "cuMemcpyHtoD"},
      {"stream0.memcpy_dtoh", "cuMemcpyDtoH"},
      {"stream0.synchronize", "cuStreamSynchronize"},
      {"stream0.query", "cuStreamQuery"},
      {"stream0.wait_event", "cuStreamWaitEvent"},
      {"stream0.event_record", "cuEventRecord"},
  };
  const char *expected = ctx.config().per_thread_default_stream ? "per-thread" : "legacy";
  std::string wrong;
  for (const auto &[key, value] : mode) {
    ctx.observe(key, value);
    if (value != expected)
      wrong += std::string(wrong.empty() ? "" : "; ") + call_of.at(key) +
               " on stream 0 behaved as " + value;
  }
  ctx.expect(wrong.empty(), wrong + ", but the configuration says " + expected);
}

/// CU_STREAM_LEGACY and CU_STREAM_PER_THREAD mean the same in every cell.
void handles_legacy_per_thread(case_context &ctx) {
  driver &d = ctx.drv();
  primary_context pc(d);
  loaded_module m(d, "basic.cubin");
  stream blocking(d, CU_STREAM_DEFAULT);
  const bool legacy_waits = waits_for(d, m, blocking.get(), legacy_stream);
  const bool per_thread_waits = waits_for(d, m, blocking.get(), per_thread_stream);
  ctx.observe("legacy_waits", legacy_waits);
  ctx.observe("per_thread_waits", per_thread_waits);
  ctx.expect(legacy_waits, "CU_STREAM_LEGACY must wait for a blocking stream");
  ctx.expect(!per_thread_waits, "CU_STREAM_PER_THREAD must not wait for another stream");
}

void nonblocking_no_wait(case_context &ctx) {
  driver &d = ctx.drv();
  primary_context pc(d);
  loaded_module m(d, "basic.cubin");
  stream nonblocking(d, CU_STREAM_NON_BLOCKING);
  const bool waited = waits_for(d, m, legacy_stream, nonblocking.get());
  ctx.observe("waits_for_legacy", waited);
  ctx.expect(!waited, "a non-blocking stream must not wait for the legacy stream");
}

/// Two host threads launch on stream 0 at once: per-thread streams overlap, legacy serialises.
/// Each thread's kernel is one side of a meeting: both see each other only when they overlap.
void threads_overlap(case_context &ctx) {
  driver &d = ctx.drv();
  primary_context pc(d);
  loaded_module m(d, "basic.cubin");
  const CUfunction f = m.function("cuparity_meet");
  warm_up(d, f, nullptr, nullptr);
  const meeting at(d);
  std::atomic<int> ready{0};
  std::atomic<int> failures{0};
  std::mutex error_lock;
  std::exception_ptr thrown;
  auto worker = [&](int me) {
    // Nothing may escape a thread (std::terminate would take the whole cell down): the first
    // exception is kept and rethrown by the case, so a function the binding lacks is
    // not_supported and any other error fails the case with its message.
    try {
      bool pushed = false;
      if (make_current(d, pc.get(), pushed) != CUDA_SUCCESS)
        ++failures;
      ++ready;
      while (ready.load() < 2) {
      }
      meet(d, f, at, me, nullptr);
      if (d.cuStreamSynchronize.raw(nullptr) != CUDA_SUCCESS)
        ++failures;
      CUcontext popped = nullptr;
      (void)(pushed ? d.cuCtxPopCurrent.raw(&popped) : d.cuCtxSetCurrent.raw(nullptr));
    } catch (...) {
      ++ready;
      const std::lock_guard<std::mutex> g(error_lock);
      if (!thrown)
        thrown = std::current_exception();
    }
  };
  std::thread a(worker, 0), b(worker, 1);
  a.join();
  b.join();
  if (thrown)
    std::rethrow_exception(thrown);
  ctx.expect(failures == 0, "a worker thread's launch or sync failed");
  unsigned int saw[2] = {0, 0};
  d.cuMemcpyDtoH(saw, at.saw(0), sizeof saw);
  const bool overlapped = saw[0] != 0 && saw[1] != 0;
  ctx.observe("threads", overlapped ? "overlap" : "serialize");
  ctx.expect(overlapped == ctx.config().per_thread_default_stream,
             std::string("the two threads' kernels on stream 0 ") +
                 (overlapped ? "ran at the same time" : "did not run at the same time"));
}

void wait_event_ordering(case_context &ctx) {
  driver &d = ctx.drv();
  primary_context pc(d);
  loaded_module m(d, "basic.cubin");
  stream s1(d, CU_STREAM_NON_BLOCKING), s2(d, CU_STREAM_NON_BLOCKING);
  device_buffer flag(d, 4), out(d, 4);
  set_words(d, flag.get(), 0, 1);
  event e(d, CU_EVENT_DISABLE_TIMING);
  unsigned long long ns = spin_ns;
  unsigned int value = 42;
  launch(d, m.function("cuparity_spin_write"), {1}, {1}, 0, s1.get(), {&ns, flag.arg(), &value});
  d.cuEventRecord(e.get(), s1.get());
  d.cuStreamWaitEvent(s2.get(), e.get(), 0);
  unsigned long long one = 1;
  launch(d, m.function("cuparity_copy_u32"), {1}, {1}, 0, s2.get(), {out.arg(), flag.arg(), &one});
  d.cuStreamSynchronize(s2.get());
  unsigned int seen = 0;
  d.cuMemcpyDtoH(&seen, out.get(), 4);
  ctx.observe("seen", static_cast<int>(seen));
  ctx.expect(seen == 42, "work after cuStreamWaitEvent saw " + std::to_string(seen));
}

void event_elapsed(case_context &ctx) {
  driver &d = ctx.drv();
  primary_context pc(d);
  loaded_module m(d, "basic.cubin");
  stream s(d);
  event start(d), stop(d), untimed(d, CU_EVENT_DISABLE_TIMING);
  unsigned long long ns = spin_ns;
  d.cuEventRecord(start.get(), s.get());
  launch(d, m.function("cuparity_spin"), {1}, {1}, 0, s.get(), {&ns});
  d.cuEventRecord(stop.get(), s.get());
  const int spinning = code_of([&] { return d.cuEventQuery.raw(stop.get()); });
  ctx.observe("query_while_spinning", spinning);
  d.cuEventSynchronize(stop.get());
  const int after = code_of([&] { return d.cuEventQuery.raw(stop.get()); });
  ctx.observe("query_after", after);
  // A host descheduled for the whole spin may find it done: NOT_READY or SUCCESS, nothing else.
  ctx.expect(spinning == CUDA_ERROR_NOT_READY || spinning == CUDA_SUCCESS,
             "cuEventQuery while the spin runs returned " + std::to_string(spinning));
  ctx.expect(after == CUDA_SUCCESS,
             "cuEventQuery after cuEventSynchronize returned " + std::to_string(after));
  float ms = 0;
  d.cuEventElapsedTime(&ms, start.get(), stop.get());
  const bool within = ms >= 45.0f && ms < 1000.0f;
  ctx.observe("elapsed_within_bounds", within);
  ctx.expect(within, "a 50 ms spin measured " + std::to_string(ms) + " ms");
  // Two events with nothing between them: a few microseconds apart, never a millisecond. Both
  // are queued behind a spin, so the stream reaches them back to back once it ends: on an idle
  // stream a host descheduled between the two records would put its own delay between them
  // (1.08 and 1.76 ms on the simulated driver, on a two-core CI host under ctest -j2).
  launch(d, m.function("cuparity_spin"), {1}, {1}, 0, s.get(), {&ns});
  d.cuEventRecord(start.get(), s.get());
  d.cuEventRecord(stop.get(), s.get());
  d.cuEventSynchronize(stop.get());
  float nothing = -1;
  d.cuEventElapsedTime(&nothing, start.get(), stop.get());
  ctx.observe("elapsed_of_nothing_below_1ms", nothing >= 0 && nothing < 1.0f);
  ctx.expect(nothing >= 0 && nothing < 1.0f,
             "two events with nothing between them measured " + std::to_string(nothing) + " ms");
  d.cuEventRecord(untimed.get(), s.get());
  d.cuEventSynchronize(untimed.get());
  ctx.observe("elapsed_untimed",
              code_of([&] { return d.cuEventElapsedTime.raw(&ms, start.get(), untimed.get()); }));
}

struct callback_log {
  std::mutex lock;
  std::vector<int> order;
  void add(int v) {
    std::lock_guard<std::mutex> g(lock);
    order.push_back(v);
  }
};

/// Host functions run in stream order and after the work before them. They make no CUDA calls
/// (not allowed in callbacks: driver API docs for cuLaunchHostFunc).
void callback_order(case_context &ctx) {
  driver &d = ctx.drv();
  primary_context pc(d);
  loaded_module m(d, "basic.cubin");
  stream s(d);
  static callback_log log; // callbacks get only a void*; one case at a time uses it
  log.order.clear();
  device_buffer flag(d, 4);
  set_words(d, flag.get(), 0, 1);
  unsigned long long ns = spin_ns / 2;
  unsigned int value = 1;
  launch(d, m.function("cuparity_spin_write"), {1}, {1}, 0, s.get(), {&ns, flag.arg(), &value});
  auto host_fn = [](void *arg) { log.add(static_cast<int>(reinterpret_cast<std::intptr_t>(arg))); };
  auto stream_cb = [](CUstream, CUresult status, void *arg) {
    log.add(status == CUDA_SUCCESS ? static_cast<int>(reinterpret_cast<std::intptr_t>(arg)) : -1);
  };
  d.cuLaunchHostFunc(s.get(), host_fn, reinterpret_cast<void *>(1));
  d.cuStreamAddCallback(s.get(), stream_cb, reinterpret_cast<void *>(2), 0);
  d.cuLaunchHostFunc(s.get(), host_fn, reinterpret_cast<void *>(3));
  const bool early = [&] {
    std::lock_guard<std::mutex> g(log.lock);
    return !log.order.empty();
  }();
  d.cuStreamSynchronize(s.get());
  std::vector<int> order;
  {
    std::lock_guard<std::mutex> g(log.lock);
    order = log.order;
  }
  ctx.observe("order", order);
  ctx.expect(order == std::vector<int>{1, 2, 3}, "callbacks ran out of stream order");
  ctx.expect(!early, "a host function ran before the 25 ms spin ahead of it finished");
}

// The cases that ask whether two kernels run at once are exclusive (per GPU): no other cell's case
// shares the GPU meanwhile. While they compared a spin against a margin, CU_STREAM_PER_THREAD
// "waited" with 12 cells on one H200. With meeting kernels and no lock (3f81168), five runs of the
// default matrix on the H200 failed stream.nonblocking.no_wait and stream.threads.overlap in every
// per-thread cell and nowhere else: their kernels never met within 200 ms while other cells ran,
// though a created stream and the per-thread stream did. Why is not known yet; alone they meet.
/// The cases about the semantics of streams (the exclusive ones among them).
void register_stream_semantics(case_registry &registry) {
  registry
      .add({"stream.create.flags_priorities", "flags, priority range and clamping",
            create_flags_priorities})
      .uses(primary_context_needs())
      .uses(stream_needs())
      .uses({E::cuCtxGetStreamPriorityRange, E::cuStreamCreateWithPriority, E::cuStreamGetFlags,
             E::cuStreamGetPriority});
  registry
      .add({"stream.query.not_ready", "cuStreamQuery: NOT_READY while busy, then SUCCESS",
            query_not_ready})
      .uses(primary_context_needs())
      .uses(module_needs())
      .uses(stream_needs())
      .uses({E::cuLaunchKernel, E::cuStreamQuery, E::cuStreamSynchronize});
  // Each stream-0-sensitive call against a meeting kernel on a blocking stream.
  registry
      .add({"stream.default.semantics",
            "launch, async copy, synchronize, query, wait-event and event record on stream 0: "
            "legacy or per-thread, as configured",
            default_semantics})
      .uses(primary_context_needs())
      .uses(module_needs())
      .uses(buffer_needs())
      .uses(stream_needs())
      .uses(event_needs())
      .uses({words_need(), E::cuLaunchKernel, E::cuCtxSynchronize, E::cuMemcpyDtoH, E::cuMemcpyHtoD,
             E::cuMemcpyHtoDAsync, E::cuMemcpyDtoDAsync, E::cuStreamSynchronize, E::cuStreamQuery,
             E::cuStreamWaitEvent, E::cuEventRecord, E::cuEventSynchronize})
      .exclusive = true; // see the note above
  // waits_for: meeting kernels (a module, words zeroed by set_words, launches, a copy back).
  for (case_def def : {
           case_def{"stream.handles.legacy_per_thread",
                    "CU_STREAM_LEGACY waits and CU_STREAM_PER_THREAD does not, in every cell",
                    handles_legacy_per_thread},
           case_def{"stream.nonblocking.no_wait", "a non-blocking stream never waits for legacy",
                    nonblocking_no_wait},
       })
    registry.add(std::move(def))
        .uses(primary_context_needs())
        .uses(module_needs())
        .uses(buffer_needs())
        .uses(stream_needs())
        .uses({words_need(), E::cuLaunchKernel, E::cuCtxSynchronize, E::cuMemcpyDtoH})
        .exclusive = true; // see the note above
  registry
      .add({"stream.threads.overlap",
            "two threads on stream 0: overlap under PTDS, serialise under legacy", threads_overlap})
      .uses(primary_context_needs())
      .uses(module_needs())
      .uses(buffer_needs())
      .uses({words_need(), E::cuLaunchKernel, E::cuCtxSynchronize, E::cuStreamSynchronize,
             E::cuMemcpyDtoH})
      .exclusive = true; // see the note above
}

/// The cases about ordering: events, callbacks and host functions.
void register_stream_ordering(case_registry &registry) {
  registry
      .add({"stream.wait_event.ordering", "cuStreamWaitEvent orders work across streams",
            wait_event_ordering})
      .uses(primary_context_needs())
      .uses(module_needs())
      .uses(buffer_needs())
      .uses(stream_needs())
      .uses(event_needs())
      .uses({words_need(), E::cuLaunchKernel, E::cuEventRecord, E::cuStreamWaitEvent,
             E::cuStreamSynchronize, E::cuMemcpyDtoH});
  registry
      .add({"stream.event.elapsed", "event elapsed time of a 50 ms spin; untimed events",
            event_elapsed})
      .uses(primary_context_needs())
      .uses(module_needs())
      .uses(stream_needs())
      .uses(event_needs())
      .uses({E::cuEventRecord, E::cuLaunchKernel, E::cuEventQuery, E::cuEventSynchronize,
             E::cuEventElapsedTime});
  registry
      .add({"stream.callback.order", "host functions and callbacks run in stream order",
            callback_order})
      .uses(primary_context_needs())
      .uses(module_needs())
      .uses(buffer_needs())
      .uses(stream_needs())
      .uses({words_need(), E::cuLaunchKernel, E::cuLaunchHostFunc, E::cuStreamAddCallback,
             E::cuStreamSynchronize});
}

} // namespace

CUPARITY_CASE_FILE(register_stream_cases) {
  register_stream_semantics(registry);
  register_stream_ordering(registry);
}

} // namespace cuparity::cases
