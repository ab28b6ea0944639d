// Reading and writing the files users name: only regular files, whole, never an input.
#include "harness/io/input_file.hpp"
#include "harness/io/output_file.hpp"

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

// ---- gzip inputs: stored runs keep summary.json.gz and results.jsonl.gz

#include "harness/io/gzip_input.hpp"
#include "harness/protocol/results.hpp"
#include "test_support.hpp"

#include <zlib.h>

namespace {

/// Writes `text` to `path` gzipped, in `members` gzip members (as `cat a.gz b.gz` makes).
void write_gz(const fs::path &path, const std::string &text, int members = 1) {
  std::ofstream(path, std::ios::trunc).close();
  const std::size_t step = (text.size() + members - 1) / members;
  for (int m = 0; m < members; ++m) {
    gzFile g = gzopen(path.c_str(), "ab");
    REQUIRE(g != nullptr);
    const std::string part = text.substr(std::min(text.size(), m * step), step);
    REQUIRE(gzwrite(g, part.data(), static_cast<unsigned>(part.size())) ==
            static_cast<int>(part.size()));
    gzclose(g);
  }
}

} // namespace

TEST_CASE("a gzipped input reads as the text inside; a damaged one is refused, named",
          "[files][gzip]") {
  const std::string text = "{\"a\": [1, 2, 3], \"b\": \"" + std::string(100000, 'x') + "\"}\n";
  const fs::path one = scratch("one.json.gz"), two = scratch("two.json.gz");
  write_gz(one, text);
  write_gz(two, text, 3);
  CHECK(read_input_file(one) == text);
  CHECK(read_input_file(two) == text); // several members are joined
  CHECK(read_json_file(one)["a"].size() == 3);
  // Inflating past the bound is refused like a file past it.
  CHECK_THROWS_WITH(read_input_file(one, "", 1000),
                    Catch::Contains("inflates to more than the 1000 bytes"));
  // Cut short, or with its bytes changed: refused with the file's name, never half-read.
  std::string bytes = content(one);
  const fs::path cut = scratch("cut.json.gz"), bad = scratch("bad.json.gz");
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  CHECK_THROWS_WITH(read_input_file(cut),
                    Catch::StartsWith(cut.string() + ": ") && Catch::Contains("ends early"));
  bytes[bytes.size() / 2] ^= 0x55;
  bytes[bytes.size() / 2 + 1] ^= 0x55;
  std::ofstream(bad, std::ios::binary) << bytes;
  CHECK_THROWS_AS(read_input_file(bad), bad_input_error);
  CHECK_THROWS_WITH(read_input_file(bad), Catch::StartsWith(bad.string() + ": "));
  // Plain text that merely starts like gzip is no gzip stream either.
  const fs::path fake = scratch("fake.json");
  std::ofstream(fake, std::ios::binary) << "\x1f\x8b not really";
  CHECK_THROWS_WITH(read_input_file(fake), Catch::Contains("not a valid gzip stream"));
}

TEST_CASE("a stored run with gzipped summary and results is compared and merged as stored",
          "[files][gzip]") {
  const fs::path a = scratch("run-a"), b = scratch("run-b"), merged = scratch("run-merged");
  const auto run = test::run_cuparity(
      {"run", CUPARITY_SOURCE_DIR "/matrices/smoke.toml", "--out", a.string(), "--no-latency"},
      {{var::driver, CUPARITY_SIMDRIVER}});
  INFO(run.out << run.err);
  REQUIRE(run.exit_code == 0);
  fs::create_directories(b);
  write_gz(b / "summary.json.gz", content(a / "summary.json"));
  write_gz(b / "results.jsonl.gz", content(a / "results.jsonl"));
  CHECK(read_results(stored_run_file(b.string(), "results.jsonl")).records.size() ==
        read_results((a / "results.jsonl").string()).records.size());
  const auto cmp = test::run_cuparity({"compare", a.string(), b.string()}, {});
  INFO(cmp.out << cmp.err);
  CHECK(cmp.exit_code == 0);
  CHECK_THAT(cmp.out, Catch::Contains("observations: none changed"));
  CHECK_THAT(cmp.out, Catch::Contains("binding entries: none changed")); // the maps were read
  const auto m = test::run_cuparity(
      {"merge", CUPARITY_SOURCE_DIR "/matrices/smoke.toml", b.string(), "-o", merged.string()},
      {{var::driver, CUPARITY_SIMDRIVER}});
  INFO(m.out << m.err);
  CHECK(m.exit_code == 0);
  CHECK(fs::is_regular_file(merged / "summary.json"));
  // A damaged stored summary is bad input naming it, and nothing is written.
  std::ofstream(b / "summary.json.gz", std::ios::binary) << "\x1f\x8b\x08 damaged";
  const auto broken = test::run_cuparity({"compare", a.string(), b.string()}, {});
  CHECK(broken.exit_code == 2);
  CHECK_THAT(broken.err, Catch::Contains("summary.json.gz"));
}
