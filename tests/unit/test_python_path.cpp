// The Python path's cost rows: py.* probes against their C++ twins, matched by the binding used.
#include "harness/latency/python_path.hpp"

#include <catch2/catch.hpp>

using cuparity::probe_samples;

namespace {

std::vector<double> around(double centre) {
  return {centre - 1, centre, centre + 1, centre, centre};
}

const nlohmann::json *find_row(const nlohmann::json &rows, const std::string &cell,
                               const std::string &path, const std::string &binding) {
  for (const auto &r : rows)
    if (r["cell"] == cell && r["path"] == path && r["binding"] == binding)
      return &r;
  return nullptr;
}

} // namespace

TEST_CASE("python path rows: each binding's Python call against cuparity's own", "[python_path]") {
  probe_samples s;
  // Cell a: both processes internal. Python: ctypes 2000 ns (direct), cuda.bindings 600 (other).
  s["py.ctx.get_current"] = {
      {"a", around(2500)}, {"direct:a", around(2000)}, {"other:a", around(600)}};
  s["ctx.get_current"] = {{"a", around(30)}, {"direct:a", around(10)}, {"other:a", around(11)}};
  const auto rows = cuparity::python_path_rows(s, {{"a", "internal"}}, {{"a", "internal"}}, 0.99);
  REQUIRE(rows.size() == 3);
  const auto *ctypes = find_row(rows, "a", "raw", "internal");
  REQUIRE(ctypes);
  CHECK((*ctypes)["python_series"] == "direct:a");
  CHECK((*ctypes)["cpp_series"] == "direct:a");
  CHECK((*ctypes)["cost_ns"].get<double>() == Approx(1990));
  CHECK((*ctypes)["cost_low"].get<double>() <= 1990);
  CHECK((*ctypes)["cost_high"].get<double>() >= 1990);
  const auto *nv = find_row(rows, "a", "raw", "nvidia");
  REQUIRE(nv);
  CHECK((*nv)["python_series"] == "other:a");
  CHECK((*nv)["cost_ns"].get<double>() == Approx(589));
  const auto *facade = find_row(rows, "a", "facade", "internal");
  REQUIRE(facade);
  CHECK((*facade)["cost_ns"].get<double>() == Approx(2470));
  CHECK((*facade)["cpp_probe"] == "ctx.get_current");
}

TEST_CASE("python path rows: a Python fallback is set against the C++ path it really took",
          "[python_path]") {
  probe_samples s;
  // The cell asked for nvidia; C++ used nvidia, Python's Numba fell back to ctypes (internal).
  s["py.launch.empty_kernel"] = {{"b", around(5000)}, {"direct:b", around(4000)}};
  s["launch.empty_kernel"] = {
      {"b", around(2100)}, {"direct:b", around(2000)}, {"other:b", around(1990)}};
  const auto rows = cuparity::python_path_rows(s, {{"b", "internal"}}, {{"b", "nvidia"}}, 0.99);
  REQUIRE(rows.size() == 1); // no cuda.bindings series, no facade row across bindings
  CHECK(rows[0]["binding"] == "internal");
  CHECK(rows[0]["cpp_series"] == "other:b"); // the C++ nvidia cell's internal pointer
  CHECK(rows[0]["python_binding"] == "internal");
  CHECK(rows[0]["cpp_binding"] == "nvidia");
  CHECK(rows[0]["cost_ns"].get<double>() == Approx(2010));
}

TEST_CASE("python path rows: none without a C++ twin or a known binding", "[python_path]") {
  probe_samples s;
  s["py.event.record_query"] = {{"a", around(900)}, {"direct:a", around(800)}};
  s["event.record_sync"] = {{"a", around(9000)}};
  CHECK(cuparity::python_path_rows(s, {{"a", "internal"}}, {{"a", "internal"}}, 0.99).empty());
  s["event.record_query"] = {{"a", around(90)}, {"direct:a", around(80)}};
  CHECK(cuparity::python_path_rows(s, {{"a", ""}}, {{"a", "internal"}}, 0.99).empty());
  CHECK(cuparity::python_path_rows(s, {{"a", "internal"}}, {}, 0.99).empty());
  CHECK(cuparity::python_path_rows(s, {{"a", "internal"}}, {{"a", "internal"}}, 0.99).size() == 2);
}

TEST_CASE("python path rows: CuPy against the internal pointer, cuda.core against the nvidia one",
          "[python_path]") {
  probe_samples s;
  // Python used ctypes (internal); the C++ process nvidia, so its internal pointer is `other`.
  s["py.ctx.get_current"] = {
      {"direct:c", around(2000)}, {"cupy:c", around(900)}, {"cuda_core:c", around(1500)}};
  s["ctx.get_current"] = {{"direct:c", around(10)}, {"other:c", around(12)}};
  const auto rows = cuparity::python_path_rows(s, {{"c", "internal"}}, {{"c", "nvidia"}}, 0.99);
  REQUIRE(rows.size() == 3);
  const auto *cupy = find_row(rows, "c", "cupy", "internal");
  REQUIRE(cupy);
  CHECK((*cupy)["python_series"] == "cupy:c");
  CHECK((*cupy)["cpp_series"] == "other:c");
  CHECK((*cupy)["cost_ns"].get<double>() == Approx(888));
  const auto *core = find_row(rows, "c", "cuda_core", "nvidia");
  REQUIRE(core);
  CHECK((*core)["python_series"] == "cuda_core:c");
  CHECK((*core)["cpp_series"] == "direct:c");
  CHECK((*core)["cost_ns"].get<double>() == Approx(1490));
  CHECK((*core)["python_binding"] == "internal"); // the process's binding, not the library's
  // A library series without its C++ pointer's series gets no row.
  s["ctx.get_current"].erase("other:c");
  CHECK(!find_row(cuparity::python_path_rows(s, {{"c", "internal"}}, {{"c", "nvidia"}}, 0.99), "c",
                  "cupy", "internal"));
}
