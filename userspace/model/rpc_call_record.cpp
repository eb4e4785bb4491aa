#include "model/rpc_call_record.h"

namespace ckpt {

RpcCallRecord rpc_call_record(const RpcEvent& ev) { return rpc_call_record(ev, ev.op, ev.server); }

}  // namespace ckpt
