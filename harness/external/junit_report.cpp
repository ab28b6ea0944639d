// Reading JUnit XML with pugixml (a kept XML parser; the report's own rules are below).
#include "harness/external/junit_report.hpp"

#include "harness/io/input_file.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
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

/// Where a node is, for messages: "<where>:<line>". Lines are counted on from the last offset
/// asked (the walk asks in the file's order), so a report of a million tests is read once, not
/// once per test.
class junit_locator {
public:
  junit_locator(const std::string &text, const std::string &where) : m_text(text), m_where(where) {}
  [[nodiscard]] int line_of(std::ptrdiff_t offset) const {
    offset = std::clamp<std::ptrdiff_t>(offset, 0, static_cast<std::ptrdiff_t>(m_text.size()));
    if (offset < m_offset) {
      m_offset = 0;
      m_line = 1;
    }
    m_line +=
        static_cast<int>(std::count(m_text.begin() + m_offset, m_text.begin() + offset, '\n'));
    m_offset = offset;
    return m_line;
  }
  [[nodiscard]] bad_input_error error(std::ptrdiff_t offset, const std::string &problem) const {
    return bad_input_error(m_where + ":" + std::to_string(line_of(offset)) + ": " + problem);
  }

private:
  const std::string &m_text;
  const std::string &m_where;
  mutable std::ptrdiff_t m_offset = 0;
  mutable int m_line = 1;
};

/// A non-negative finite number from an attribute (absent: 0), at most `most`.
double junit_number(const pugi::xml_node &node, const char *attribute, const junit_locator &at,
                    double most = HUGE_VAL) {
  const pugi::xml_attribute a = node.attribute(attribute);
  if (!a)
    return 0;
  const std::string_view text = a.value();
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  const std::string quoted = std::string("<") + node.name() + "> " + attribute + "=\"" +
                             std::string(text.substr(0, 64)) + (text.size() > 64 ? "...\"" : "\"");
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value) || value < 0)
    throw at.error(node.offset_debug(), quoted + ": not a non-negative number");
  if (value > most)
    throw at.error(node.offset_debug(), quoted + ": more than " + std::to_string(long(most)));
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

/// Text kept from the file, bounded: cut at the last line end before the limit.
std::string junit_bounded(std::string text) {
  if (text.size() <= junit_detail_limit)
    return text;
  const auto cut = text.rfind('\n', junit_detail_limit);
  text.resize(cut == std::string::npos || cut == 0 ? junit_detail_limit : cut);
  return text + "\n... (cut at " + std::to_string(junit_detail_limit) + " bytes)";
}

/// A name attribute: an id, so never cut, but refused past junit_name_limit bytes.
std::string junit_name(const pugi::xml_node &node, const char *attribute, const junit_locator &at) {
  std::string value = node.attribute(attribute).value();
  if (value.size() > junit_name_limit)
    throw at.error(node.offset_debug(), "<testcase> " + std::string(attribute) + " of " +
                                            std::to_string(value.size()) + " bytes (more than " +
                                            std::to_string(junit_name_limit) + ")");
  return value;
}

junit_test junit_testcase(const pugi::xml_node &node, const junit_locator &at) {
  junit_test t;
  t.line = at.line_of(node.offset_debug());
  t.classname = junit_name(node, "classname", at);
  t.name = junit_name(node, "name", at);
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
      t.message = junit_bounded(child.attribute("message").value());
      t.detail = junit_bounded(child.text().get());
    }
  }
  return t;
}

/// The largest count a <testsuite> may declare: far above any real suite, and a sum of many
/// stays inside a long.
constexpr double junit_count_limit = 1e12;

void junit_declared(const pugi::xml_node &suite, const junit_locator &at, junit_report &out) {
  out.declared_tests += static_cast<long>(junit_number(suite, "tests", at, junit_count_limit));
  out.declared_tests = std::min<long>(out.declared_tests, 1L << 62);
}

/// The tests of `top` and of the suites inside it, in the file's order, walked with a stack of
/// its own (no recursion: the file decides how deep it nests, up to junit_depth_limit levels).
void junit_suite(const pugi::xml_node &top, int top_depth, const junit_locator &at,
                 junit_report &out) {
  junit_declared(top, at, out);
  std::vector<pugi::xml_node> next{top.first_child()}; // per open suite: its next child
  while (!next.empty()) {
    const pugi::xml_node child = next.back();
    if (!child) {
      next.pop_back();
      continue;
    }
    next.back() = child.next_sibling();
    const std::string_view kind = child.name();
    if (kind == "testcase") {
      out.tests.push_back(junit_testcase(child, at));
    } else if (kind == "testsuite") {
      if (top_depth + static_cast<int>(next.size()) > junit_depth_limit)
        throw at.error(child.offset_debug(), "<testsuite> nested deeper than " +
                                                 std::to_string(junit_depth_limit) + " levels");
      junit_declared(child, at, out);
      next.push_back(child.first_child());
    }
  }
}

/// One test per id: a later <testcase> of an id already seen is folded into the first, the
/// gravest outcome standing for both (junit_test::duplicates says why this is no flakiness).
void junit_fold_duplicates(junit_report &r) {
  std::map<std::pair<std::string_view, std::string_view>, std::size_t> first;
  std::vector<junit_test> kept;
  std::vector<std::size_t> where(r.tests.size());
  for (std::size_t i = 0; i < r.tests.size(); ++i) {
    const auto [it, added] = first.emplace(
        std::pair<std::string_view, std::string_view>(r.tests[i].classname, r.tests[i].name), i);
    where[i] = added ? kept.size() : where[it->second];
    if (added) {
      kept.push_back(r.tests[i]);
      continue;
    }
    junit_test &t = kept[where[i]];
    if (t.duplicates.empty())
      t.duplicates.emplace_back(t.line, t.outcome);
    const junit_test &again = r.tests[i];
    t.duplicates.emplace_back(again.line, again.outcome);
    if (junit_rank(again.outcome) > junit_rank(t.outcome)) {
      t.outcome = again.outcome;
      t.message = again.message;
      t.detail = again.detail;
      t.time_s = again.time_s;
    }
  }
  r.tests = std::move(kept);
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
    junit_suite(root, 1, at, out);
  else
    for (const pugi::xml_node &suite : root.children("testsuite"))
      junit_suite(suite, 1, at, out);
  junit_fold_duplicates(out);
  return out;
}

junit_report read_junit_report(const std::string &path) {
  return parse_junit_report(read_input_file(path, "JUnit report"), path);
}

} // namespace cuparity
