// Reading and writing the files users name: only regular files, whole, never an input.
#include "harness/protocol/input_file.hpp"
#include "harness/protocol/output_file.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace cuparity;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string &name) {
  const fs::path dir = fs::temp_directory_path() / "cuparity-user-files-tests";
  fs::create_directories(dir);
  const fs::path p = dir / name;
  fs::remove_all(p);
  return p;
}

std::string content(const fs::path &p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

} // namespace

TEST_CASE("an output replaces only a regular file, whole", "[files]") {
  const fs::path out = scratch("out.json");
  write_output_file(out, "first\n");
  write_output_file(out, "second\n");
  CHECK(content(out) == "second\n");
  const fs::path fifo = scratch("fifo");
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THROWS_WITH(write_output_file(fifo, "x"), Catch::Contains("not a regular file"));
  CHECK(fs::is_fifo(fifo));
  const fs::path link = scratch("link");
  fs::create_symlink(out, link);
  CHECK_THROWS_WITH(write_output_file(link, "x", "--json"),
                    Catch::StartsWith("--json ") && Catch::Contains("symbolic link"));
  CHECK(content(out) == "second\n");
  const fs::path dir = scratch("dir");
  fs::create_directory(dir);
  CHECK_THROWS_WITH(write_output_file(dir, "x"), Catch::Contains("a directory"));
  CHECK_THROWS_WITH(write_output_file(scratch("none") / "x.json", "x"),
                    Catch::Contains("does not exist"));
  CHECK_THROWS_AS(write_output_file("", "x"), bad_input_error);
  CHECK_THROWS_WITH(refuse_same_file(link, out, "--json"), Catch::Contains("is the input"));
  CHECK_NOTHROW(refuse_same_file(scratch("other.json"), out, "--json"));
  // No temporary file (".out.json.XXXXXX") stays behind.
  for (const auto &e : fs::directory_iterator(out.parent_path()))
    CHECK_FALSE(e.path().filename().string().starts_with(".out.json."));
}

TEST_CASE("an input is a regular file, bounded, and shallow JSON", "[files]") {
  const fs::path fifo = scratch("in-fifo");
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  // Refused before it is opened: a FIFO with no writer would block forever.
  CHECK_THROWS_WITH(read_input_file(fifo, "--map"),
                    Catch::StartsWith("--map ") && Catch::Contains("a FIFO"));
  const fs::path dir = scratch("in-dir");
  fs::create_directory(dir);
  CHECK_THROWS_WITH(read_input_file(dir), Catch::Contains("a directory"));
  CHECK_THROWS_WITH(read_input_file(scratch("absent")), Catch::Contains("No such file"));
  const fs::path big = scratch("big");
  std::ofstream(big) << std::string(100, 'x');
  CHECK_THROWS_WITH(read_input_file(big, "", 99), Catch::Contains("more than the 99"));
  CHECK(read_input_file(big, "", 100).size() == 100);
  CHECK(json_depth(R"({"a": [1, {"b": "[[[["}]})") == 3);
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  CHECK_THROWS_WITH(parse_json_input(deep, "x.json"), Catch::Contains("nested deeper than 256"));
  const std::string ok = std::string(256, '[') + std::string(256, ']');
  CHECK_NOTHROW(parse_json_input(ok, "x.json"));
  CHECK_THROWS_WITH(parse_json_input("[1e400]", "x.json"), Catch::StartsWith("x.json: "));
  CHECK_THROWS_WITH(parse_json_input("[NaN]", "x.json"), Catch::Contains("not valid JSON"));
  CHECK_THROWS_WITH(parse_json_input("[\"\xff\"]", "x.json"), Catch::Contains("not valid JSON"));
}
