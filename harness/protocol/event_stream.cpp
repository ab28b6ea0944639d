// event_stream: one JSON event per line on a file descriptor.
#include "harness/protocol/event_stream.hpp"

#include <cerrno>
#include <unistd.h>

namespace cuparity {

void event_stream::write(const nlohmann::json &event) const {
  const std::string line =
      event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  for (std::size_t done = 0; done < line.size();) {
    const ssize_t n = ::write(m_fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return; // the runner went away; nothing useful can be done
    done += static_cast<std::size_t>(n);
  }
}

} // namespace cuparity
