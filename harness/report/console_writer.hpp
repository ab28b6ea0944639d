// The console table: what a person reads at the end of a run.
#pragma once

#include "harness/report/output_writer.hpp"

#include <ostream>

namespace cuparity {

/// A row per cell, the groups, every problem and divergence, the latency phase, the verdict.
class console_writer : public output_writer {
public:
  explicit console_writer(std::ostream &out) : m_out(out) {}
  void write(const run_outputs &run) override;

private:
  std::ostream &m_out;
};

/// The latency phase's lines of the console table (its summary.json section, `latency`).
void print_latency(std::ostream &out, const matrix &m, const nlohmann::json &latency);

} // namespace cuparity
