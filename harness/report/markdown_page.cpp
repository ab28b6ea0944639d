// The budget is counted in bytes, as GitHub counts its step-summary cap.
#include "harness/report/markdown_page.hpp"

#include <cstdio>

namespace cuparity {

markdown_page::markdown_page(std::size_t budget, std::size_t reserve)
    : m_budget(budget), m_reserve(reserve < budget ? reserve : budget) {}

bool markdown_page::add(std::string_view lines) {
  if (m_full || m_text.size() + lines.size() + 1 + m_reserve > m_budget) {
    m_full = true;
    return false;
  }
  m_text.append(lines);
  m_text += '\n';
  return true;
}

void markdown_page::note(std::string_view line) {
  if (m_text.size() + 1 > m_budget)
    return;
  const std::size_t room = m_budget - m_text.size() - 1;
  std::size_t cut = line.size() <= room ? line.size() : room;
  while (cut > 0 && cut < line.size() && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80)
    --cut; // never half a UTF-8 sequence
  m_text.append(line.substr(0, cut));
  m_text += '\n';
}

void markdown_page::table(std::string_view heading, std::string_view header, std::size_t count,
                          const std::function<std::string(std::size_t)> &row,
                          std::string_view what) {
  if (count == 0)
    return;
  std::string separator = "|";
  for (std::size_t i = 1; i < header.size(); ++i)
    if (header[i] == '|')
      separator += "---|";
  std::size_t shown = 0;
  if (add(std::string("\n") + std::string(heading) + "\n\n" + std::string(header) + "\n" +
          separator))
    while (shown < count && add(row(shown)))
      ++shown;
  if (shown == count)
    return;
  m_left_out += count - shown;
  const std::string n = std::to_string(count - shown);
  note(std::string("\n_") + (shown ? "…and " + n + " more " : n + " ") + std::string(what) +
       " not listed here, to keep this page under GitHub's 1 MiB step-summary cap: summary.json "
       "and junit.xml hold every one._");
}

namespace lenient {

std::string text(const nlohmann::json &j, const char *key) {
  if (!j.is_object())
    return "";
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

const nlohmann::json &array(const nlohmann::json &j, const char *key) {
  static const nlohmann::json empty = nlohmann::json::array();
  if (!j.is_object())
    return empty;
  const auto it = j.find(key);
  return it != j.end() && it->is_array() ? *it : empty;
}

const nlohmann::json &object(const nlohmann::json &j, const char *key) {
  static const nlohmann::json empty = nlohmann::json::object();
  if (!j.is_object())
    return empty;
  const auto it = j.find(key);
  return it != j.end() && it->is_object() ? *it : empty;
}

bool flag(const nlohmann::json &j, const char *key) {
  if (!j.is_object())
    return false;
  const auto it = j.find(key);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}

std::optional<double> number(const nlohmann::json &j, const char *key) {
  if (!j.is_object())
    return std::nullopt;
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number())
    return std::nullopt;
  return it->get<double>();
}

std::string figure(const nlohmann::json &j, const char *key, const char *format) {
  const auto v = number(j, key);
  if (!v)
    return "–";
  char buf[64];
  std::snprintf(buf, sizeof buf, format, *v);
  return buf;
}

} // namespace lenient
} // namespace cuparity
