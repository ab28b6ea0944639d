// junit.xml's suites, built as XML elements (escaping happens once, in the XML writer).
#include "harness/report/junit_writer.hpp"

#include "harness/report/binding_text.hpp"
#include "harness/report/record_view.hpp"
#include "harness/report/summary.hpp"
#include "harness/report/xml_writer.hpp"

#include <algorithm>
#include <set>

namespace cuparity {
namespace {

using case_key = std::pair<std::string, std::string>; ///< (cell, case)

/// A failure's message attribute is cut to this; its text keeps the whole message.
constexpr std::size_t message_chars = 200;

struct totals {
  std::size_t tests = 0, failures = 0, skipped = 0;
  void add(const totals &t) { tests += t.tests, failures += t.failures, skipped += t.skipped; }
};

/// Every (cell, case) that has problems, with their messages one per line.
std::map<case_key, std::string> case_failures(const comparison &c) {
  std::map<case_key, std::string> out;
  for (const auto &p : c.problems)
    if (!p.case_id.empty())
      out[{p.cell, p.case_id}] += (out.count({p.cell, p.case_id}) ? "\n" : "") + p.message;
  return out;
}

xml_element failure(const std::string &type, const std::string &message,
                    const std::string &detail) {
  xml_element f("failure");
  f.attribute("type", type).attribute("message", message).text(detail);
  return f;
}

/// A suite's opening attributes; only the cell suites carry a time.
xml_element testsuite(const std::string &name, const totals &t) {
  xml_element s("testsuite");
  s.attribute("name", name)
      .attribute("tests", t.tests)
      .attribute("failures", t.failures)
      .attribute("errors", "0")
      .attribute("skipped", t.skipped);
  return s;
}

void add_property(xml_element &props, const std::string &name, const std::string &value) {
  props.add(xml_element("property"))
      .attribute("name", name)
      .attribute("value", value)
      .self_closing();
}

/// "name==version ..." of the distributions installed for `cell_id` (provenance.packages.cells),
/// "" when there are none.
std::string installed_packages(const nlohmann::json &provenance, const std::string &cell_id) {
  const auto *cells = provenance.is_object() && provenance.contains("packages") &&
                              provenance["packages"].is_object() &&
                              provenance["packages"].contains("cells")
                          ? &provenance["packages"]["cells"]
                          : nullptr;
  if (!cells || !cells->is_object() || !cells->contains(cell_id))
    return "";
  const nlohmann::json &entry = (*cells)[cell_id];
  if (!entry.is_object() || !entry.contains("distributions") || !entry["distributions"].is_object())
    return "";
  std::string out;
  for (const auto &[name, version] : entry["distributions"].items())
    out += (out.empty() ? "" : " ") + name +
           "==" + (version.is_string() ? version.get<std::string>() : version.dump());
  return out;
}

/// What a CI's test view shows of the cell under fixed names (GitLab and Buildkite read the
/// properties, not summary.json): the binding and null-stream mode the cell's process decided,
/// its driver, and its packages value with what was installed for it.
void cell_properties(xml_element &props, const matrix &m, const cell &mc,
                     const nlohmann::json &cell_record, const nlohmann::json &provenance) {
  const nlohmann::json config = cell_record.value("config", nlohmann::json::object());
  const auto text = [](const nlohmann::json &j, const char *key) {
    return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
  };
  add_property(props, "cuparity.binding", text(config, "binding"));
  add_property(props, "cuparity.stream0", text(config, "stream0"));
  add_property(props, "cuparity.driver", text(config, "driver_path"));
  const nlohmann::json driver = cell_record.value("driver", nlohmann::json::object());
  if (const std::string version = text(driver, "driver_version_text"); !version.empty())
    add_property(props, "cuparity.driver_version", version);
  const bool simulated = config.is_object() && config.value("simulated", false);
  add_property(props, "cuparity.simulated", simulated ? "true" : "false");
  if (!m.packages)
    return;
  const auto value = mc.env.find(m.packages->axis);
  add_property(props, "cuparity.packages",
               value != mc.env.end() && value->second ? *value->second : "");
  add_property(props, "cuparity.packages.installed", installed_packages(provenance, mc.id));
}

xml_element properties(const matrix &m, const cell &mc, const nlohmann::json &cell_record,
                       const nlohmann::json &provenance) {
  xml_element props("properties");
  for (const auto &[k, v] : mc.env)
    add_property(props, "env." + k, v ? *v : "<unset>");
  const nlohmann::json config = cell_record.value("config", nlohmann::json::object());
  for (const auto &[k, v] : config.items())
    add_property(props, "config." + k, v.is_string() ? v.get<std::string>() : v.dump());
  cell_properties(props, m, mc, cell_record, provenance);
  return props;
}

/// One case of one cell: a failure when a problem names it, skipped when not supported or set
/// aside (its suite's environment was broken in the cell: the `environment` problem fails the run).
xml_element case_testcase(const std::string &case_id, const nlohmann::json &rec,
                          const std::string *problems, bool set_aside, totals &t) {
  const double ms = rec.value("duration_ms", 0.0);
  const std::string o = rec.value("outcome", "error");
  xml_element tc("testcase");
  tc.attribute("classname", "cuparity." + case_id.substr(0, case_id.find('.')))
      .attribute("name", case_id)
      .attribute("time", ms / 1000);
  ++t.tests;
  if (problems) {
    ++t.failures;
    tc.add(failure(o, problems->substr(0, message_chars), *problems));
  } else if (o == "not_supported" || set_aside) {
    ++t.skipped;
    const std::string why = set_aside ? "not run as written (its suite's environment is broken in "
                                        "this cell): " +
                                            rec.value("message", "")
                                      : rec.value("message", "");
    tc.add(xml_element("skipped")).attribute("message", why).self_closing();
  }
  return tc;
}

/// The suite of a started cell; the pairs shown as failures are added to `reported`.
xml_element cell_suite(const matrix &m, const cell &mc, const cell_view &view,
                       const nlohmann::json &provenance,
                       const std::map<case_key, std::string> &failures,
                       const std::set<case_key> &set_aside, std::set<case_key> &reported,
                       totals &all) {
  totals t;
  double seconds = 0;
  std::vector<xml_element> cases;
  for (const auto &[case_id, rec] : view.cases) {
    seconds += rec.value("duration_ms", 0.0) / 1000;
    auto fit = failures.find({mc.id, case_id});
    if (fit != failures.end())
      reported.insert(fit->first);
    cases.push_back(case_testcase(case_id, rec, fit == failures.end() ? nullptr : &fit->second,
                                  set_aside.count({mc.id, case_id}) > 0, t));
  }
  all.add(t);
  xml_element suite = testsuite(mc.id, t);
  suite.attribute("time", seconds);
  suite.add(properties(m, mc, view.record, provenance));
  for (auto &tc : cases)
    suite.add(std::move(tc));
  return suite;
}

/// A testcase of a synthetic suite (equivalence, run) that consists of one failure.
xml_element failing_testcase(const std::string &classname, const std::string &name,
                             const std::string &type, const std::string &message,
                             const std::string &detail) {
  xml_element tc("testcase");
  tc.attribute("classname", classname).attribute("name", name);
  tc.add(failure(type, message, detail));
  return tc;
}

/// A synthetic suite whose every testcase fails.
xml_element failing_suite(const std::string &name, std::vector<xml_element> testcases,
                          totals &all) {
  const totals t{testcases.size(), testcases.size(), 0};
  all.add(t);
  xml_element suite = testsuite(name, t);
  for (auto &tc : testcases)
    suite.add(std::move(tc));
  return suite;
}

/// Changes against the reference that do not fail the run: one passing testcase each, the change
/// in its output, so a CI's junit view lists them (with fail_on_change those no known change
/// accepts are problems, and only the known ones are listed here).
xml_element changes_suite(const comparison &c, bool fail_on_change, totals &all) {
  std::vector<const reference_change *> listed;
  for (const auto &change : c.changes)
    if (!fail_on_change || !change.known.empty())
      listed.push_back(&change);
  const totals t{listed.size(), 0, 0};
  all.add(t);
  xml_element suite = testsuite("changes against the reference", t);
  for (const reference_change *ch : listed) {
    const reference_change &change = *ch;
    xml_element tc("testcase");
    tc.attribute("classname", "cuparity.reference." + change.cell)
        .attribute("name", (change.case_id.empty() ? "" : change.case_id + " ") + change.key);
    xml_element out("system-out");
    out.text(change_text(change) + (change.known.empty() ? "" : " (known: " + change.known + ")"));
    tc.add(std::move(out));
    suite.add(std::move(tc));
  }
  return suite;
}

std::vector<xml_element> divergence_testcases(const comparison &c) {
  std::vector<xml_element> out;
  for (const auto &d : c.divergences) {
    std::string detail;
    for (const auto &[cell, v] : d.values)
      detail += cell + ": " + v.dump() + "\n";
    for (const auto &line : binding_difference_lines(d))
      detail += "bound apart: " + line + "\n";
    out.push_back(failing_testcase("cuparity.equivalence", d.case_id + " " + d.key, "divergence",
                                   d.key + " differs in group " + d.group, detail));
  }
  return out;
}

/// Problems no case testcase carries (a cell that never started, a configuration expectation, a
/// stale expectation or baseline line): without these a CI reading only junit.xml would see a
/// failed run as green.
std::vector<xml_element> unattached_testcases(const comparison &c,
                                              const std::set<case_key> &reported) {
  std::vector<xml_element> out;
  for (const auto &p : c.problems) {
    if (!p.case_id.empty() && reported.count({p.cell, p.case_id}))
      continue;
    std::string name = p.kind;
    if (!p.cell.empty())
      name += " [" + p.cell + "]";
    if (!p.case_id.empty())
      name += " " + p.case_id;
    out.push_back(failing_testcase("cuparity.run", name, p.kind, p.message.substr(0, message_chars),
                                   p.message));
  }
  // An incomplete run must not read as green to a CI that counts only failing testcases.
  if (!c.coverage.complete()) {
    const std::string why = coverage_message(c.coverage);
    out.push_back(failing_testcase("cuparity.run", "coverage", "incomplete",
                                   why.substr(0, message_chars), why));
  }
  return out;
}

} // namespace

std::string junit_xml(const matrix &m, const std::vector<nlohmann::json> &records,
                      const comparison &c, const nlohmann::json &provenance) {
  const auto cells = by_cell(records);
  const auto failures = case_failures(c);
  std::set<case_key> reported; // (cell, case) shown as a failure of its testcase
  totals all;
  std::vector<xml_element> suites;
  for (const auto &mc : m.cells)
    if (auto it = cells.find(mc.id); it != cells.end())
      suites.push_back(
          cell_suite(m, mc, it->second, provenance, failures, c.set_aside, reported, all));
  if (!c.divergences.empty())
    suites.push_back(failing_suite("equivalence", divergence_testcases(c), all));
  if (auto unattached = unattached_testcases(c, reported); !unattached.empty())
    suites.push_back(failing_suite("run", std::move(unattached), all));
  if (std::any_of(c.changes.begin(), c.changes.end(), [&](const reference_change &ch) {
        return !m.fail_on_change || !ch.known.empty();
      }))
    suites.push_back(changes_suite(c, m.fail_on_change, all));
  xml_element root("testsuites");
  root.attribute("name", "cuparity " + m.name)
      .attribute("tests", all.tests)
      .attribute("failures", all.failures)
      .attribute("errors", "0")
      .attribute("skipped", all.skipped);
  for (auto &s : suites)
    root.add(std::move(s));
  return xml_document(root);
}

std::string junit_writer::text(const run_outputs &run) const {
  return junit_xml(run.m, run.records, run.verdict, run.facts.provenance);
}

void write_junit(const std::string &path, const matrix &m,
                 const std::vector<nlohmann::json> &records, const comparison &c,
                 const run_facts &facts) {
  junit_writer(path).write({m, records, c, facts});
}

} // namespace cuparity
