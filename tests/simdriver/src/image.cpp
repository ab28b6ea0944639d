// Reading kernel images: recognises PTX text, cubin ELF and fatbin containers and lists the
// kernels, device functions, external references and __device__ variables they define.
#include "sim.hpp"

#include <cstring>
#include <elf.h>

namespace cuparity::sim {
namespace {

constexpr std::uint32_t fatbin_magic = 0xBA55ED50;
constexpr std::uint32_t fatbin_wrapper_magic = 0x466243b1; // __fatBinC_Wrapper_t from nvcc

struct fatbin_header {
  std::uint32_t magic;
  std::uint16_t version;
  std::uint16_t header_size;
  std::uint64_t fat_size;
};

struct fatbin_wrapper {
  int magic;
  int version;
  const void *data;
  void *filename_or_fatbins;
};

bool is_elf(const unsigned char *p) {
  return p[0] == 0x7f && p[1] == 'E' && p[2] == 'L' && p[3] == 'F' && p[EI_CLASS] == ELFCLASS64;
}

std::size_t elf_length(const unsigned char *p) {
  Elf64_Ehdr h;
  std::memcpy(&h, p, sizeof(h));
  const std::size_t sections = h.e_shoff + std::size_t{h.e_shnum} * h.e_shentsize;
  const std::size_t segments = h.e_phoff + std::size_t{h.e_phnum} * h.e_phentsize;
  return std::max({sections, segments, sizeof(h)});
}

// ---- PTX: a small tokenizer is enough for the declarations the sim needs.

std::vector<std::string_view> tokenize_ptx(std::string_view text, std::string &storage) {
  // Strip comments into `storage` first, so tokens can be views into it.
  storage.clear();
  storage.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 2, "//") == 0) {
      while (i < text.size() && text[i] != '\n')
        ++i;
      storage.push_back('\n');
    } else if (text.compare(i, 2, "/*") == 0) {
      const std::size_t end = text.find("*/", i + 2);
      i = end == std::string_view::npos ? text.size() : end + 1;
      storage.push_back(' ');
    } else {
      storage.push_back(text[i]);
    }
  }
  std::vector<std::string_view> tokens;
  const std::string_view s = storage;
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
    } else if (std::strchr("(),;[]{}=", c) != nullptr) {
      tokens.push_back(s.substr(i, 1));
      ++i;
    } else {
      const std::size_t start = i;
      while (i < s.size() && std::strchr(" \t\r\n(),;[]{}=", s[i]) == nullptr)
        ++i;
      tokens.push_back(s.substr(start, i - start));
    }
  }
  return tokens;
}

std::size_t ptx_type_size(std::string_view t) {
  if (t.size() < 3 || t[0] != '.')
    return 0;
  const char kind = t[1];
  if (kind != 'b' && kind != 'u' && kind != 's' && kind != 'f')
    return 0;
  std::size_t bits = 0;
  for (char c : t.substr(2)) {
    if (c < '0' || c > '9')
      return 0;
    bits = bits * 10 + static_cast<std::size_t>(c - '0');
  }
  return bits / 8;
}

void scan_ptx(std::string_view text, image_symbols &out) {
  std::string storage;
  const auto tokens = tokenize_ptx(text, storage);
  int depth = 0;
  bool is_extern = false;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::string_view t = tokens[i];
    if (t == "{") {
      ++depth;
      is_extern = false;
    } else if (t == "}") {
      --depth;
    } else if (t == ";") {
      is_extern = false;
    } else if (depth == 0 && t == ".extern") {
      is_extern = true;
    } else if (depth == 0 && (t == ".entry" || t == ".func")) {
      std::size_t j = i + 1;
      if (j < tokens.size() && tokens[j] == "(") { // a .func return parameter list
        while (j < tokens.size() && tokens[j] != ")")
          ++j;
        ++j;
      }
      if (j >= tokens.size())
        break;
      const std::string name(tokens[j]);
      if (is_extern) {
        out.extern_refs.insert(name);
      } else {
        out.defined_funcs.insert(name);
        if (t == ".entry")
          out.entries.insert(name);
      }
      i = j;
    } else if (depth == 0 && t == ".global" && !is_extern) {
      // .global [.align N] .type name[count] [= {...}];
      std::size_t j = i + 1;
      if (j < tokens.size() && tokens[j] == ".align")
        j += 2;
      if (j + 1 >= tokens.size())
        break;
      const std::size_t elem = ptx_type_size(tokens[j]);
      const std::string name(tokens[j + 1]);
      std::size_t count = 1;
      if (j + 3 < tokens.size() && tokens[j + 2] == "[")
        count = std::strtoull(std::string(tokens[j + 3]).c_str(), nullptr, 10);
      if (elem > 0)
        out.globals[name] = elem * std::max<std::size_t>(count, 1);
      i = j + 1;
    }
  }
}

// ---- ELF: the symbol table names kernels (STT_FUNC), variables (STT_OBJECT) and, in
// relocatable objects, undefined references.

void scan_elf(const unsigned char *p, std::size_t len, image_symbols &out) {
  if (len < sizeof(Elf64_Ehdr) || !is_elf(p))
    return;
  Elf64_Ehdr h;
  std::memcpy(&h, p, sizeof(h));
  if (h.e_shentsize != sizeof(Elf64_Shdr) ||
      h.e_shoff + std::size_t{h.e_shnum} * sizeof(Elf64_Shdr) > len)
    return;
  auto section = [&](std::size_t i) {
    Elf64_Shdr s;
    std::memcpy(&s, p + h.e_shoff + i * sizeof(Elf64_Shdr), sizeof(s));
    return s;
  };
  for (std::size_t i = 0; i < h.e_shnum; ++i) {
    const Elf64_Shdr symtab = section(i);
    if (symtab.sh_type != SHT_SYMTAB || symtab.sh_link >= h.e_shnum ||
        symtab.sh_offset + symtab.sh_size > len || symtab.sh_entsize != sizeof(Elf64_Sym))
      continue;
    const Elf64_Shdr strtab = section(symtab.sh_link);
    if (strtab.sh_offset + strtab.sh_size > len)
      continue;
    const char *names = reinterpret_cast<const char *>(p + strtab.sh_offset);
    for (std::size_t k = 0; k < symtab.sh_size / sizeof(Elf64_Sym); ++k) {
      Elf64_Sym sym;
      std::memcpy(&sym, p + symtab.sh_offset + k * sizeof(Elf64_Sym), sizeof(sym));
      if (sym.st_name >= strtab.sh_size)
        continue;
      const std::string name(names + sym.st_name,
                             strnlen(names + sym.st_name, strtab.sh_size - sym.st_name));
      const int bind = ELF64_ST_BIND(sym.st_info);
      const int type = ELF64_ST_TYPE(sym.st_info);
      // Names starting with '.' are the toolchain's own (.nv.reservedSmem, section symbols).
      if (name.empty() || name.front() == '.')
        continue;
      if (sym.st_shndx == SHN_UNDEF) {
        // Weak undefined symbols may stay unresolved; only strong ones are references.
        if (bind == STB_GLOBAL && (type == STT_FUNC || type == STT_NOTYPE))
          out.extern_refs.insert(name);
      } else if (type == STT_FUNC && (bind == STB_GLOBAL || bind == STB_WEAK)) {
        out.entries.insert(name);
        out.defined_funcs.insert(name);
      } else if (type == STT_OBJECT) {
        // Whole-program cubins keep __device__ variables LOCAL, yet cuModuleGetGlobal finds them.
        out.globals[name] = sym.st_size;
      }
    }
  }
}

// A fatbin holds ELF and PTX members; rather than decode its member headers, find each
// uncompressed ELF by its magic and each PTX text by its ".version" directive.
void scan_fatbin(const unsigned char *p, std::size_t len, image_symbols &out) {
  for (std::size_t i = 0; i + sizeof(Elf64_Ehdr) <= len; ++i) {
    if (p[i] == 0x7f && is_elf(p + i))
      scan_elf(p + i, len - i, out);
  }
  const std::string_view all(reinterpret_cast<const char *>(p), len);
  for (std::size_t at = all.find(".version"); at != std::string_view::npos;
       at = all.find(".version", at + 1)) {
    const std::size_t end = all.find('\0', at);
    scan_ptx(all.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at),
             out);
  }
}

bool looks_like_ptx(std::string_view text) {
  return text.find(".version") != std::string_view::npos ||
         text.find(".entry") != std::string_view::npos;
}

// ---- architectures: which SM an image's code is for.

// The SM a cubin's code is for, from its ELF header (0 when it is no ELF). nvcc 13.0 writes
// EI_ABIVERSION 8 and the SM in bits 8-15 of e_flags: read from cubins it built for basic.cu,
// sm_80 -> 0x6005004, sm_90 -> 0x6005a04, sm_100 -> 0x6006402, sm_120 -> 0x6007802. Older
// toolkits (ABI version 7 and below) keep it in the low byte (LLVM's EF_CUDA_SM mask, 0xff).
int elf_sm(const unsigned char *p, std::size_t len) {
  if (len < sizeof(Elf64_Ehdr) || !is_elf(p))
    return 0;
  Elf64_Ehdr h;
  std::memcpy(&h, p, sizeof(h));
  return static_cast<int>(h.e_ident[EI_ABIVERSION] >= 8 ? (h.e_flags >> 8) & 0xff
                                                        : h.e_flags & 0xff);
}

// The SM of a PTX text's `.target sm_XX[a|f][, ...]` directive (0 when it names none).
int ptx_target_sm(std::string_view text) {
  const std::size_t at = text.find(".target");
  if (at == std::string_view::npos)
    return 0;
  const std::size_t sm = text.find("sm_", at);
  if (sm == std::string_view::npos)
    return 0;
  int value = 0;
  for (std::size_t i = sm + 3; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i)
    value = value * 10 + (text[i] - '0');
  return value;
}

// The driver's rule for machine code: a cubin runs on devices of its major architecture whose
// minor version is at least its own (sm_80 code on an sm_86 device, never on sm_90): the CUDA
// C++ Programming Guide's "binary compatibility" section.
bool cubin_runs_on(int sm, int device) {
  return sm > 0 && sm / 10 == device / 10 && sm % 10 <= device % 10;
}

// PTX is JIT-compiled for the device when it targets an architecture no newer than it.
bool ptx_runs_on(int sm, int device) {
  return sm > 0 && sm <= device;
}

// A fatbin's members each start with a header naming their kind and SM. Read from nvcc 13.0's
// `-fatbin -arch=sm_90` output of basic.cu: after the 16-byte container header, a member header
// of 64 or 80 bytes: u16 kind (1 PTX, 2 ELF), u16 version, u32 header size, u64 payload size, ...,
// u32 SM at byte 28 (90 for both members). Its PTX is compressed (flags 0x8011), so the SM
// cannot be read from a `.target` directive in the bytes.
struct fatbin_member_header {
  std::uint16_t kind;
  std::uint16_t version;
  std::uint32_t header_size;
  std::uint64_t payload_size;
  std::uint32_t unknown[3];
  std::uint32_t sm;
};

bool fatbin_runs_on(const unsigned char *p, std::size_t len, int device) {
  fatbin_header h;
  if (len < sizeof(h))
    return false;
  std::memcpy(&h, p, sizeof(h));
  const std::size_t end = std::min<std::size_t>(len, h.header_size + h.fat_size);
  for (std::size_t at = h.header_size; at + sizeof(fatbin_member_header) <= end;) {
    fatbin_member_header m;
    std::memcpy(&m, p + at, sizeof(m));
    const int sm = static_cast<int>(m.sm);
    if ((m.kind == 2 && cubin_runs_on(sm, device)) || (m.kind == 1 && ptx_runs_on(sm, device)))
      return true;
    if (m.header_size == 0)
      break;
    at += m.header_size + m.payload_size;
  }
  return false;
}

} // namespace

image_kind classify_image(const void *image, std::size_t &length) {
  const auto *p = static_cast<const unsigned char *>(image);
  std::uint32_t magic = 0;
  std::memcpy(&magic, p, sizeof(magic));
  if (magic == fatbin_wrapper_magic) {
    fatbin_wrapper w;
    std::memcpy(&w, p, sizeof(w));
    return w.data != nullptr ? classify_image(w.data, length) : image_kind::invalid;
  }
  if (magic == fatbin_magic) {
    fatbin_header h;
    std::memcpy(&h, p, sizeof(h));
    length = h.header_size + h.fat_size;
    return image_kind::fatbin;
  }
  if (is_elf(p)) {
    length = elf_length(p);
    return image_kind::elf;
  }
  const std::string_view text(reinterpret_cast<const char *>(p));
  length = text.size();
  return looks_like_ptx(text) ? image_kind::ptx : image_kind::invalid;
}

namespace {

/// The image itself: a fatbin wrapper (what nvcc's host stubs register) points at its fatbin.
const unsigned char *unwrapped_image(const void *image) {
  const auto *p = static_cast<const unsigned char *>(image);
  std::uint32_t magic = 0;
  std::memcpy(&magic, p, sizeof(magic));
  if (magic == fatbin_wrapper_magic) {
    fatbin_wrapper w;
    std::memcpy(&w, p, sizeof(w));
    p = static_cast<const unsigned char *>(w.data);
  }
  return p;
}

} // namespace

image_symbols scan_image(const void *image, std::size_t length, image_kind kind) {
  image_symbols out;
  const unsigned char *p = unwrapped_image(image);
  switch (kind) {
  case image_kind::ptx:
    scan_ptx(std::string_view(reinterpret_cast<const char *>(p),
                              strnlen(reinterpret_cast<const char *>(p), length)),
             out);
    break;
  case image_kind::elf:
    scan_elf(p, length, out);
    break;
  case image_kind::fatbin:
    scan_fatbin(p, length, out);
    break;
  case image_kind::invalid:
    break;
  }
  return out;
}

} // namespace cuparity::sim

namespace cuparity::sim {

int device_sm() {
  return cfg().cc_major * 10 + cfg().cc_minor;
}

bool image_runs_on_device(const void *image, std::size_t length, image_kind kind) {
  const unsigned char *p = unwrapped_image(image);
  const int device = device_sm();
  switch (kind) {
  case image_kind::ptx:
    return ptx_runs_on(
        ptx_target_sm(std::string_view(reinterpret_cast<const char *>(p),
                                       strnlen(reinterpret_cast<const char *>(p), length))),
        device);
  case image_kind::elf:
    return cubin_runs_on(elf_sm(p, length), device);
  case image_kind::fatbin:
    return fatbin_runs_on(p, length, device);
  case image_kind::invalid:
    break;
  }
  return false;
}

} // namespace cuparity::sim
