// Escaping and writing XML elements.
#include "harness/report/xml_writer.hpp"

#include <stdexcept>

namespace cuparity {

std::string xml_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char ch : s) {
    switch (ch) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&apos;";
      break;
    default:
      if (ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r')
        out += "\xEF\xBF\xBD"; // U+FFFD REPLACEMENT CHARACTER, in UTF-8
      else
        out += static_cast<char>(ch);
    }
  }
  return out;
}

xml_element &xml_element::attribute(std::string name, std::string value) {
  m_attributes.emplace_back(std::move(name), std::move(value));
  return *this;
}

xml_element &xml_element::text(std::string text) {
  m_text = std::move(text);
  return *this;
}

xml_element &xml_element::self_closing() {
  m_self_closing = true;
  return *this;
}

xml_element &xml_element::add(xml_element child) {
  m_children.push_back(std::move(child));
  return m_children.back();
}

void xml_element::write(std::ostream &out, int depth) const {
  if ((m_text || m_self_closing) && !m_children.empty())
    throw std::logic_error("xml element <" + m_name + "> has children and is not a block");
  const std::string indent(2 * static_cast<std::size_t>(depth), ' ');
  out << indent << '<' << m_name;
  for (const auto &[name, value] : m_attributes)
    out << ' ' << name << "=\"" << xml_escape(value) << '"';
  if (m_self_closing) {
    out << "/>\n";
  } else if (m_text) {
    out << '>' << xml_escape(*m_text) << "</" << m_name << ">\n";
  } else {
    out << ">\n";
    for (const auto &c : m_children)
      c.write(out, depth + 1);
    out << indent << "</" << m_name << ">\n";
  }
}

std::string xml_document(const xml_element &root) {
  std::ostringstream out;
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  root.write(out);
  return out.str();
}

} // namespace cuparity
