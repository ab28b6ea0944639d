// The JSON-lines event stream a cell or probe process writes to the runner on a dedicated fd.
#pragma once

#include <nlohmann/json.hpp>

namespace cuparity {

/// Writes one JSON object per line with unbuffered write(2) calls, so every event has reached the
/// runner before the next case starts (a crash loses nothing already written). If the runner is
/// gone, writes are dropped (the process then ends at its next SIGPIPE-free exit point).
class event_stream {
public:
  explicit event_stream(int fd) noexcept : m_fd(fd) {}
  void write(const nlohmann::json &event) const;

private:
  int m_fd;
};

} // namespace cuparity
