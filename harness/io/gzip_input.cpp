// gzip inputs through zlib: inflated in bounded steps, errors naming the file.
#include "harness/io/gzip_input.hpp"

#include "harness/io/input_file.hpp"

#include <filesystem>
#include <zlib.h>

namespace cuparity {

bool is_gzip(const std::string &bytes) noexcept {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

std::string gunzip(const std::string &bytes, const std::string &name, std::size_t max_bytes) {
  z_stream z{};
  // 16 + MAX_WBITS: a gzip header and trailer, not zlib's or a raw stream.
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
    throw bad_input_error(name + ": cannot start inflating (zlib: out of memory)");
  struct end_guard {
    z_stream &z;
    ~end_guard() { inflateEnd(&z); }
  } guard{z};
  z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  std::string out;
  char chunk[1 << 16];
  for (;;) {
    z.next_out = reinterpret_cast<Bytef *>(chunk);
    z.avail_out = sizeof chunk;
    const int rc = inflate(&z, Z_NO_FLUSH);
    out.append(chunk, sizeof chunk - z.avail_out);
    if (out.size() > max_bytes)
      throw bad_input_error(name + ": inflates to more than the " + std::to_string(max_bytes) +
                            " bytes an input may have");
    if (rc == Z_STREAM_END) {
      if (z.avail_in == 0)
        return out;
      if (inflateReset(&z) != Z_OK) // another member follows (cat a.gz b.gz)
        throw bad_input_error(name + ": a damaged gzip member follows the first");
      continue;
    }
    if (rc == Z_BUF_ERROR && z.avail_in == 0)
      throw bad_input_error(name + ": the gzip stream ends early (a truncated file?)");
    if (rc != Z_OK)
      throw bad_input_error(name + ": not a valid gzip stream (" +
                            std::string(z.msg ? z.msg : "zlib error " + std::to_string(rc)) + ")");
  }
}

std::string stored_run_file(const std::string &dir, const std::string &file) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path plain = fs::path(dir) / file;
  if (fs::exists(fs::symlink_status(plain, ec)))
    return plain.string();
  const fs::path packed = fs::path(dir) / (file + ".gz");
  return fs::exists(fs::symlink_status(packed, ec)) ? packed.string() : plain.string();
}

} // namespace cuparity
