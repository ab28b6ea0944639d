// The precise delay's loop path keeps its rate true: samples against the counter bring back a
// rate that no longer matches the core (docs/fault-shim.md, "How precise a delay is").
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
  // A sample about every 10 ms: 300 ms of 10 ns delays is some 30 samples, and the median of
  // five needs three of them.
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  while (std::chrono::steady_clock::now() < until)
    for (int i = 0; i < 1000; ++i)
      precise_delay(10);
  INFO("calibrated " << calibrated << " loops/ns, now " << loop_rate_now());
  CHECK(loop_rate_now() == Approx(calibrated).epsilon(0.3));
}
