// Untrusted text (messages, ids, names) made inert inside one line of Markdown.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace cuparity {

/// How much of a run's text one table cell shows: a message, and an id or a name.
inline constexpr std::size_t markdown_message_chars = 300;
inline constexpr std::size_t markdown_name_chars = 200;

/// `text` as literal text on one line of GitHub-flavoured Markdown, a table cell included: at
/// most `max_chars` characters (code points), then "…"; control characters (newlines included)
/// become blanks, so no line of it can start a heading, list, fence or HTML block; every ASCII
/// character that starts Markdown, HTML, an entity, a table column, math or a mention is
/// backslash-escaped (CommonMark: any ASCII punctuation may be); bytes that are not UTF-8 become
/// U+FFFD.
[[nodiscard]] std::string markdown_inline(std::string_view text,
                                          std::size_t max_chars = markdown_name_chars);

} // namespace cuparity
