// Finding the main program's NT_GNU_BUILD_ID note through its program headers.
#include "harness/platform/build_id.hpp"

#include <cstdint>
#include <cstdio>
#include <elf.h>
#include <link.h>

namespace cuparity {
namespace {

/// The note's bytes within one PT_NOTE segment, hex; "" when the segment has none.
std::string build_id_in(const unsigned char *p, std::size_t size) {
  std::size_t at = 0;
  auto align4 = [](std::size_t n) { return (n + 3) & ~std::size_t{3}; };
  while (at + sizeof(ElfW(Nhdr)) <= size) {
    const auto *note = reinterpret_cast<const ElfW(Nhdr) *>(p + at);
    const std::size_t name_at = at + sizeof(ElfW(Nhdr));
    const std::size_t desc_at = name_at + align4(note->n_namesz);
    if (desc_at + note->n_descsz > size)
      break;
    if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
        std::string(reinterpret_cast<const char *>(p + name_at), 3) == "GNU") {
      std::string hex;
      char byte[3];
      for (std::size_t i = 0; i < note->n_descsz; ++i) {
        std::snprintf(byte, sizeof byte, "%02x", p[desc_at + i]);
        hex += byte;
      }
      return hex;
    }
    at = desc_at + align4(note->n_descsz);
  }
  return "";
}

int visit(dl_phdr_info *info, std::size_t, void *out) {
  // The first object dl_iterate_phdr reports is the main program (dl_iterate_phdr(3)).
  auto &id = *static_cast<std::string *>(out);
  for (int i = 0; i < info->dlpi_phnum && id.empty(); ++i) {
    const auto &ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_NOTE)
      id = build_id_in(reinterpret_cast<const unsigned char *>(info->dlpi_addr + ph.p_vaddr),
                       ph.p_memsz);
  }
  return 1; // stop after the main program
}

} // namespace

std::string executable_build_id() {
  std::string id;
  dl_iterate_phdr(visit, &id);
  return id;
}

} // namespace cuparity
