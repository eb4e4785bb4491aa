// Log lines as `logwatch` reads them: the first byte picks the format
// (raw, bgl, kmsg, syslog, journal, thunderbird, hdfs), the rest is the line.
#include "analysis/logwatch/line_format.h"
#include "tests/fuzz/fuzz_input.h"

CKPT_FUZZ_TARGET {
  if (size == 0) return 0;
  constexpr ckpt::logwatch::LineFormat kFormats[] = {
      ckpt::logwatch::LineFormat::kRaw,     ckpt::logwatch::LineFormat::kBgl,
      ckpt::logwatch::LineFormat::kKmsg,    ckpt::logwatch::LineFormat::kSyslog,
      ckpt::logwatch::LineFormat::kJournal, ckpt::logwatch::LineFormat::kThunderbird,
      ckpt::logwatch::LineFormat::kHdfs};
  const auto format = kFormats[data[0] % std::size(kFormats)];
  std::string scratch;
  auto parsed =
      ckpt::logwatch::parse_line(ckpt::fuzz::as_text(data + 1, size - 1), format, scratch);
  (void)parsed;
  return 0;
}
