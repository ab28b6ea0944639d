// nvJitLink's entry points, bound at run time, and linking with its error log.
#include "harness/toolchain/nvjitlink.hpp"

#include <nvJitLink.h>

namespace cuparity {

struct nvjitlink::table {
  decltype(&nvJitLinkCreate) create;
  decltype(&nvJitLinkDestroy) destroy;
  decltype(&nvJitLinkAddData) add_data;
  decltype(&nvJitLinkComplete) complete;
  decltype(&nvJitLinkGetLinkedCubinSize) cubin_size;
  decltype(&nvJitLinkGetLinkedCubin) cubin;
  decltype(&nvJitLinkGetErrorLogSize) error_log_size;
  decltype(&nvJitLinkGetErrorLog) error_log;
};

nvjitlink::nvjitlink() : m_fn(std::make_shared<table>()) {
  void *h = open_toolkit_library("libnvJitLink.so.13", m_path);
  // The header's inline wrappers call versioned symbols (__nvJitLinkCreate_13_0); the library
  // also exports the plain names, which is what we bind.
  *m_fn = table{toolkit_function<decltype(table::create)>(h, "nvJitLinkCreate"),
                toolkit_function<decltype(table::destroy)>(h, "nvJitLinkDestroy"),
                toolkit_function<decltype(table::add_data)>(h, "nvJitLinkAddData"),
                toolkit_function<decltype(table::complete)>(h, "nvJitLinkComplete"),
                toolkit_function<decltype(table::cubin_size)>(h, "nvJitLinkGetLinkedCubinSize"),
                toolkit_function<decltype(table::cubin)>(h, "nvJitLinkGetLinkedCubin"),
                toolkit_function<decltype(table::error_log_size)>(h, "nvJitLinkGetErrorLogSize"),
                toolkit_function<decltype(table::error_log)>(h, "nvJitLinkGetErrorLog")};
}

nvjitlink &nvjitlink::instance() {
  static nvjitlink n;
  return n;
}

std::vector<char> nvjitlink::link(const std::vector<input> &inputs,
                                  const std::vector<std::string> &options) const {
  const table &f = *m_fn;
  std::vector<const char *> opts;
  for (const auto &o : options)
    opts.push_back(o.c_str());
  nvJitLinkHandle h = nullptr;
  if (nvJitLinkResult r = f.create(&h, static_cast<uint32_t>(opts.size()), opts.data());
      r != NVJITLINK_SUCCESS)
    throw toolchain_error("nvJitLinkCreate -> " + std::to_string(static_cast<int>(r)), "");
  struct guard {
    const table &f;
    nvJitLinkHandle &h;
    ~guard() { f.destroy(&h); }
  } g{f, h};
  auto error_log = [&] {
    std::size_t n = 0;
    f.error_log_size(h, &n);
    std::string s(n, '\0');
    if (n)
      f.error_log(h, s.data());
    while (!s.empty() && (s.back() == '\0' || s.back() == '\n'))
      s.pop_back();
    return s;
  };
  for (const auto &in : inputs) {
    nvJitLinkInputType t = in.type == input::ptx     ? NVJITLINK_INPUT_PTX
                           : in.type == input::cubin ? NVJITLINK_INPUT_CUBIN
                           : in.type == input::ltoir ? NVJITLINK_INPUT_LTOIR
                                                     : NVJITLINK_INPUT_FATBIN;
    if (nvJitLinkResult r = f.add_data(h, t, in.data.data(), in.data.size(), in.name.c_str());
        r != NVJITLINK_SUCCESS)
      throw toolchain_error("nvJitLinkAddData(" + in.name + ") -> " +
                                std::to_string(static_cast<int>(r)),
                            error_log());
  }
  if (nvJitLinkResult r = f.complete(h); r != NVJITLINK_SUCCESS)
    throw toolchain_error("nvJitLinkComplete -> " + std::to_string(static_cast<int>(r)),
                          error_log());
  std::size_t n = 0;
  f.cubin_size(h, &n);
  std::vector<char> cubin(n);
  f.cubin(h, cubin.data());
  return cubin;
}

} // namespace cuparity
