#include "apps/exporter/gzip.h"

#include <zlib.h>

#include <fmt/format.h>

namespace ckpt {

Expected<std::string> gzip_compress(std::string_view data) {
  z_stream zs{};
  // windowBits 15 + 16: zlib writes a gzip header and trailer, not zlib's own.
  constexpr int kGzipWindowBits = 15 + 16;
  constexpr int kMemLevel = 8;  // zlib's default
  if (deflateInit2(&zs, Z_BEST_SPEED, Z_DEFLATED, kGzipWindowBits, kMemLevel, Z_DEFAULT_STRATEGY) !=
      Z_OK)
    return make_error(fmt::format("gzip: {}", zs.msg != nullptr ? zs.msg : "deflateInit2 failed"));
  // deflateBound is enough for one Z_FINISH call; data never passes uInt
  // here (a scrape is megabytes at most), but say so rather than truncate.
  if (data.size() > (1u << 30)) {
    deflateEnd(&zs);
    return make_error("gzip: more than 1 GiB to compress");
  }
  std::string out(deflateBound(&zs, static_cast<uLong>(data.size())), '\0');
  // zlib's API takes a non-const pointer but never writes the input.
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&zs, Z_FINISH);
  const uLong written = zs.total_out;
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) return make_error(fmt::format("gzip: deflate returned {}", rc));
  out.resize(written);
  return out;
}

}  // namespace ckpt
