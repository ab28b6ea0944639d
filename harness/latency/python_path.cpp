// What the Python call path costs above the C++ one: each py.* probe against its C++ twin.
#include "harness/latency/python_path.hpp"

#include "harness/latency/latency_stats.hpp"

#include <array>
#include <optional>
#include <string_view>
#include <utility>

namespace cuparity {
namespace {

using json = nlohmann::json;

constexpr std::string_view python_prefix = "py.";

/// The Python probe's library series (`<library>:<cell>`, where the library imports in the cell)
/// and the binding whose raw pointer each library calls the driver through: its C++ twin.
/// cuda.core calls through cuda.bindings, whose functions are the pointers cuGetProcAddress hands
/// out: nvidia. CuPy binds libcuda's exported symbols itself (linked against them up to CuPy 13,
/// dlsym'd by CuPy 14's SoftLink), the symbols the internal backend and ctypes take: internal.
/// (CuPy's runtime-API calls, cudaMalloc and the like, pass through libcudart, which resolves the
/// driver by cuGetProcAddress; those rows hold cudart's layer too, as docs/latency.md says.)
constexpr std::array<std::pair<std::string_view, std::string_view>, 2> library_bindings{
    {{"cupy", "internal"}, {"cuda_core", "nvidia"}}};

/// A series' values, or none when it is absent or empty.
std::optional<std::vector<double>> values_of(const series_samples &s, const std::string &name) {
  auto it = s.find(name);
  if (it == s.end() || it->second.empty())
    return std::nullopt;
  return it->second;
}

/// The series of `cell` that called `binding` directly: its own pointer when the process used
/// that binding, else the other backend's.
std::string raw_series(const std::string &cell, const std::string &own,
                       const std::string &binding) {
  return series_name(cell, own == binding ? "direct" : "other");
}

json figure(const std::vector<double> &v, double confidence) {
  const median_interval m = block_bootstrap_median(v, 0, confidence);
  return {{"median", m.estimate}, {"low", m.low}, {"high", m.high}, {"n", v.size()}};
}

/// One row: the Python series against the C++ one. The difference's bounds are the ratio's
/// bootstrap bounds applied to the C++ median (the C++ figure is the smaller and steadier one).
json row(const std::string &path, const std::string &binding, const std::string &py_name,
         const std::vector<double> &py, const std::string &cpp_name, const std::vector<double> &cpp,
         double confidence) {
  const ratio_interval r = bootstrap_ratio(cpp, py, confidence);
  const double cpp_median = median(cpp);
  return {{"path", path},
          {"binding", binding},
          {"python_series", py_name},
          {"cpp_series", cpp_name},
          {"python_ns", figure(py, confidence)},
          {"cpp_ns", figure(cpp, confidence)},
          {"cost_ns", median(py) - cpp_median},
          {"cost_low", cpp_median * (r.low - 1)},
          {"cost_high", cpp_median * (r.high - 1)},
          {"ratio", r.ratio},
          {"ratio_low", r.low},
          {"ratio_high", r.high}};
}

void add_cell_rows(json &rows, const std::string &probe, const std::string &cell,
                   const series_samples &py, const series_samples &cpp, const std::string &py_own,
                   const std::string &cpp_own, double confidence) {
  json cell_rows = json::array();
  // Each binding's raw call: ctypes or cuda.bindings against cuparity's own pointer of it.
  for (const std::string binding : {"internal", "nvidia"}) {
    const std::string py_name = raw_series(cell, py_own, binding);
    const std::string cpp_name = raw_series(cell, cpp_own, binding);
    const auto a = values_of(py, py_name), b = values_of(cpp, cpp_name);
    if (a && b)
      cell_rows.push_back(row("raw", binding, py_name, *a, cpp_name, *b, confidence));
  }
  // The facades (Numba's Driver, cuparity's) only where both processes used one binding.
  const auto a = values_of(py, cell), b = values_of(cpp, cell);
  if (a && b && py_own == cpp_own)
    cell_rows.push_back(row("facade", py_own, cell, *a, cell, *b, confidence));
  // Each library against cuparity's raw pointer of the binding it calls through, whatever binding
  // Numba used in this process (the library does not go through Numba).
  for (const auto &[library, binding] : library_bindings) {
    const std::string py_name = series_name(cell, std::string(library));
    const std::string cpp_name = raw_series(cell, cpp_own, std::string(binding));
    const auto l = values_of(py, py_name), c = values_of(cpp, cpp_name);
    if (l && c)
      cell_rows.push_back(
          row(std::string(library), std::string(binding), py_name, *l, cpp_name, *c, confidence));
  }
  for (auto &r : cell_rows) {
    r["probe"] = probe;
    r["cpp_probe"] = probe.substr(python_prefix.size());
    r["cell"] = cell;
    r["python_binding"] = py_own;
    r["cpp_binding"] = cpp_own;
    rows.push_back(std::move(r));
  }
}

} // namespace

json python_path_rows(const probe_samples &samples,
                      const std::map<std::string, std::string> &py_backend,
                      const std::map<std::string, std::string> &cpp_backend, double confidence) {
  json rows = json::array();
  for (const auto &[probe, py] : samples) {
    if (probe.rfind(python_prefix, 0) != 0)
      continue;
    auto twin = samples.find(probe.substr(python_prefix.size()));
    if (twin == samples.end())
      continue;
    for (const auto &[cell, own] : py_backend) {
      auto cpp_own = cpp_backend.find(cell);
      if (cpp_own != cpp_backend.end() && !own.empty() && !cpp_own->second.empty())
        add_cell_rows(rows, probe, cell, py, twin->second, own, cpp_own->second, confidence);
    }
  }
  return rows;
}

} // namespace cuparity
