// Reading JUnit XML with pugixml (a kept XML parser; the report's own rules are below).
#include "harness/external/junit_report.hpp"

#include "harness/io/input_file.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <pugixml.hpp>
#include <string_view>

namespace cuparity {

const char *to_string(junit_outcome o) noexcept {
  switch (o) {
  case junit_outcome::passed:
    return "passed";
  case junit_outcome::failed:
    return "failed";
  case junit_outcome::errored:
    return "errored";
  case junit_outcome::skipped:
    return "skipped";
  }
  return "passed";
}

namespace {

/// Where a node is, for messages: "<where>:<line>".
class junit_locator {
public:
  junit_locator(const std::string &text, const std::string &where) : m_text(text), m_where(where) {}
  [[nodiscard]] int line_of(std::ptrdiff_t offset) const {
    const auto end = m_text.begin() + std::clamp<std::ptrdiff_t>(offset, 0, m_text.size());
    return 1 + static_cast<int>(std::count(m_text.begin(), end, '\n'));
  }
  [[nodiscard]] bad_input_error error(std::ptrdiff_t offset, const std::string &problem) const {
    return bad_input_error(m_where + ":" + std::to_string(line_of(offset)) + ": " + problem);
  }

private:
  const std::string &m_text;
  const std::string &m_where;
};

/// A non-negative finite number from an attribute (absent: 0).
double junit_number(const pugi::xml_node &node, const char *attribute, const junit_locator &at) {
  const pugi::xml_attribute a = node.attribute(attribute);
  if (!a)
    return 0;
  const std::string_view text = a.value();
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value) || value < 0)
    throw at.error(node.offset_debug(), std::string("<") + node.name() + "> " + attribute + "=\"" +
                                            std::string(text) + "\": not a non-negative number");
  return value;
}

int junit_rank(junit_outcome o) {
  switch (o) {
  case junit_outcome::errored:
    return 3;
  case junit_outcome::failed:
    return 2;
  case junit_outcome::skipped:
    return 1;
  case junit_outcome::passed:
    break;
  }
  return 0;
}

/// The element's text, bounded: cut at the last line end before the limit.
std::string junit_bounded_text(const pugi::xml_node &element) {
  std::string text = element.text().get();
  if (text.size() <= junit_detail_limit)
    return text;
  const auto cut = text.rfind('\n', junit_detail_limit);
  text.resize(cut == std::string::npos || cut == 0 ? junit_detail_limit : cut);
  return text + "\n... (cut at " + std::to_string(junit_detail_limit) + " bytes)";
}

junit_test junit_testcase(const pugi::xml_node &node, const junit_locator &at) {
  junit_test t;
  t.line = at.line_of(node.offset_debug());
  t.classname = node.attribute("classname").value();
  t.name = node.attribute("name").value();
  if (t.name.empty())
    throw at.error(node.offset_debug(), "<testcase> without a name");
  t.time_s = junit_number(node, "time", at);
  for (const pugi::xml_node &child : node.children()) {
    const std::string_view kind = child.name();
    junit_outcome o = junit_outcome::passed;
    if (kind == "failure")
      o = junit_outcome::failed;
    else if (kind == "error")
      o = junit_outcome::errored;
    else if (kind == "skipped")
      o = junit_outcome::skipped;
    else
      continue; // system-out, system-err, properties: not an outcome
    if (junit_rank(o) > junit_rank(t.outcome)) {
      t.outcome = o;
      t.message = child.attribute("message").value();
      t.detail = junit_bounded_text(child);
    }
  }
  return t;
}

void junit_suite(const pugi::xml_node &suite, const junit_locator &at, junit_report &out) {
  out.declared_tests += static_cast<long>(junit_number(suite, "tests", at));
  for (const pugi::xml_node &child : suite.children()) {
    const std::string_view kind = child.name();
    if (kind == "testcase")
      out.tests.push_back(junit_testcase(child, at));
    else if (kind == "testsuite")
      junit_suite(child, at, out);
  }
}

} // namespace

junit_report parse_junit_report(const std::string &text, const std::string &where) {
  const junit_locator at(text, where);
  pugi::xml_document doc;
  // pugixml expands only the five predefined entities and character references (it reads no DTD),
  // so a report cannot make it expand anything of its own (no billion laughs).
  const pugi::xml_parse_result parsed = doc.load_buffer(text.data(), text.size());
  if (!parsed)
    throw at.error(parsed.offset,
                   std::string("not well-formed XML (") + parsed.description() + ")");
  const pugi::xml_node root = doc.document_element();
  const std::string_view name = root.name();
  if (name != "testsuites" && name != "testsuite")
    throw at.error(root.offset_debug(),
                   "the root element is <" + std::string(name) +
                       ">, not <testsuites> or <testsuite>: not a JUnit report");
  junit_report out;
  if (name == "testsuite")
    junit_suite(root, at, out);
  else
    for (const pugi::xml_node &suite : root.children("testsuite"))
      junit_suite(suite, at, out);
  return out;
}

junit_report read_junit_report(const std::string &path) {
  return parse_junit_report(read_input_file(path, "JUnit report"), path);
}

} // namespace cuparity
