// The packages axis' values and the [packages] table (docs/matrices.md#the-packages-axis).
#include "harness/matrix/package_keys.hpp"

#include "harness/matrix/placeholders.hpp"
#include "harness/matrix/text.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

namespace cuparity::matrix_detail {
namespace {

bool blank(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0;
}

/// One requirement without its blanks ("cuda-bindings >= 13" is "cuda-bindings>=13"; PEP 508
/// needs none outside markers). A marker (';') is refused: an axis value is installed as written,
/// on the one interpreter of the run, so a condition on the interpreter would only hide a value.
/// Where one word of a requirement ends and the next begins a second requirement: the next
/// starts with a letter (a name) and this one ends a name, a version, an extra or a version list
/// ("numpy==2.4.6 pytest==8.4.2", "numpy pytest"); after an operator ("pkg === foo") or an `@`
/// ("pkg @ https://...") the next word is still this requirement's. Losing the blank between
/// them would make one name of two ("numpy==2.4.6pytest==8.4.2"), which only the installer
/// would then refuse, in every cell.
std::optional<std::pair<std::string, std::string>> two_requirements(const std::string &written) {
  std::vector<std::string> words;
  for (std::size_t at = 0; at < written.size();) {
    const std::size_t from =
        std::find_if_not(written.begin() + at, written.end(), blank) - written.begin();
    const std::size_t to =
        std::find_if(written.begin() + from, written.end(), blank) - written.begin();
    if (to > from)
      words.push_back(written.substr(from, to - from));
    at = to;
  }
  const auto ends_one = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '*' || c == ']' || c == ')';
  };
  for (std::size_t i = 1; i < words.size(); ++i)
    if (std::isalpha(static_cast<unsigned char>(words[i].front())) && ends_one(words[i - 1].back()))
      return std::make_pair(words[i - 1], words[i]);
  return std::nullopt;
}

std::string requirement(const toml_reader &r, const toml::node &n) {
  std::string written = r.string_of(n, "packages value");
  if (const auto two = two_requirements(written))
    r.error(n, "packages: " + in_quotes(written) + " holds two requirements (" +
                   in_quotes(two->first) + " then " + in_quotes(two->second) +
                   "); give a value of several as an array, one string each: [\"" + two->first +
                   "\", \"" + two->second + "\", ...]");
  std::string out;
  std::copy_if(written.begin(), written.end(), std::back_inserter(out),
               [](char c) { return !blank(c); });
  if (out.empty())
    r.error(n, "packages: a requirement is empty");
  if (first_control(out))
    r.error(n, "packages: " + in_quotes(written) + " holds a control character");
  if (out.find(';') != std::string::npos)
    r.error(n, "packages: " + in_quotes(written) +
                   " has an environment marker; an axis value is installed as written (drop "
                   "the '; ...')");
  if (out.front() == '-')
    r.error(n, "packages: " + in_quotes(written) +
                   " is an installer option, not a requirement (options go in [packages])");
  return out;
}

std::string folder_path(const key_value &v, const std::string &written) {
  if (auto p = unknown_placeholder(written))
    v.fail("unknown placeholder " + *p + " (known: {bin}, {matrix_dir})");
  std::filesystem::path f = substitute_placeholders(written, v.context().reader.dir());
  if (f.empty())
    v.fail("is empty");
  if (f.is_relative())
    f = std::filesystem::path(v.context().reader.dir()) / f;
  return f.lexically_normal().string();
}

/// A folder that is not there is left to the installer (the wheels may be built after `list`);
/// a file in its place can never be one.
void set_find_links(package_settings &p, const key_value &v) {
  for (const auto &written : v.get<std::vector<std::string>>()) {
    const std::string f = folder_path(v, written);
    std::error_code ec;
    if (std::filesystem::exists(f, ec) && !std::filesystem::is_directory(f, ec))
      v.fail(f + " is not a folder (find_links names folders of wheels)");
    p.find_links.push_back(f);
  }
}

void set_index_url(package_settings &p, const key_value &v) {
  const std::string url = v.get<std::string>();
  if (!url.starts_with("https://") && !url.starts_with("http://") && !url.starts_with("file://"))
    v.fail(in_quotes(url) + " is no index URL (https://, http:// or file://)");
  p.index_url = url;
}

void set_python(package_settings &p, const key_value &v) {
  p.python = v.get<std::string>();
  if (p.python.empty() || std::any_of(p.python.begin(), p.python.end(), blank))
    v.fail(in_quotes(p.python) + " is no interpreter (a name on PATH or a path)");
}

void set_cache(package_settings &p, const key_value &v) {
  p.cache = folder_path(v, v.get<std::string>());
}

} // namespace

env_value package_value(const toml_reader &r, const toml::node &n) {
  if (n.is_boolean() && !*n.value<bool>())
    return std::nullopt;
  if (n.is_string())
    return requirement(r, n);
  const toml::array *a = n.as_array();
  if (!a)
    r.error(n, "packages: a value must be a requirement, an array of requirements or false "
               "(nothing installed), not " +
                   toml_reader::type_name(n));
  if (a->empty())
    r.error(n, "packages: an empty array installs nothing; write false for the site's own");
  std::string joined;
  for (const auto &e : *a)
    joined += (joined.empty() ? "" : " ") + requirement(r, e);
  return joined;
}

std::vector<std::string> package_requirements(const std::string &value) {
  std::vector<std::string> out;
  for (std::size_t at = 0; at < value.size();) {
    const std::size_t end = std::min(value.find(' ', at), value.size());
    if (end > at)
      out.push_back(value.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

const key_table<package_settings> &package_keys() {
  using p = package_settings;
  static const key_table<p> keys{
      "[packages]",
      "packages",
      {
          {"find_links", texts(), set_find_links,
           "folders of wheels the values are installed from ({matrix_dir} substituted); alone, "
           "no index is asked (offline)"},
          {"index_url", text(), set_index_url, "an index to install from (https://, file://)"},
          {"installer", choice({"auto", "uv", "pip"}), assign<&p::installer>,
           "uv (uv pip install --target), pip (python -m pip install --target), or auto: uv "
           "where it is on PATH, else pip"},
          {"python", text(), set_python,
           "the interpreter the environments are for (default: python3)"},
          {"cache", text(), set_cache,
           "folder the environments are kept in (default: $XDG_CACHE_HOME/cuparity/packages)"},
          {"no_deps", flag(), assign<&p::no_deps>,
           "install only the named requirements; the rest comes from the site (default: true)"},
      }};
  return keys;
}

void read_packages(const read_context &ctx, const document_sections &s, matrix &m) {
  const std::string axis(package_axis);
  const bool named = m.variable_at.count(axis) > 0;
  if (s.packages && !named)
    ctx.reader.error(*s.packages, "[packages] installs the values of a `packages` axis, and no "
                                  "cell has one (packages = [\"name==version\", ...] in [axes])");
  if (!named)
    return;
  package_settings p;
  p.where = s.packages ? ctx.reader.at(*s.packages) : m.variable_at.at(axis);
  if (s.packages)
    read_keys(ctx, *s.packages, package_keys(), p);
  m.packages = std::move(p);
}

} // namespace cuparity::matrix_detail
