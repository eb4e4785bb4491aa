/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Every kernel-version difference the probes care about lives here, resolved
 * with CO-RE field/type checks at load time (never LINUX_VERSION_CODE).
 */
#ifndef CKPTSCOPE_CORE_FIXES_BPF_H
#define CKPTSCOPE_CORE_FIXES_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

/* S_IFMT bits of i_mode: uapi constants, not in vmlinux.h. */
#define CKPT_S_IFMT 00170000
#define CKPT_S_IFREG 0100000
#define CKPT_S_IFDIR 0040000

/*
 * tcp_sock.bytes_sent arrived in v4.19 (commit ba113c3aa79a "tcp: add data
 * bytes sent stats"); bytes_acked/bytes_received exist since v4.1.
 */
static __always_inline __u64 ckpt_tcp_bytes_sent(const struct tcp_sock *tp)
{
	if (bpf_core_field_exists(tp->bytes_sent))
		return BPF_CORE_READ(tp, bytes_sent);
	return 0;
}

/*
 * tcp_sock.snd_cwnd is still a plain field; v5.19 added accessors
 * (commit 40570375356c "tcp: add accessors to read/set tp->snd_cwnd") without
 * renaming it. Kept here so a future rename is handled in one place.
 */
static __always_inline __u32 ckpt_tcp_snd_cwnd(const struct tcp_sock *tp)
{
	return BPF_CORE_READ(tp, snd_cwnd);
}

/*
 * The fd table walk: files_struct->fdt->fd[fd]. Stable since v2.6.x, but
 * the max_fds bound must be checked: a racing close can shrink nothing, and a
 * bad fd from user space must not read past the array.
 */
static __always_inline struct file *ckpt_fd_to_file(struct task_struct *task, int fd)
{
	struct files_struct *files = BPF_CORE_READ(task, files);
	struct fdtable *fdt;
	struct file **fds;
	struct file *file = NULL;
	unsigned int max_fds;

	if (!files || fd < 0)
		return NULL;
	fdt = BPF_CORE_READ(files, fdt);
	if (!fdt)
		return NULL;
	max_fds = BPF_CORE_READ(fdt, max_fds);
	if ((unsigned int)fd >= max_fds)
		return NULL;
	fds = BPF_CORE_READ(fdt, fd);
	if (!fds)
		return NULL;
	bpf_probe_read_kernel(&file, sizeof(file), &fds[fd]);
	return file;
}

/*
 * Whether the exiting task is the last of its thread group. do_exit()
 * decrements signal->live before trace_sched_process_exit() on every kernel we
 * support; recent kernels also pass a group_dead argument to the tracepoint,
 * older ones do not, so read the counter, which works on both.
 */
static __always_inline bool ckpt_task_group_dead(struct task_struct *task)
{
	return BPF_CORE_READ(task, signal, live.counter) == 0;
}

/*
 * sk_protocol was an 8-bit bitfield until v5.6 (commit bf9765145b85 "sock:
 * Make sk_protocol a 16-bit value"); the probed bitfield read handles both.
 */
static __always_inline __u16 ckpt_sk_protocol(const struct sock *sk)
{
	return (__u16)BPF_CORE_READ_BITFIELD_PROBED(sk, sk_protocol);
}

#endif /* CKPTSCOPE_CORE_FIXES_BPF_H */
