// gzip for /metrics answers, as prometheus-cpp's Exposer compressed them
// when the scraper allowed it: a node's exposition is text that compresses
// about tenfold, which matters to a Prometheus scraping thousands of nodes.
#pragma once

#include <string>
#include <string_view>

#include "common/expected.h"

namespace ckpt {

// `data` as one gzip member (RFC 1952), at zlib's fastest level: the
// server's one thread compresses while other clients wait, and the fastest
// level keeps most of the gain at a fraction of the time.
Expected<std::string> gzip_compress(std::string_view data);

}  // namespace ckpt
