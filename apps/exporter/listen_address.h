// `--listen`: where the exporter serves /metrics. "127.0.0.1:9464",
// "[::1]:9464", ":9464" (every address, IPv4 and IPv6, as node_exporter's
// ":9100"). Host names are not resolved: a node exporter's address is the
// node's own.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/expected.h"

namespace ckpt {

struct ListenAddress {
  std::string host;  // numeric; "" = every address
  uint16_t port = 0;
  bool v6 = false;

  // For messages and URLs: "127.0.0.1:9464", "[::1]:9464", ":9464".
  [[nodiscard]] std::string display() const;
};

inline constexpr uint16_t kDefaultExporterPort = 9464;

Expected<ListenAddress> parse_listen_address(std::string_view text);

// A TCP socket bound to the address (non-blocking, close-on-exec,
// SO_REUSEADDR so that a port in TIME_WAIT is free). Every address (":PORT")
// is [::] taking IPv4 too (IPV6_V6ONLY off), or 0.0.0.0 on a host without
// IPv6. An error names the address and says why: "in use", "not one of this
// host's", a port below 1024 unprivileged.
Expected<int> open_bound_socket(const ListenAddress& address);

// Binds a socket to the address and lets it go: a port in use or an address
// not on this host is found, and said plainly, before anything else starts.
Expected<void> check_can_listen(const ListenAddress& address);

}  // namespace ckpt
