// A function the headers do not declare cannot be judged ("unknown"), so the capture names them
// at once, before anyone reads the map's audit.
#include "harness/capture/api_coverage.hpp"

#include "harness/driver/driver_api.hpp"

#include <set>

namespace cuparity {

std::map<std::pair<long, int>, api_coverage> api_coverage_of(const captured_map &m) {
  std::map<std::pair<long, int>, std::set<std::string>> bound, named;
  for (const auto &p : m.processes)
    bound[{p.pid, p.image}];
  for (const auto &e : m.entries) {
    if (e.symbol || e.library) // a request the driver answered with no pointer bound nothing
      bound[{e.process, e.image}].insert(e.function);
    if (!e.function.empty()) // "": a request with a null name
      named[{e.process, e.image}].insert(e.function);
  }
  std::map<std::pair<long, int>, api_coverage> out;
  for (const auto &[at, functions] : bound) {
    api_coverage &c = out[at];
    c.functions = functions.size();
    for (const auto &f : named[at])
      if (!find_api_function(f))
        c.undeclared.push_back(f);
  }
  return out;
}

std::string api_headers_name() {
  const int v = api_headers_version();
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

} // namespace cuparity
