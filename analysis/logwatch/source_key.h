// The subsystem a log line names, so that its sequence is kept apart from
// the others': a node log interleaves independent writers (NIC firmware,
// NFS, systemd units, AppArmor), and one's templates do not predict
// another's. The source is the line's leading tag:
//   `name:` or `name[pid]:`        ntpd[15380]: -> ntpd, NVRM: -> NVRM
//   `driver DEVICE:`               mlx5_core 0000:3b:00.0: -> mlx5_core
//   `/path/to/prog[pid]:`          the program's file name
// and past a leading `kernel:` (syslog's tag for every kernel line) the
// driver's tag after it. A line without a tag has no source (empty): it
// shares one stream with the other untagged lines.
#pragma once

#include <cstdint>
#include <string_view>

namespace ckpt::logwatch {

// The source named by `message` (a view into it), empty when none.
std::string_view source_of(std::string_view message);

// A non-zero key for a source (FNV-1a, 32 bits), 0 for none.
std::uint32_t source_key(std::string_view source);

}  // namespace ckpt::logwatch
