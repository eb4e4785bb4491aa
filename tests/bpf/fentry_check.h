// Whether this kernel attaches fentry programs, checked independently of
// probes/kernel_features.h (tests/machine_checks.h says why).
#pragma once

#include <linux/bpf.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace ckpt::test {

// Empty when an fentry program attaches to vfs_read here; otherwise why not,
// starting "the kernel refuses fentry". The smallest such program (return
// 0), loaded and attached with libbpf's low-level calls: a second,
// independent answer to the question probes/kernel_features.h answers for
// the product. Needs root (the caller checks first).
inline std::string fentry_refusal() {
  btf* vmlinux = btf__load_vmlinux_btf();
  if (vmlinux == nullptr) return "the kernel refuses fentry: no vmlinux BTF";
  const int func = btf__find_by_name_kind(vmlinux, "vfs_read", BTF_KIND_FUNC);
  btf__free(vmlinux);
  if (func < 0) return "the kernel refuses fentry: vfs_read is not in its BTF";
  bpf_insn insns[2] = {};
  insns[0].code = BPF_ALU64 | BPF_MOV | BPF_K;  // r0 = 0
  insns[1].code = BPF_JMP | BPF_EXIT;
  bpf_prog_load_opts opts{};
  opts.sz = sizeof(opts);
  opts.expected_attach_type = BPF_TRACE_FENTRY;
  opts.attach_btf_id = static_cast<__u32>(func);
  const int prog = bpf_prog_load(BPF_PROG_TYPE_TRACING, "fentry_check", "GPL", insns, 2, &opts);
  if (prog < 0)
    return std::string("the kernel refuses fentry: loading a program on vfs_read: ") +
           std::strerror(errno);
  int link = bpf_link_create(prog, 0, BPF_TRACE_FENTRY, nullptr);
  if (link < 0 && errno == EINVAL) link = bpf_raw_tracepoint_open(nullptr, prog);
  const int attach_errno = errno;
  close(prog);
  if (link < 0)
    return std::string("the kernel refuses fentry: attaching to vfs_read: ") +
           std::strerror(attach_errno);
  close(link);
  return {};
}

}  // namespace ckpt::test
