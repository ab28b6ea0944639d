// The precise delay's loop path keeps its rate true: samples against the counter bring back a
// rate that no longer matches the core (docs/fault-shim.md, "How precise a delay is"). The test
// waits on samples (events), never on the clock: how close the rate comes, under whatever load the
// machine has, is a figure the delay benchmark (cuparity_fault_delay_bench) reports.
#include "tools/faults/precise_delay.hpp"

#include <catch2/catch.hpp>
#include <chrono>

using namespace cuparity::faults;

TEST_CASE("a loop rate that moved comes back to the core's within a few samples", "[timing]") {
  calibrate_delay();
  const double calibrated = calibration().loops_per_ns;
  REQUIRE(calibration().counter_from_ns > 10); // 10 ns runs on the loop
  skew_loop_rate(4.0);
  REQUIRE(loop_rate_now() == Approx(4 * calibrated).epsilon(0.01));
  // The rate is the median of five samples: after five new ones, none is from before the skew.
  // A sample comes about every 10 ms of loop calls; the deadline only bounds a machine on which
  // the samples never come (a broken re-timing), it is not what the test measures.
  const std::int64_t before = loop_history_now().samples;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (loop_history_now().samples < before + 5 && std::chrono::steady_clock::now() < give_up)
    for (int i = 0; i < 1000; ++i)
      precise_delay(10);
  REQUIRE(loop_history_now().samples >= before + 5);
  // A core under load makes a sample read slower (a preempted sample spans more time), never
  // four times faster: the skewed rate must be gone, whatever the load.
  INFO("calibrated " << calibrated << " loops/ns, now " << loop_rate_now());
  CHECK(loop_rate_now() < 2 * calibrated);
}
