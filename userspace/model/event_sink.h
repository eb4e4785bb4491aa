// Where a source hands the events it decodes: the stitcher of a job, or the
// node collector that routes each event to its workload's stitcher. It lives
// in model/ so sources depend on the event types, not on what consumes them.
#pragma once

#include "model/events.h"

namespace ckpt {

class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void on_event(Event&& event) = 0;
};

}  // namespace ckpt
