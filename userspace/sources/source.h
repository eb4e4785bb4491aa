// One interface for everything that produces events (Pixie's stirling
// habit): BPF ring-buffer decoders and, later, file-polling sources such as
// /proc/self/mountstats. A registry holds them; the collector drives them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/event_sink.h"
#include "model/records.h"

namespace ckpt {

class Source {
 public:
  explicit Source(EventSink& sink) : sink_(sink) {}
  virtual ~Source() = default;
  Source(const Source&) = delete;
  Source& operator=(const Source&) = delete;

  [[nodiscard]] virtual std::string_view name() const = 0;
  // Sources that are polled rather than fed (files, counters) do their work here.
  virtual void poll(uint64_t /*now_ns*/) {}
  // Events this source lost on the user-space side (malformed records...).
  [[nodiscard]] virtual std::vector<DropRecord> drops() const { return {}; }

 protected:
  void emit(Event&& e) { sink_.on_event(std::move(e)); }

 private:
  EventSink& sink_;
};

// A source fed raw records from a BPF ring buffer.
class RecordSource : public Source {
 public:
  using Source::Source;
  virtual void on_record(const void* data, size_t size) = 0;
};

class SourceRegistry {
 public:
  Source& add(std::unique_ptr<Source> s) {
    sources_.push_back(std::move(s));
    return *sources_.back();
  }
  void poll_all(uint64_t now_ns) {
    for (auto& s : sources_) s->poll(now_ns);
  }
  [[nodiscard]] std::vector<DropRecord> drops() const {
    std::vector<DropRecord> out;
    for (const auto& s : sources_)
      for (auto& d : s->drops()) out.push_back(std::move(d));
    return out;
  }
  [[nodiscard]] const std::vector<std::unique_ptr<Source>>& sources() const { return sources_; }

 private:
  std::vector<std::unique_ptr<Source>> sources_;
};

}  // namespace ckpt
