// Scale projection (`ckptscope project`, `report --project`): from the traces
// of a job's checkpoints on one or a few nodes, what a checkpoint will take
// on N nodes, which side will hold it back, and from which N on the shared
// side (the storage server and its link) does. The model is one page
// (docs/projection.md): every node is the same closed loop of RPCs in flight
// between its own resources (a delay, measured) and the one shared server (a
// queue whose service time is the storage maximum's), solved by mean-value
// analysis.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/report/report.h"
#include "common/expected.h"
#include "model/records.h"

namespace ckpt::projection {

// The side that holds a checkpoint back is the shared one from the N whose
// scaling efficiency (one node's time over N nodes', same bytes per node)
// falls below this: a tenth of each node's time lost to waiting on the others.
inline constexpr double kSharedSideEfficiency = 0.9;
// The least a new checkpoint's mean RPCs in flight per node is taken to stray
// from its samples' (projection.cpp): the count is a whole number's average.
inline constexpr double kInFlightResolution = 1.0;
// How far the crossover is searched for.
inline constexpr uint32_t kMaxCrossoverNodes = 100000;
// The traces' times are CLOCK_MONOTONIC ns; the model works in seconds.
inline constexpr double kNsPerS = 1e9;

struct ProjectionOptions {
  std::vector<uint32_t> nodes;  // the N to predict, ascending, each >= 1
  // The shared side's maxima (payload bytes per second): the flags, else the
  // traces' config (storage.write_bandwidth / read_bandwidth), else fitted
  // from runs at two scales when the larger one shows the shared side.
  std::optional<double> storage_write_max_Bps;
  std::optional<double> storage_read_max_Bps;
  // Where they came from, for the output ("--storage-write-max", "config:FILE").
  std::string storage_write_max_source = "--storage-write-max";
  std::string storage_read_max_source = "--storage-read-max";
};

// What one node's part of one measured checkpoint says (docs/projection.md).
struct Sample {
  uint32_t scale = 0;       // nodes in its job checkpoint
  std::string node;         // the trace's node name
  uint64_t checkpoint = 0;  // the job checkpoint's index in the report
  uint64_t bytes = 0;       // checkpoint data moved by this node
  uint64_t duration_ns = 0;
  uint64_t rpcs = 0;               // READ/WRITE RPCs carrying its files' pages
  uint64_t rpc_payload = 0;        // their payload bytes
  uint64_t rpc_window_ns = 0;      // first RPC start to last RPC end
  uint64_t rpc_start_wall_ns = 0;  // the first RPC's start on the wall clock
  double in_flight = 0;            // mean RPCs in flight over the window (Little's law)
  double payload_per_rpc = 0;
  double execute_ms = 0;  // mean RPC start -> done
  double queue_ms = 0;    // mean RPC start -> transmission
  double rtt_ms = 0;      // mean transmission -> reply
  std::vector<StageRecord> stages;
  std::string bottleneck;    // the stitcher's, for this node
  double node_delay_ms = 0;  // the model's fit: the node's own time per RPC
  // Ran faster than an even share of the shared maximum at its scale: its
  // node's own time is taken as 0 (shares were uneven, or the maximum is low).
  bool above_max = false;
};

// One predicted figure: the model on the median sample, and the range over
// the samples (each measured checkpoint's own calibration).
struct Range {
  double value = 0;
  double low = 0;
  double high = 0;
};

struct StageForecast {
  std::string name;
  Range busy_s;
};

struct Forecast {
  uint32_t nodes = 0;
  Range duration_s;
  Range aggregate_Bps;
  Range fraction_of_max;
  Range rpc_wait_ms;       // mean RPC time not spent in the shared side's service (docs)
  Range rpc_wait_rise_ms;  // rpc_wait_ms less its value at the smallest measured scale
  Range rpc_execute_ms;    // mean RPC start -> done
  Range efficiency;        // one node's time over this N's, same bytes per node
  Range shared_utilisation;
  std::vector<StageForecast> stages;
  std::string side;        // "node" or "shared"
  std::string bottleneck;  // a stage name
};

// What the traces measured at one scale: the comparison row beside a forecast.
struct Measured {
  uint32_t nodes = 0;
  uint32_t checkpoints = 0;  // job checkpoints at this scale
  double duration_s = 0;     // median job checkpoint duration
  double aggregate_Bps = 0;
  uint64_t rpcs = 0;            // the data RPCs the means are over
  double rpc_wait_ms = 0;       // mean execute less the shared side's service, as forecast
  double rpc_wait_rise_ms = 0;  // less its value at the smallest measured scale
  double rpc_execute_ms = 0;
  double rpc_queue_ms = 0;  // the kernel's split of execute: start -> transmission
  double rpc_rtt_ms = 0;    // transmission -> reply
  double efficiency = 0;    // the smallest scale's median duration over this one's
  std::string side;         // "shared" when efficiency is below kSharedSideEfficiency
  std::string bottleneck;   // the stitcher's, on the slowest node
};

struct DirectionProjection {
  Direction direction = Direction::Save;
  // False when the traces cannot support a forecast; `why` says what is missing.
  bool supported = false;
  std::string why;
  std::vector<std::string> notes;  // what the reader should know (assumptions met or not)
  std::vector<Measured> measured;  // by scale, ascending
  std::vector<Sample> samples;
  uint64_t bytes_per_node = 0;  // median
  std::optional<double> shared_max_Bps;
  std::string shared_max_source;  // "--storage-write-max", "config:...", "fitted from N=1 and N=2"
  double service_ms = 0;          // the shared side's time per RPC (payload / maximum)
  double node_delay_ms = 0;       // the node's own time per RPC (median sample's fit)
  double in_flight_per_node = 0;  // median
  std::optional<uint32_t> crossover;      // the smallest N whose bottleneck is the shared side
  std::optional<uint32_t> crossover_low;  // over the samples' range
  std::optional<uint32_t> crossover_high;
  std::optional<uint32_t> crossover_on_grid;   // the smallest asked-for N forecast "shared"
  std::optional<uint32_t> measured_crossover;  // the smallest measured scale that is "shared"
  std::string shared_stage;                    // the stage the shared side shows as
  std::vector<Forecast> forecasts;
};

struct Projection {
  std::string job_name;
  std::vector<std::string> traces;
  std::vector<uint32_t> nodes;
  std::vector<DirectionProjection> directions;  // save, then load, those the traces have
};

// Errors: no N, an N of 0, no checkpoint in the traces.
Expected<Projection> project(const report::Report& report, const ProjectionOptions& options);

// Renderings: the JSON contract (docs/projection.md), a terminal table,
// Markdown, and an HTML section (for the report) or a whole page.
nlohmann::json projection_json(const Projection& p);
std::string projection_table(const Projection& p);
std::string projection_markdown(const Projection& p);
std::string projection_html_section(const Projection& p);
std::string projection_html_page(const Projection& p);

// "4,8,64" -> {4, 8, 64}; sorted, duplicates dropped. Errors name the bad item.
Expected<std::vector<uint32_t>> parse_node_counts(const std::string& text);

}  // namespace ckpt::projection
