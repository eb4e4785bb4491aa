// How the header of a line is stripped before its message is mined: the
// header (time, host, sequence numbers) varies on every line and would make
// every line a template of its own. The severity the header carries is kept
// (severity.h).
//   raw      the whole line is the message; no severity
//   bgl      Loghub BGL: `Label Timestamp Date Node Time NodeRepeat Type
//            Component Level Content` (loghub/BGL README); the label is kept,
//            Level mapped by bgl_level()
//   kmsg     /dev/kmsg: `pri,seq,usec,flags[,...];message`
//            (Documentation/ABI/testing/dev-kmsg), parsed by
//            ckpt::parse_kmsg_record (sources/kernel_log.h); level `pri & 7`
//   syslog   `journalctl -o short-iso`, RFC 3164 (`Mon dd hh:mm:ss host ...`)
//            and dmesg's `[ seconds]` prefix: time and host are dropped,
//            `proc[pid]:` stays (its pid is masked); a leading `<PRI>`
//            (RFC 3164/5424) gives the level `PRI & 7`
//   journal  `journalctl -o json`, one object a line: the message is
//            `SYSLOG_IDENTIFIER[SYSLOG_PID]: MESSAGE` as short-iso prints it
//            (so a model trained on `syslog` lines matches), the level PRIORITY
//   thunderbird  Loghub Thunderbird: `Label Timestamp Date User Month Day
//            Time Location Component[PID]: Content`; the label is kept, no
//            severity
//   hdfs     Loghub HDFS (log4j): `Date Time Pid Level Component: Content`;
//            FATAL crit, ERROR err, WARN warning, INFO info, DEBUG debug
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "analysis/logwatch/severity.h"
#include "common/expected.h"

namespace ckpt::logwatch {

enum class LineFormat { kRaw, kBgl, kKmsg, kSyslog, kJournal, kThunderbird, kHdfs };

Expected<LineFormat> parse_line_format(std::string_view name);

struct ParsedLine {
  std::string_view message;  // into the line, or into the scratch string
  std::string_view label;    // bgl, thunderbird: `-` for a normal line
  std::optional<Severity> severity;
};

// `scratch` holds the message when it must be decoded (kmsg's \xNN escapes,
// journal JSON); `message` may point into it, so keep it while the result is used.
ParsedLine parse_line(std::string_view line, LineFormat format, std::string& scratch);

}  // namespace ckpt::logwatch
