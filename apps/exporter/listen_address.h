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

  // civetweb's listening_ports form ("+9464" binds IPv4 and IPv6).
  [[nodiscard]] std::string civetweb() const;
  // For messages and URLs: "127.0.0.1:9464", "[::1]:9464", ":9464".
  [[nodiscard]] std::string display() const;
};

inline constexpr uint16_t kDefaultExporterPort = 9464;

Expected<ListenAddress> parse_listen_address(std::string_view text);

// Binds a socket to the address and lets it go: a port in use or an address
// not on this host is found, and said plainly, before anything else starts.
Expected<void> check_can_listen(const ListenAddress& address);

}  // namespace ckpt
