// "addr:port" strings as sources print them (format_endpoint): the address
// part. One place for the IPv6 brackets.
#pragma once

#include <string>
#include <string_view>

namespace ckpt {

// "10.0.0.9:2049" -> "10.0.0.9", "[fd00::9]:2049" -> "fd00::9", "host" -> "host".
inline std::string endpoint_host(std::string_view endpoint) {
  if (!endpoint.empty() && endpoint.front() == '[') {
    auto close = endpoint.find(']');
    return std::string(close == std::string_view::npos ? endpoint : endpoint.substr(1, close - 1));
  }
  auto colon = endpoint.rfind(':');
  return std::string(colon == std::string_view::npos ? endpoint : endpoint.substr(0, colon));
}

}  // namespace ckpt
