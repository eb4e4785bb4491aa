#include "analysis/io_accounting_notice.h"

#include <fmt/format.h>

#include "analysis/format.h"

namespace ckpt {

std::optional<std::string> io_accounting_notice(const IoAccountingRecord& io) {
  if (!io.notice()) return std::nullopt;
  return fmt::format(
      "the kernel counted the job's {} thread{} writing {}, the trace {} (its checkpoints and "
      "the other files it saw written): {} more went by a way the trace did not see, such as a "
      "call no probe of this kernel traces (docs/probe-modes.md says what each mode sees) or "
      "records the probes dropped (see drops)",
      io.threads, io.threads == 1 ? "" : "s", format_bytes(io.kernel_written_bytes),
      format_bytes(io.traced_written_bytes), format_bytes(io.unseen_written_bytes()));
}

std::string io_accounting_line(const IoAccountingRecord& io) {
  if (io.processes_running > 0)
    return fmt::format("not compared, {} of the job's processes still ran when the trace ended",
                       io.processes_running);
  return fmt::format("the kernel counted {} over {} thread{}, the trace {} (reads from storage {})",
                     format_bytes(io.kernel_written_bytes), io.threads, io.threads == 1 ? "" : "s",
                     format_bytes(io.traced_written_bytes), format_bytes(io.kernel_read_bytes));
}

nlohmann::json io_accounting_json(const std::optional<IoAccountingRecord>& io) {
  if (!io) return nullptr;
  nlohmann::json out = {
      {"threads", io->threads},
      {"processes_running", io->processes_running},
      {"kernel_read_bytes", io->kernel_read_bytes},
      {"kernel_written_bytes", io->kernel_written_bytes},
      {"traced_written_bytes", io->traced_written_bytes},
      {"unseen_written_bytes", io->unseen_written_bytes()},
      {"allowance_bytes", io->allowance_bytes()},
      {"notice", nullptr},
  };
  if (auto n = io_accounting_notice(*io)) out["notice"] = *n;
  return out;
}

}  // namespace ckpt
