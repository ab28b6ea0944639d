// Streams and events: legacy vs per-thread default stream, non-blocking streams, queries,
// callbacks, host functions, event timing and cross-stream waits.
#include "test_support.hpp"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

using namespace cuparity::sim::test;

namespace {
double elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since)
      .count();
}
auto now() {
  return std::chrono::steady_clock::now();
}

CUstream make_stream(unsigned flags = CU_STREAM_DEFAULT) {
  CUstream s = nullptr;
  REQUIRE(SIM(cuStreamCreate, cuStreamCreate_v2000)(&s, flags) == CUDA_SUCCESS);
  return s;
}
void destroy(CUstream s) {
  REQUIRE(SIM(cuStreamDestroy_v2, cuStreamDestroy_v4000)(s) == CUDA_SUCCESS);
}
CUresult sync(CUstream s) {
  return SIM(cuStreamSynchronize, cuStreamSynchronize_v2000)(s);
}
CUresult sync_ptsz(CUstream s) {
  return SIM(cuStreamSynchronize_ptsz, cuStreamSynchronize_v7000_ptsz)(s);
}
CUresult query(CUstream s) {
  return SIM(cuStreamQuery, cuStreamQuery_v2000)(s);
}

/// Holds a stream's work until open(): a cuparity_meet kernel (src/kernels.cpp) waiting for a
/// host word (the simulator's kernels run on host threads, so a host word serves as the mapped
/// flag a GPU kernel would read). Structure instead of time: a test asserts what a call must not
/// wait for without timing it. The kernel ends only when the gate opens, or once the host has
/// waited on streams, with nothing else able to run, for 5 s in all (meet's stall timeout), which
/// is what a call that wrongly waits for the gated stream does. So right after a call that must
/// not wait, the gated stream reads NOT_READY; had it waited, it would read SUCCESS and
/// saw_open() would be false. (A 50 ms spin timed against `< 20 ms` failed on a loaded machine.)
class gate {
public:
  explicit gate(CUstream s) : m_stream(s) {
    static const CUfunction meet = [] {
      primary();
      const std::string ptx = ptx_with_entries({"cuparity_meet"});
      CUmodule m = nullptr;
      REQUIRE(SIM(cuModuleLoadData, cuModuleLoadData_v2000)(&m, ptx.c_str()) == CUDA_SUCCESS);
      CUfunction f = nullptr;
      REQUIRE(SIM(cuModuleGetFunction, cuModuleGetFunction_v2000)(&f, m, "cuparity_meet") ==
              CUDA_SUCCESS);
      return f;
    }();
    unsigned int *raise = nullptr, *await = &m_open, *saw = &m_saw;
    unsigned long long stall_ns = 5'000'000'000ULL;
    void *args[] = {&raise, &await, &stall_ns, &saw};
    REQUIRE(SIM(cuLaunchKernel, cuLaunchKernel_v4000)(meet, 1, 1, 1, 1, 1, 1, 0, s, args,
                                                      nullptr) == CUDA_SUCCESS);
  }
  /// Open, and wait for the kernel: it reads this object's words.
  ~gate() {
    open();
    (void)sync(m_stream);
  }
  gate(const gate &) = delete;
  gate &operator=(const gate &) = delete;

  void open() { std::atomic_ref<unsigned int>(m_open).store(1); }
  /// Whether the kernel ended because the gate opened (read once its stream has synchronised).
  [[nodiscard]] bool saw_open() const { return m_saw == 1; }

private:
  CUstream m_stream;
  unsigned int m_open = 0, m_saw = 0;
};
} // namespace

TEST_CASE("stream 0 is the legacy stream through plain symbols, per-thread through _ptsz",
          "[stream]") {
  primary();
  CUstream s = make_stream();
  // Waits are timed from before the work is queued, so a wait's lower bound holds however loaded
  // the host; and the stream waited for is done when the wait returns.
  auto t0 = now();
  spin(s, 50);
  REQUIRE(sync(nullptr) == CUDA_SUCCESS);
  CHECK(elapsed_ms(t0) >= 50);
  CHECK(query(s) == CUDA_SUCCESS);
  {
    gate held(s);
    REQUIRE(sync_ptsz(nullptr) == CUDA_SUCCESS);
    CHECK(query(s) == CUDA_ERROR_NOT_READY); // the per-thread stream did not wait for s
    held.open();
    REQUIRE(sync(s) == CUDA_SUCCESS);
    CHECK(held.saw_open());
  }
  // An explicit CU_STREAM_LEGACY waits whichever symbol is used.
  t0 = now();
  spin(s, 50);
  REQUIRE(sync_ptsz(CU_STREAM_LEGACY) == CUDA_SUCCESS);
  CHECK(elapsed_ms(t0) >= 50);
  CHECK(query(s) == CUDA_SUCCESS);
  destroy(s);
}

TEST_CASE("work queued on the legacy stream blocks later work on blocking streams only",
          "[stream]") {
  primary();
  CUstream blocking = make_stream();
  CUstream nonblocking = make_stream(CU_STREAM_NON_BLOCKING);
  auto empty = kernel("cuparity_empty");
  auto launch = SIM(cuLaunchKernel, cuLaunchKernel_v4000);
  {
    gate held(nullptr); // legacy stream
    REQUIRE(launch(empty, 1, 1, 1, 1, 1, 1, 0, nonblocking, nullptr, nullptr) == CUDA_SUCCESS);
    REQUIRE(sync(nonblocking) == CUDA_SUCCESS);
    CHECK(query(nullptr) == CUDA_ERROR_NOT_READY); // the non-blocking stream did not wait for it
    REQUIRE(launch(empty, 1, 1, 1, 1, 1, 1, 0, blocking, nullptr, nullptr) == CUDA_SUCCESS);
    CHECK(query(blocking) == CUDA_ERROR_NOT_READY); // held behind the legacy stream's work
    held.open();
    REQUIRE(sync(blocking) == CUDA_SUCCESS);
    CHECK(held.saw_open());
  }
  // The blocking stream's work waits for the legacy stream's: from before the spin, at least its
  // 50 ms, and the legacy stream is done when the blocking one is.
  const auto t0 = now();
  spin(nullptr, 50);
  REQUIRE(launch(empty, 1, 1, 1, 1, 1, 1, 0, blocking, nullptr, nullptr) == CUDA_SUCCESS);
  REQUIRE(sync(blocking) == CUDA_SUCCESS);
  CHECK(elapsed_ms(t0) >= 50);
  CHECK(query(nullptr) == CUDA_SUCCESS);

  // Work on a non-blocking stream never delays the legacy stream.
  {
    gate held(nonblocking);
    REQUIRE(sync(nullptr) == CUDA_SUCCESS);
    CHECK(query(nonblocking) == CUDA_ERROR_NOT_READY);
    held.open();
    REQUIRE(sync(nonblocking) == CUDA_SUCCESS);
    CHECK(held.saw_open());
  }
  destroy(blocking);
  destroy(nonblocking);
}

TEST_CASE("per-thread default streams of different threads are independent", "[stream]") {
  primary();
  gate held(CU_STREAM_PER_THREAD); // this thread's
  CUresult other_sync = CUDA_ERROR_UNKNOWN;
  std::thread other([&] {
    primary();
    other_sync = sync_ptsz(nullptr); // its own per-thread stream
  });
  other.join();
  CHECK(other_sync == CUDA_SUCCESS);
  // Had the other thread's wait been for this thread's stream, the gate would have given up.
  CHECK(query(CU_STREAM_PER_THREAD) == CUDA_ERROR_NOT_READY);
  held.open();
  REQUIRE(sync(CU_STREAM_PER_THREAD) == CUDA_SUCCESS);
  CHECK(held.saw_open());
  CHECK(query(CU_STREAM_PER_THREAD) == CUDA_SUCCESS);
}

TEST_CASE("cuStreamQuery reports NOT_READY while work is pending", "[stream]") {
  primary();
  CUstream s = make_stream();
  CHECK(query(s) == CUDA_SUCCESS);
  {
    gate held(s);
    CHECK(query(s) == CUDA_ERROR_NOT_READY);
    CHECK(SIM(cuStreamQuery_ptsz, cuStreamQuery_v7000_ptsz)(s) == CUDA_ERROR_NOT_READY);
    held.open();
    REQUIRE(sync(s) == CUDA_SUCCESS);
    CHECK(query(s) == CUDA_SUCCESS);
  }
  destroy(s);
  CHECK(query(s) == CUDA_ERROR_INVALID_HANDLE);
}

namespace {
struct order_log {
  std::mutex mu;
  std::vector<int> order;
  CUstream seen_stream = nullptr;
  CUresult seen_status = CUDA_ERROR_UNKNOWN;
};
void CUDA_CB record_callback(CUstream s, CUresult status, void *user) {
  auto *log = static_cast<order_log *>(user);
  std::lock_guard lock(log->mu);
  log->seen_stream = s;
  log->seen_status = status;
  log->order.push_back(1);
}
void CUDA_CB record_host(void *user) {
  auto *log = static_cast<order_log *>(user);
  std::lock_guard lock(log->mu);
  log->order.push_back(2);
}
} // namespace

TEST_CASE("callbacks and host functions run in stream order", "[stream]") {
  primary();
  CUstream s = make_stream();
  order_log log;
  {
    gate held(s);
    REQUIRE(SIM(cuStreamAddCallback, cuStreamAddCallback_v5000)(s, record_callback, &log, 0) ==
            CUDA_SUCCESS);
    REQUIRE(SIM(cuLaunchHostFunc, cuLaunchHostFunc_v10000)(s, record_host, &log) == CUDA_SUCCESS);
    {
      std::lock_guard lock(log.mu);
      CHECK(log.order.empty()); // still behind the gate
    }
    held.open();
    REQUIRE(sync(s) == CUDA_SUCCESS);
    CHECK(held.saw_open());
  }
  CHECK(log.order == std::vector<int>{1, 2});
  CHECK(log.seen_stream == s);
  CHECK(log.seen_status == CUDA_SUCCESS);
  CHECK(SIM(cuStreamAddCallback, cuStreamAddCallback_v5000)(s, record_callback, &log, 1) ==
        CUDA_ERROR_INVALID_VALUE);
  destroy(s);
}

TEST_CASE("events: timing, queries and cross-stream waits", "[stream][event]") {
  primary();
  auto create = SIM(cuEventCreate, cuEventCreate_v2000);
  auto record = SIM(cuEventRecord, cuEventRecord_v2000);
  auto elapsed = SIM(cuEventElapsedTime_v2, cuEventElapsedTime_v12080);
  CUstream s = make_stream();
  CUevent start = nullptr, stop = nullptr, untimed = nullptr, never = nullptr;
  REQUIRE(create(&start, CU_EVENT_DEFAULT) == CUDA_SUCCESS);
  REQUIRE(create(&stop, CU_EVENT_DEFAULT) == CUDA_SUCCESS);
  REQUIRE(create(&untimed, CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS);
  REQUIRE(create(&never, CU_EVENT_DEFAULT) == CUDA_SUCCESS);
  CUevent bad = nullptr;
  CHECK(create(&bad, CU_EVENT_INTERPROCESS) == CUDA_ERROR_INVALID_VALUE);

  float ms = 0;
  {
    gate held(s); // before start: the events time the spin alone
    REQUIRE(record(start, s) == CUDA_SUCCESS);
    spin(s, 30);
    REQUIRE(record(stop, s) == CUDA_SUCCESS);
    REQUIRE(record(untimed, s) == CUDA_SUCCESS);
    CHECK(SIM(cuEventQuery, cuEventQuery_v2000)(stop) == CUDA_ERROR_NOT_READY);
    CHECK(elapsed(&ms, start, stop) == CUDA_ERROR_NOT_READY);
    held.open();
    REQUIRE(SIM(cuEventSynchronize, cuEventSynchronize_v2000)(stop) == CUDA_SUCCESS);
  }
  CHECK(SIM(cuEventQuery, cuEventQuery_v2000)(stop) == CUDA_SUCCESS);
  REQUIRE(elapsed(&ms, start, stop) == CUDA_SUCCESS);
  CHECK(ms >= 30.0f); // the spin sleeps at least its 30 ms between the two records
  // An upper bound only for the unit (milliseconds: the 30 ms would read 30000 in microseconds),
  // generous because a stream worker may wait long for a core on a loaded machine.
  CHECK(ms < 10000.0f);
  REQUIRE(SIM(cuEventSynchronize, cuEventSynchronize_v2000)(untimed) == CUDA_SUCCESS);
  CHECK(elapsed(&ms, start, untimed) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(elapsed(&ms, start, never) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(SIM(cuEventQuery, cuEventQuery_v2000)(never) == CUDA_SUCCESS);

  // A non-blocking stream made to wait for an event recorded behind a 50 ms spin: timed from
  // before the spin, so the lower bound holds however loaded the host.
  CUstream waiter = make_stream(CU_STREAM_NON_BLOCKING);
  const auto t0 = now();
  spin(s, 50);
  REQUIRE(record(stop, s) == CUDA_SUCCESS);
  REQUIRE(SIM(cuStreamWaitEvent, cuStreamWaitEvent_v3020)(waiter, stop, 0) == CUDA_SUCCESS);
  REQUIRE(sync(waiter) == CUDA_SUCCESS);
  CHECK(elapsed_ms(t0) >= 50);
  CHECK(SIM(cuEventQuery, cuEventQuery_v2000)(stop) == CUDA_SUCCESS);

  for (CUevent e : {start, stop, untimed, never})
    REQUIRE(SIM(cuEventDestroy_v2, cuEventDestroy_v4000)(e) == CUDA_SUCCESS);
  CHECK(SIM(cuEventQuery, cuEventQuery_v2000)(start) == CUDA_ERROR_INVALID_HANDLE);
  destroy(s);
  destroy(waiter);
}

TEST_CASE("stream priorities and flags", "[stream]") {
  primary();
  int least = 1, greatest = 1;
  REQUIRE(SIM(cuCtxGetStreamPriorityRange, cuCtxGetStreamPriorityRange_v5050)(&least, &greatest) ==
          CUDA_SUCCESS);
  CHECK(least == 0);
  CHECK(greatest == -5);
  auto create = SIM(cuStreamCreateWithPriority, cuStreamCreateWithPriority_v5050);
  auto get = SIM(cuStreamGetPriority, cuStreamGetPriority_v5050);
  CUstream high = nullptr, low = nullptr;
  REQUIRE(create(&high, CU_STREAM_NON_BLOCKING, -10) == CUDA_SUCCESS);
  REQUIRE(create(&low, 0, 3) == CUDA_SUCCESS);
  int p = 99;
  REQUIRE(get(high, &p) == CUDA_SUCCESS);
  CHECK(p == -5);
  REQUIRE(get(low, &p) == CUDA_SUCCESS);
  CHECK(p == 0);
  unsigned flags = 99;
  REQUIRE(SIM(cuStreamGetFlags, cuStreamGetFlags_v5050)(high, &flags) == CUDA_SUCCESS);
  CHECK(flags == CU_STREAM_NON_BLOCKING);
  CHECK(SIM(cuStreamCreate, cuStreamCreate_v2000)(&high, 0x10) == CUDA_ERROR_INVALID_VALUE);
  destroy(low);
  destroy(high);
}
