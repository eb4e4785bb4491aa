// The kernel's CONFIG_HZ: balance_dirty_pages' tracepoint gives the pause it
// throttles a writer for in jiffies (bpf/jobio_storage.bpf.h), and vmlinux
// BTF has no macros. Read from the kernel's own config, /proc/config.gz
// (CONFIG_IKCONFIG_PROC) or /boot/config-RELEASE, as libbpf reads it for
// __kconfig externs; a node with neither (a container without /boot) does
// not measure the throttle, and says so.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/expected.h"

namespace ckpt {

// CONFIG_HZ=N in a kernel config's text; nullopt when absent or not a
// positive number.
std::optional<uint32_t> kernel_hz_from_config(std::string_view config);

// From /proc/config.gz, else /boot/config-`release`; an error saying where
// it looked.
Expected<uint32_t> kernel_hz(const std::string& release);

}  // namespace ckpt
