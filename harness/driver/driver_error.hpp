// The exception every checked driver call throws: keeps the code and names the call that failed.
#pragma once

#include "harness/driver/cuda_api.hpp"

#include <source_location>
#include <stdexcept>
#include <string>

namespace cuparity {

class driver_error : public std::runtime_error {
public:
  struct details {
    CUresult code = CUDA_SUCCESS;
    std::string code_name; ///< cuGetErrorName's answer, e.g. CUDA_ERROR_OUT_OF_MEMORY
    std::string entry;     ///< base name, e.g. cuMemAlloc
    std::string symbol;    ///< exported symbol actually bound, e.g. cuMemAlloc_v2
    std::string backend;   ///< internal / nvidia
    std::source_location site;
    bool missing_function = false; ///< the driver has no such function (nothing was called)
    bool not_bound = false;        ///< missing because the binding under test does not bind it
    std::string detail;            ///< extra words: why missing, a log, ...
    std::string handles;           ///< the call's handle arguments, "CUstream 0x55d0c0"
  };

  explicit driver_error(details d);

  [[nodiscard]] CUresult code() const noexcept { return m_details.code; }
  [[nodiscard]] const std::string &code_name() const noexcept { return m_details.code_name; }
  [[nodiscard]] const std::string &entry() const noexcept { return m_details.entry; }
  [[nodiscard]] const std::string &symbol() const noexcept { return m_details.symbol; }
  [[nodiscard]] const std::string &backend() const noexcept { return m_details.backend; }
  [[nodiscard]] const std::source_location &site() const noexcept { return m_details.site; }
  [[nodiscard]] bool missing_function() const noexcept { return m_details.missing_function; }
  [[nodiscard]] bool not_bound() const noexcept { return m_details.not_bound; }
  [[nodiscard]] const details &info() const noexcept { return m_details; }

private:
  details m_details;
};

/// "CUstream 0x55d0c0": a handle argument as error messages name it.
[[nodiscard]] std::string handle_text(const char *type, const void *handle);
[[nodiscard]] std::string handle_text(const char *type, unsigned long long handle);

} // namespace cuparity
