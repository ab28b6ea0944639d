// A Markdown page built line by line within a byte budget, with tables that stop when it is spent.
#pragma once

#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace cuparity {

class markdown_page {
public:
  /// `reserve` bytes of `budget` are kept for notes (note()), so a note can always be written.
  markdown_page(std::size_t budget, std::size_t reserve);

  /// Appends `lines` and a newline when they fit in the budget less the reserve; once one does
  /// not, the page is full and every later add() is refused too (a page never skips ahead).
  bool add(std::string_view lines);
  /// Appends `line` and a newline from the reserve, cut to what is left of the whole budget.
  void note(std::string_view line);
  /// A table under `heading`: `header` is its first row ("| a | b |"), then `count` rows from
  /// row(i) while they fit. Rows that do not fit are counted and a note says how many `what`
  /// were left out and where they all are. Nothing when `count` is 0.
  void table(std::string_view heading, std::string_view header, std::size_t count,
             const std::function<std::string(std::size_t)> &row, std::string_view what);

  [[nodiscard]] bool full() const { return m_full; }
  [[nodiscard]] std::size_t left_out() const { return m_left_out; }
  [[nodiscard]] const std::string &text() const { return m_text; }

private:
  std::string m_text;
  std::size_t m_budget, m_reserve, m_left_out = 0;
  bool m_full = false;
};

/// Lenient reads of a summary's members for rendering: a member absent or of another kind reads
/// as "" / an empty array or object / false / nullopt, never an exception.
namespace lenient {
[[nodiscard]] std::string text(const nlohmann::json &j, const char *key);
[[nodiscard]] const nlohmann::json &array(const nlohmann::json &j, const char *key);
[[nodiscard]] const nlohmann::json &object(const nlohmann::json &j, const char *key);
[[nodiscard]] bool flag(const nlohmann::json &j, const char *key);
[[nodiscard]] std::optional<double> number(const nlohmann::json &j, const char *key);
/// The number as printf's `format` prints it, or "–" when there is none.
[[nodiscard]] std::string figure(const nlohmann::json &j, const char *key,
                                 const char *format = "%.4g");
} // namespace lenient

} // namespace cuparity
