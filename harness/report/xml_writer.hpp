// A small XML element tree and its writer: the one place where text becomes well-formed XML.
#pragma once

#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace cuparity {

/// `s` as XML character data or attribute value: the five markup characters as entities, and each
/// character XML 1.0 forbids even as a reference (C0 controls but tab, newline and carriage
/// return) as U+FFFD, so a crash message full of control bytes still gives a well-formed document
/// that says something was replaced.
[[nodiscard]] std::string xml_escape(std::string_view s);

/// An element with attributes in the order given, and either children or text.
///
/// Layout, two spaces per level: an element with text is one line, `<a k="v">text</a>`; one made
/// self_closing() is `<a k="v"/>`; any other is a block, its children one per line between an
/// opening and a closing tag line (kept even when there are no children, as JUnit readers know).
class xml_element {
public:
  explicit xml_element(std::string name) : m_name(std::move(name)) {}

  xml_element &attribute(std::string name, std::string value);
  /// A number, formatted as a default std::ostream formats it.
  template <class Number>
  requires std::is_arithmetic_v<Number> xml_element &attribute(std::string name, Number value) {
    std::ostringstream s;
    s << value;
    return attribute(std::move(name), s.str());
  }
  xml_element &text(std::string text);
  xml_element &self_closing();
  /// Appends a child and returns it, to fill it in place.
  xml_element &add(xml_element child);

  /// The element at `depth` levels of indentation, with a final newline.
  void write(std::ostream &out, int depth = 0) const;

private:
  std::string m_name;
  std::vector<std::pair<std::string, std::string>> m_attributes;
  std::optional<std::string> m_text;
  std::vector<xml_element> m_children;
  bool m_self_closing = false;
};

/// The XML declaration (UTF-8), then `root`.
[[nodiscard]] std::string xml_document(const xml_element &root);

} // namespace cuparity
