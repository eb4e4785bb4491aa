// The node's measured storage maxima (`ckptscope calibrate --storage DIR`):
// one entry per mount, kept in a JSON file that run, attach, demo and the
// exporter read (docs/calibrate.md). Root's is /var/lib/ckptscope/maxima.json,
// anyone else's $XDG_STATE_HOME/ckptscope/maxima.json
// (~/.local/state/ckptscope/maxima.json); $CKPTSCOPE_MAXIMA_FILE names
// another.
//
//   {"version": 1,
//    "mounts": [{"mount_point": "/data", "device": "259:2", "fs_type": "ext4",
//                "source": "/dev/nvme0n1p2", "dir": "/data/scratch",
//                "write_Bps": 2.1e9, "read_Bps": 3.4e9, "streams": 4,
//                "bytes": 1073741824, "bytes_read": 1073741824,
//                "block_bytes": 1048576, "write_seconds": 0.51,
//                "read_seconds": 0.32, "direct": true, "io": "O_DIRECT",
//                "date": "2026-12-02T10:11:12Z", "tool_version": "0.1.0"}],
//    "memory": {"one_thread_Bps": 1.1e10, "all_threads_Bps": 3.9e10, "threads": 16,
//               "bytes": 268435456, "rounds": 5, "date": "2026-12-02T10:12:00Z",
//               "tool_version": "0.1.0"}}
//
// "memory" (`ckptscope calibrate --memory`) is the node's, not a mount's: it
// may be absent, and a file without it reads as before.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/expected.h"

namespace ckpt {

struct StorageCalibration {
  // The mount, as the mount table names it: an entry applies to a file when
  // the file's device is mounted here with this type from this source. The
  // device number is kept for the record: anonymous ones (NFS, tmpfs)
  // change from one mount to the next.
  std::string mount_point;
  std::string device;  // "259:2"
  std::string fs_type;
  std::string source;  // "/dev/nvme0n1p2", "10.0.0.5:/export"
  std::string dir;     // the directory that was measured
  double write_Bps = 0;
  double read_Bps = 0;
  unsigned streams = 0;
  uint64_t bytes = 0;       // written, all streams together
  uint64_t bytes_read = 0;  // read back
  uint64_t block_bytes = 0;
  double write_seconds = 0;
  double read_seconds = 0;
  bool direct = false;  // O_DIRECT; otherwise buffered with fdatasync
  std::string io;       // "O_DIRECT", or why not: "buffered + fdatasync (O_DIRECT: ...)"
  std::string date;     // UTC, ISO 8601: "2026-12-02T10:11:12Z"
  std::string tool_version;

  [[nodiscard]] bool same_mount(const StorageCalibration& o) const {
    return mount_point == o.mount_point && fs_type == o.fs_type && source == o.source;
  }
  // The stage maxima's max_source: "calibrated 2026-12-02".
  [[nodiscard]] std::string max_source() const;
};

// The node's memory-copy bandwidth: the serialize stage's ceiling. Its
// threads turn tensors into file bytes (or file bytes back into tensors),
// and every byte crosses the CPU at least once as a copy; a copy of buffers
// far larger than the caches is the fastest that can go (docs/calibrate.md).
struct MemoryCalibration {
  double one_thread_Bps = 0;   // bytes copied per second by one thread
  double all_threads_Bps = 0;  // by `threads` threads at once, all together
  unsigned threads = 0;        // the CPUs calibrate could run on
  uint64_t bytes = 0;          // copied per round (split over the threads)
  unsigned rounds = 0;         // timed rounds of each; the best is kept
  std::string date;            // UTC, ISO 8601
  std::string tool_version;
  // One thread's copy into and out of the page cache through a 1 MiB
  // buffer: host_io's ceiling (memory_bench.h). Absent in files calibrated before they were.
  std::optional<double> page_cache_write_Bps;
  std::optional<double> page_cache_read_Bps;

  // The ceiling for a stage done by `stage_threads` threads: each copies at
  // one thread's speed, and together no faster than all of them did.
  [[nodiscard]] double ceiling_Bps(size_t stage_threads) const;
  // "calibrated 2026-12-02 (memory copy, 2 threads)".
  [[nodiscard]] std::string max_source(size_t stage_threads) const;
  // host_io's ceiling on `stage_threads` threads: one thread's page-cache
  // copy each, together scaled as the memory copy scaled over every CPU;
  // nullopt when the file has no page-cache figure.
  [[nodiscard]] std::optional<double> page_cache_ceiling_Bps(bool write,
                                                             size_t stage_threads) const;
  // "calibrated 2026-12-02 (page-cache read, 1 thread)".
  [[nodiscard]] std::string page_cache_source(bool write, size_t stage_threads) const;
};

// A file's entries, and what was wrong with the ones left out (one line
// each, naming the file and the entry).
struct MaximaFile {
  std::vector<StorageCalibration> mounts;
  std::optional<MemoryCalibration> memory;
  std::vector<std::string> skipped;
  // The entries left out, as JSON text: a calibration that rewrites the file
  // keeps them as they were (someone may mend them), rather than drop them.
  std::vector<std::string> unread_mounts;
  std::string unread_memory;
};

inline constexpr int kMaximaFileVersion = 1;

nlohmann::json to_json(const StorageCalibration& c);
// One entry; an error names the field ("/mounts/2/write_Bps: must be a
// positive number").
Expected<StorageCalibration> calibration_from_json(const nlohmann::json& j, std::string_view where);
// A whole file's text. An error when it is not a maxima file at all (not
// JSON, no "mounts" list, a version this build does not read); a bad entry
// is skipped and said in `skipped`.
Expected<MaximaFile> parse_maxima_file(std::string_view text, std::string_view origin);
nlohmann::json to_json(const MemoryCalibration& m);
Expected<MemoryCalibration> memory_calibration_from_json(const nlohmann::json& j,
                                                         std::string_view where);
std::string maxima_file_text(const std::vector<StorageCalibration>& mounts,
                             const std::optional<MemoryCalibration>& memory = std::nullopt);
// A whole file, the entries left out when it was read included.
std::string maxima_file_text_of(const MaximaFile& file);

// Reads `path`; nullopt when there is no such file (nothing calibrated yet).
Expected<std::optional<MaximaFile>> load_maxima_file(const std::string& path);
// Adds `c` to the file at `path`, replacing the entry of the same mount
// (creating the file and its directory, mode 0755, when missing). Written to
// a temporary file and renamed, under a lock, so readers never see half a
// file and two calibrations at once both land. An existing file that cannot
// be read as a maxima file is left alone: an error names it and the problem.
Expected<void> save_calibration(const std::string& path, const StorageCalibration& c);
// The same for the node's memory calibration, replacing the one there.
Expected<void> save_calibration(const std::string& path, const MemoryCalibration& m);

// Where a calibration is to be saved: `given` when not empty, else
// maxima_file_for_writing(maxima_file_inputs()). An error when there is no
// such place, or a file is there that is not a maxima file: found before a
// measurement, not after it.
Expected<std::string> maxima_file_to_save_in(const std::string& given);

// What decides where the file is: who runs, and their environment.
struct MaximaFileInputs {
  bool root = false;
  std::string override_path;   // $CKPTSCOPE_MAXIMA_FILE
  std::string xdg_state_home;  // $XDG_STATE_HOME
  std::string home;            // $HOME
};
MaximaFileInputs maxima_file_inputs();
inline constexpr std::string_view kNodeMaximaFile = "/var/lib/ckptscope/maxima.json";
// Where calibrate writes: the override, root's node file, else the user's
// state file. An error when a user has no home to put it in.
Expected<std::string> maxima_file_for_writing(const MaximaFileInputs& in);
// What the maxima are read from, first match first: the override alone when
// set; else a user's own file, then the node file (so a job of anyone's
// sees what root calibrated).
std::vector<std::string> maxima_files_for_reading(const MaximaFileInputs& in);

// "2026-12-02T10:11:12Z" for a wall-clock time in seconds.
std::string iso8601_utc(int64_t unix_seconds);

}  // namespace ckpt
