// JUnit XML reports (harness/external/junit_report): pytest's and unittest runners' shapes, read
// from a real H200 run, and every way a file can fail to be one.
#include "harness/external/junit_report.hpp"
#include "harness/io/input_file.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

using namespace cuparity;

namespace {

const std::string stored_run =
    std::string(CUPARITY_SOURCE_DIR) + "/reports/runs/2026-12-03-h200-9e2b2e1-numba-junit/";

std::string junit_scratch(const std::string &name, const std::string &text) {
  const auto dir = std::filesystem::temp_directory_path() / "cuparity-junit-tests";
  std::filesystem::create_directories(dir);
  const auto path = (dir / name).string();
  std::ofstream(path) << text;
  return path;
}

std::string refusal(const std::string &text) {
  try {
    (void)parse_junit_report(text, "r.xml");
  } catch (const bad_input_error &e) {
    return e.what();
  }
  return "(read)";
}

} // namespace

TEST_CASE("junit: pytest's report of Numba's driver tests on the H200", "[junit]") {
  // 230 tests: 222 passed, 2 failed (NVVM), 6 skipped (stored gzipped, read as stored). pytest's
  // own count, tests="240", includes the 10 subtests that passed inside them (its summary line).
  const junit_report r = read_junit_report(stored_run + "nv0.xml.gz");
  CHECK(r.declared_tests == 240);
  REQUIRE(r.tests.size() == 230);
  int passed = 0, failed = 0, skipped = 0;
  for (const auto &t : r.tests) {
    passed += t.outcome == junit_outcome::passed;
    failed += t.outcome == junit_outcome::failed;
    skipped += t.outcome == junit_outcome::skipped;
    if (t.outcome == junit_outcome::skipped)
      CHECK_FALSE(t.message.empty()); // the skip's reason
    CHECK_FALSE(t.name.empty());
  }
  CHECK(passed == 222);
  CHECK(failed == 2);
  CHECK(skipped == 6);
  const auto nvvm = std::find_if(r.tests.begin(), r.tests.end(),
                                 [](const junit_test &t) { return t.name == "test_nvvm_support"; });
  REQUIRE(nvvm != r.tests.end());
  CHECK(nvvm->classname == "test_nvvm_driver.TestNvvmDriver");
  CHECK(nvvm->outcome == junit_outcome::failed);
  CHECK_THAT(nvvm->detail, Catch::Contains("NvvmError"));
  CHECK(nvvm->detail.size() <= junit_detail_limit + 64);
  CHECK(nvvm->line > 1);
}

TEST_CASE("junit: a run that collected nothing declares no test", "[junit]") {
  // The NVIDIA binding's cell: pytest could not import the package (exit 4).
  const junit_report r = read_junit_report(stored_run + "nv1.xml");
  CHECK(r.declared_tests == 0);
  CHECK(r.tests.empty());
}

TEST_CASE("junit: a unittest runner's single suite, and the gravest of several results",
          "[junit]") {
  const auto r = read_junit_report(junit_scratch("unittest.xml", R"(<?xml version="1.0"?>
<testsuite name="numba.cuda.tests.cudadrv" tests="4" time="1.5">
  <testcase classname="test_ptds.TestPTDS" name="test_ptds" time="0.25">
    <skipped type="skip" message="only for the internal binding"/>
  </testcase>
  <testcase classname="test_a.A" name="test_ok" time="0.5"><system-out>noise</system-out></testcase>
  <testcase classname="test_a.A" name="test_teardown" time="0.1">
    <failure message="assert 1 == 2">first</failure>
    <error message="teardown raised">second</error>
  </testcase>
  <testsuite name="nested" tests="1">
    <testcase classname="test_b.B" name="test_x[1-2]"><failure message="m">&lt;tb&gt;</failure></testcase>
  </testsuite>
</testsuite>)"));
  CHECK(r.declared_tests == 5);
  REQUIRE(r.tests.size() == 4);
  CHECK(r.tests[0].outcome == junit_outcome::skipped);
  CHECK(r.tests[0].message == "only for the internal binding");
  CHECK(r.tests[0].time_s == Approx(0.25));
  CHECK(r.tests[0].line == 3);
  CHECK(r.tests[1].outcome == junit_outcome::passed);
  CHECK(r.tests[1].message.empty());
  CHECK(r.tests[2].outcome == junit_outcome::errored); // error outranks failure
  CHECK(r.tests[2].message == "teardown raised");
  CHECK(r.tests[2].detail == "second");
  CHECK(r.tests[3].name == "test_x[1-2]");
  CHECK(r.tests[3].detail == "<tb>");
  CHECK(std::string(to_string(junit_outcome::errored)) == "errored");
}

TEST_CASE("junit: a long traceback is cut at a line's end", "[junit]") {
  std::string tb;
  for (int i = 0; i < 500; ++i)
    tb += "  File \"x.py\", line " + std::to_string(i) + "\n";
  const auto r = parse_junit_report(
      "<testsuites><testsuite tests=\"1\"><testcase name=\"t\"><error message=\"e\">" + tb +
          "</error></testcase></testsuite></testsuites>",
      "r.xml");
  REQUIRE(r.tests.size() == 1);
  CHECK(r.tests[0].detail.size() < junit_detail_limit + 64);
  CHECK_THAT(r.tests[0].detail, Catch::EndsWith("(cut at 4096 bytes)"));
  CHECK(r.tests[0].detail.find("line 0\n") != std::string::npos);
}

TEST_CASE("junit: what is not a report is refused, naming the file and the line", "[junit]") {
  CHECK_THAT(refusal("<testsuites><testsuite>\n<testcase name='a'>\n</testsuites>"),
             Catch::StartsWith("r.xml:3: not well-formed XML ("));
  CHECK_THAT(refusal("not xml at all"), Catch::StartsWith("r.xml:1: not well-formed XML"));
  CHECK(refusal("<html><body/></html>") ==
        "r.xml:1: the root element is <html>, not <testsuites> or <testsuite>: not a JUnit report");
  CHECK(refusal("<testsuite>\n\n<testcase classname='c'/></testsuite>") ==
        "r.xml:3: <testcase> without a name");
  CHECK(refusal("<testsuite>\n<testcase name='t' time='-1'/></testsuite>") ==
        "r.xml:2: <testcase> time=\"-1\": not a non-negative number");
  CHECK(refusal("<testsuite tests='many'/>") ==
        "r.xml:1: <testsuite> tests=\"many\": not a non-negative number");
  CHECK(refusal("<testsuite><testcase name='t' time='nan'/></testsuite>") ==
        "r.xml:1: <testcase> time=\"nan\": not a non-negative number");
  // A missing file and a directory are refused by the input-file rules, naming them.
  CHECK_THROWS_WITH(read_junit_report("/nonexistent/junit.xml"),
                    Catch::Contains("/nonexistent/junit.xml"));
  CHECK_THROWS_AS(read_junit_report(std::filesystem::temp_directory_path().string()),
                  bad_input_error);
}

TEST_CASE("junit: suites nested past the limit are refused, without recursing", "[junit]") {
  // 20,000 levels crashed the whole run (SIGSEGV: a recursive walk of the suites).
  std::string deep = "<testsuites>\n";
  for (int i = 0; i < 20000; ++i)
    deep += "<testsuite tests='1'>";
  deep += "<testcase name='t'/>";
  for (int i = 0; i < 20000; ++i)
    deep += "</testsuite>";
  deep += "</testsuites>";
  CHECK(refusal(deep) ==
        "r.xml:2: <testsuite> nested deeper than " + std::to_string(junit_depth_limit) + " levels");
  // Up to the limit is a report.
  std::string fits = "<testsuites>";
  for (int i = 0; i < junit_depth_limit; ++i)
    fits += "<testsuite tests='1'>";
  fits += "<testcase name='t'/>";
  for (int i = 0; i < junit_depth_limit; ++i)
    fits += "</testsuite>";
  fits += "</testsuites>";
  const auto r = parse_junit_report(fits, "r.xml");
  REQUIRE(r.tests.size() == 1);
  CHECK(r.declared_tests == junit_depth_limit);
}

TEST_CASE("junit: lengths the file decides are bounded", "[junit]") {
  const std::string long_name(junit_name_limit + 1, 'n');
  CHECK(refusal("<testsuite>\n<testcase name='" + long_name + "'/></testsuite>") ==
        "r.xml:2: <testcase> name of 4097 bytes (more than 4096)");
  CHECK(refusal("<testsuite><testcase classname='" + long_name + "' name='t'/></testsuite>") ==
        "r.xml:1: <testcase> classname of 4097 bytes (more than 4096)");
  CHECK(refusal("<testsuite tests='1e300'/>") ==
        "r.xml:1: <testsuite> tests=\"1e300\": more than 1000000000000");
  const std::string long_message(100000, 'm');
  const auto r = parse_junit_report("<testsuite><testcase name='t'><failure message='" +
                                        long_message + "'/></testcase></testsuite>",
                                    "r.xml");
  REQUIRE(r.tests.size() == 1);
  CHECK(r.tests[0].message.size() < junit_detail_limit + 64);
}

TEST_CASE("junit: a test id twice in one file is one test, its gravest outcome, not flaky",
          "[junit]") {
  const auto r = parse_junit_report(R"(<testsuites><testsuite tests="4">
<testcase classname="m.C" name="test_a" time="0.5"/>
<testcase classname="m.C" name="test_b"/>
<testcase classname="m.C" name="test_a" time="0.25"><failure message="boom">tb</failure></testcase>
<testcase classname="m.D" name="test_a"/>
</testsuite></testsuites>)",
                                    "r.xml");
  REQUIRE(r.tests.size() == 3); // in the file's order of first sight
  CHECK(r.tests[0].name == "test_a");
  CHECK(r.tests[0].classname == "m.C");
  CHECK(r.tests[0].outcome == junit_outcome::failed);
  CHECK(r.tests[0].message == "boom");
  CHECK(r.tests[0].time_s == Approx(0.25));
  CHECK(r.tests[0].line == 2);
  using entry = std::pair<int, junit_outcome>;
  CHECK(r.tests[0].duplicates ==
        std::vector<entry>{{2, junit_outcome::passed}, {4, junit_outcome::failed}});
  CHECK(r.tests[1].duplicates.empty());
  CHECK(r.tests[2].classname == "m.D"); // another class: another test
  CHECK(r.tests[2].duplicates.empty());
}
