// The CUPTI entry points libckptscope_cupti.so calls, as a table of function
// pointers, and CUPTI_CALL, the check every call goes through.
//
// The library always runs on real_cupti(). The table exists so the init path
// and the completion handler can also be run by unit tests on a machine
// without a GPU: there every CUPTI call that needs the driver fails with
// CUPTI_ERROR_UNKNOWN, so a test that wants to see, say, what happens when
// cuptiSubscribe succeeds and cuptiActivityEnable fails swaps those entries,
// and keeps the real ones for everything else (cuptiActivityGetNextRecord
// walks real buffers without a driver).
#pragma once

#include <cupti.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

namespace ckpt::cupti {

struct CuptiApi {
  CUptiResult (*cuptiGetVersion)(uint32_t* version) = nullptr;
  CUptiResult (*cuptiSubscribe_v2)(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                                   void* userdata, CUpti_SubscriberParams* params) = nullptr;
  CUptiResult (*cuptiUnsubscribe)(CUpti_SubscriberHandle subscriber) = nullptr;
  CUptiResult (*cuptiActivityRegisterTimestampCallback)(CUpti_TimestampCallbackFunc f) = nullptr;
  CUptiResult (*cuptiGetTimestamp)(uint64_t* timestamp) = nullptr;
  CUptiResult (*cuptiActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc requested,
                                                CUpti_BuffersCallbackCompleteFunc completed) =
      nullptr;
  CUptiResult (*cuptiActivityEnable)(CUpti_ActivityKind kind) = nullptr;
  CUptiResult (*cuptiActivityDisable)(CUpti_ActivityKind kind) = nullptr;
  CUptiResult (*cuptiActivityFlushAll)(uint32_t flag) = nullptr;
  CUptiResult (*cuptiActivityGetNextRecord)(uint8_t* buffer, size_t valid_bytes,
                                            CUpti_Activity** record) = nullptr;
  CUptiResult (*cuptiActivityGetNumDroppedRecords)(CUcontext context, uint32_t stream_id,
                                                   size_t* dropped) = nullptr;
};

// The table of the CUPTI library this one is linked with.
const CuptiApi& real_cupti();

// CUPTI's name for a result ("CUPTI_ERROR_UNKNOWN"), or the number when it has none.
std::string result_name(CUptiResult result);

// One line on stderr, "ckptscope-cupti: <text>\n", in a single write(2) so
// it does not interleave with the job's own output mid-line.
void log_line(std::string_view text);

// Logs "<call> failed: <CUPTI_ERROR_...>" unless this call site already has.
void log_cupti_failure(CUptiResult result, const char* call, std::atomic<bool>& logged);

}  // namespace ckpt::cupti

// Every CUPTI call goes through one of these (Kineto's habit): the result is
// checked, a failure is logged once per call site with CUPTI's name for it
// and the call's text, and the result is returned for the caller to act on.
// The job always continues. CUPTI_CALL_ALLOW names one non-success result
// that is an expected answer at that site (the end of a buffer, another
// subscriber) and is therefore not logged.
#define CUPTI_CALL_ALLOW(call, allowed)                                                \
  ([&]() -> CUptiResult {                                                              \
    static std::atomic<bool> ckpt_cupti_logged_{false};                                \
    const CUptiResult ckpt_cupti_result_ = (call);                                     \
    if (ckpt_cupti_result_ != CUPTI_SUCCESS && ckpt_cupti_result_ != (allowed))        \
      ::ckpt::cupti::log_cupti_failure(ckpt_cupti_result_, #call, ckpt_cupti_logged_); \
    return ckpt_cupti_result_;                                                         \
  }())
#define CUPTI_CALL(call) CUPTI_CALL_ALLOW(call, CUPTI_SUCCESS)
