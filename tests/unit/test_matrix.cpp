// Matrix files: expansion (axes, exclude, include), expectations, and errors with line:column.
#include "harness/matrix/matrix.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

using namespace cuparity;

namespace {

std::string write_matrix(const std::string &name, const std::string &text) {
  auto dir = std::filesystem::temp_directory_path() / "cuparity-matrix-tests";
  std::filesystem::create_directories(dir);
  auto path = (dir / (name + ".toml")).string();
  std::ofstream(path) << text;
  return path;
}

bool any_case(const std::string &glob) {
  return glob != "nope.*" && glob != "nope.no.case";
}

matrix load(const std::string &name, const std::string &text) {
  return load_matrix(write_matrix(name, text), any_case);
}

std::vector<std::string> ids(const matrix &m) {
  std::vector<std::string> out;
  for (const auto &c : m.cells)
    out.push_back(c.id);
  return out;
}

/// The message of the matrix_error `text` raises (empty if none).
std::string error_of(const std::string &name, const std::string &text) {
  try {
    (void)load(name, text);
  } catch (const matrix_error &e) {
    return e.what();
  }
  return {};
}

} // namespace

TEST_CASE("axes form the cartesian product, first axis slowest; false means unset", "[matrix]") {
  auto m = load("product", R"(
[axes]
NUMBA_CUDA_USE_NVIDIA_BINDING = ["0", "1"]
CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM = [false, 1]
)");
  REQUIRE(m.cells.size() == 4);
  CHECK(ids(m) == std::vector<std::string>{"nv=0,cp_ptds=-", "nv=0,cp_ptds=1", "nv=1,cp_ptds=-",
                                           "nv=1,cp_ptds=1"});
  CHECK_FALSE(m.cells[0].env.at("CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM").has_value());
  CHECK(m.cells[1].env.at("CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM") == "1"); // int -> "1"
  CHECK(m.variables == std::vector<std::string>{"NUMBA_CUDA_USE_NVIDIA_BINDING",
                                                "CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM"});
}

TEST_CASE("exclude drops every cell matching all its keys (partial match)", "[matrix]") {
  auto m = load("exclude", R"(
[axes]
A = ["0", "1"]
B = ["0", "1"]
C = ["x", "y"]
[[exclude]]
A = "1"
B = "0"
)");
  CHECK(m.cells.size() == 6);
  for (const auto &c : m.cells)
    CHECK_FALSE((c.env.at("A") == "1" && c.env.at("B") == "0"));
}

TEST_CASE("include extends compatible cells, adds a new one otherwise, and is never excluded",
          "[matrix]") {
  auto m = load("include", R"(
[axes]
A = ["0", "1"]
B = ["0"]
[[exclude]]
A = "1"
[[include]]
A = "0"
EXTRA = "e"
[[include]]
A = "1"
label = "back"
[[include]]
A = "2"
B = "9"
)");
  // A=0 extended with EXTRA; A=1 re-added after the exclude (new cell, labelled); A=2 new.
  REQUIRE(m.cells.size() == 3);
  CHECK(m.cells[0].env.at("EXTRA") == "e");
  CHECK(m.cells[1].id == "back");
  CHECK(m.cells[1].env.at("A") == "1");
  CHECK_FALSE(m.cells[1].env.at("B").has_value()); // not named by the include: unset
  CHECK(m.cells[2].env.at("B") == "9");
  // Every cell names every matrix variable (so the runner can clean all of them).
  for (const auto &c : m.cells)
    CHECK(c.env.size() == 3);
}

TEST_CASE("an include that would overwrite an axis value makes a new cell", "[matrix]") {
  auto m = load("overwrite", R"(
[axes]
A = ["0"]
LIB = [false]
[[include]]
label = "fallback"
A = "0"
LIB = "/nonexistent.so"
)");
  REQUIRE(m.cells.size() == 2);
  CHECK_FALSE(m.cells[0].env.at("LIB").has_value());
  CHECK(m.cells[1].env.at("LIB") == "/nonexistent.so");
}

TEST_CASE("expectations attach to the cells they match", "[matrix]") {
  auto m = load("expect", R"(
[axes]
A = ["0", "1"]
[[expect]]
when = { A = "1" }
binding = "nvidia"
stream0 = "per-thread"
warnings = ["x"]
warning_count = 1
[[expect.allow]]
cases = ["stream.*"]
outcomes = ["fail", "timeout"]
reason = "known"
link = "https://example.invalid/1"
)");
  CHECK(m.cells[0].expectations.empty());
  REQUIRE(m.cells[1].expectations.size() == 1);
  const auto *x = m.cells[1].expectations[0];
  CHECK(x->binding == "nvidia");
  REQUIRE(x->allow.size() == 1);
  CHECK(x->allow[0].outcomes == std::vector<outcome>{outcome::fail, outcome::timeout});
}

TEST_CASE("placeholders {bin} and {matrix_dir} are substituted", "[matrix]") {
  auto m = load("placeholders", R"(
[axes]
P = ["{matrix_dir}/x", "{bin}/y"]
)");
  CHECK(m.cells[0].env.at("P")->find("cuparity-matrix-tests/x") != std::string::npos);
  CHECK(m.cells[1].env.at("P")->find("{bin}") == std::string::npos);
}

TEST_CASE("every matrix error names file, line and column", "[matrix][errors]") {
  struct bad {
    const char *name, *text, *where, *what;
  };
  const bad cases[] = {
      {"unknown_key", "[axes]\nA = [\"0\"]\n[matrix]\nnmae = \"x\"\n",
       ":4:1:", "unknown key 'nmae'"},
      {"wrong_type", "[axes]\nA = \"0\"\n", ":2:5:", "must be an array"},
      {"value_type", "[axes]\nA = [1.5]\n", ":2:6:", "must be a string, an integer or false"},
      {"empty_axis", "[axes]\nA = []\n", ":2:5:", "has no values"},
      {"empty_product", "[axes]\nA = [\"0\"]\n[[exclude]]\nA = \"0\"\n", ":1:1:", "no cells"},
      {"exclude_nothing", "[axes]\nA = [\"0\"]\nB = [\"0\", \"1\"]\n[[exclude]]\nA = \"7\"\n",
       ":4:1:", "matches no cell"},
      {"expect_nothing",
       "[axes]\nA = [\"0\"]\n[[expect]]\nwhen = { A = \"1\" }\nbinding = \"nvidia\"\n",
       ":3:1:", "matches no cell"},
      {"unknown_case",
       "[axes]\nA = [\"0\"]\n[[expect]]\n[[expect.allow]]\ncases = \"nope.no.case\"\n"
       "outcomes = [\"fail\"]\nreason = \"r\"\n",
       ":5:9:", "names no case"},
      {"bad_outcome",
       "[axes]\nA = [\"0\"]\n[[expect]]\n[[expect.allow]]\ncases = \"x\"\n"
       "outcomes = [\"broken\"]\nreason = \"r\"\n",
       ":6:12:", "unknown outcome 'broken'"},
      {"bad_binding", "[axes]\nA = [\"0\"]\n[[expect]]\nbinding = \"ctypes\"\n",
       ":4:11:", "\"internal\" or \"nvidia\""},
      {"bad_var", "[axes]\nlower = [\"0\"]\n", ":2:1:", "not an environment variable name"},
      {"syntax", "[axes]\nA = [\"0\"\n", ":2:", "parsing array"},
      {"duplicate_value", "[axes]\nA = [\"0\", \"0\"]\n", ":2:11:", "lists a value twice"},
  };
  for (const auto &b : cases) {
    INFO(b.name);
    std::string msg = error_of(b.name, b.text);
    CHECK_THAT(msg,
               Catch::Contains(std::string(b.name) + ".toml" + b.where) && Catch::Contains(b.what));
  }
  CHECK_THAT(error_of("missing", ""), Catch::Contains("no cells"));
  CHECK_THROWS_WITH(load_matrix("/nonexistent/m.toml", any_case), Catch::Contains("no such"));
}

TEST_CASE("the shipped matrices load", "[matrix]") {
  for (const char *name : {"default", "ptds", "smoke", "driver-validation"}) {
    INFO(name);
    auto m =
        load_matrix(std::string(CUPARITY_SOURCE_DIR) + "/matrices/" + name + ".toml", any_case);
    CHECK_FALSE(m.cells.empty());
  }
  auto d = load_matrix(std::string(CUPARITY_SOURCE_DIR) + "/matrices/default.toml", any_case);
  CHECK(d.cells.size() == 18); // 2 x 2 x 3 seed combinations + 3 fallback + 3 garbage cells
}
