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
 * The fd table walk, files_struct->fdt->fd[fd], stable since v2.6.x. `task`
 * is a BTF pointer (bpf_get_current_task_btf), so the walk is plain loads;
 * only the array slot needs a probe read. max_fds bounds a bad fd from user
 * space.
 */
static __always_inline struct file *ckpt_fd_to_file(struct task_struct *task, int fd)
{
	struct files_struct *files = task->files;
	struct fdtable *fdt;
	struct file **fds;
	struct file *file = NULL;

	if (!files || fd < 0)
		return NULL;
	fdt = files->fdt;
	if (!fdt || (unsigned int)fd >= fdt->max_fds)
		return NULL;
	fds = fdt->fd;
	if (!fds)
		return NULL;
	bpf_probe_read_kernel(&file, sizeof(file), &fds[fd]);
	return file;
}

/*
 * Syscall number and arguments from the user registers that raw_syscalls
 * sys_enter/sys_exit pass (arch/x86/entry/calling.h: rdi rsi rdx r10 r8 r9;
 * arm64: x0-x5, the number in syscallno).
 */
#if defined(__TARGET_ARCH_x86)
static __always_inline long ckpt_syscall_arg(struct pt_regs *regs, int n)
{
	switch (n) {
	case 0:
		return regs->di;
	case 1:
		return regs->si;
	case 2:
		return regs->dx;
	case 3:
		return regs->r10;
	case 4:
		return regs->r8;
	default:
		return regs->r9;
	}
}

static __always_inline long ckpt_syscall_nr(struct pt_regs *regs)
{
	return regs->orig_ax;
}
#elif defined(__TARGET_ARCH_arm64)
static __always_inline long ckpt_syscall_arg(struct pt_regs *regs, int n)
{
	/* x0 is overwritten by the return value; orig_x0 keeps the argument. */
	return n == 0 ? regs->orig_x0 : regs->regs[n];
}

static __always_inline long ckpt_syscall_nr(struct pt_regs *regs)
{
	return regs->syscallno;
}
#else
#error "ckptscope: add this architecture's syscall registers to core_fixes.bpf.h"
#endif

/* O_DIRECT differs by architecture (include/uapi/asm-generic/fcntl.h 040000;
 * arch/arm64/include/uapi/asm/fcntl.h 0200000), and vmlinux.h has no macros. */
#if defined(__TARGET_ARCH_arm64)
#define CKPT_O_DIRECT 0200000
#else
#define CKPT_O_DIRECT 040000
#endif

static __always_inline __u32 ckpt_file_is_direct(struct file *file)
{
	return (BPF_CORE_READ(file, f_flags) & CKPT_O_DIRECT) != 0;
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
 * Whether `task` can only run on the CPU it last ran on: inside a
 * migrate_disable() section. fentry/fexit programs run in one (the
 * trampoline's __bpf_prog_enter*, kernel/bpf/trampoline.c, since v5.8), so a
 * thread switched out inside one resumes on the same CPU. The counter is in
 * task_struct on SMP kernels since v5.11 (commit af449901b84c "sched: Add
 * migrate_disable()"); where it is not, every task reads as pinned, and the
 * probes keep every state in task storage.
 */
static __always_inline bool ckpt_task_pinned_to_cpu(struct task_struct *task)
{
	if (!bpf_core_field_exists(task->migration_disabled))
		return true;
	return BPF_CORE_READ(task, migration_disabled) != 0;
}

/*
 * Into *nr, the system call `task` is in, from the registers its kernel entry
 * saved: negative when it entered the kernel some other way (arm64: -1 for
 * any; x86-64: -1 for an exception without an error code, the vector
 * sign-extended for an interrupt, so the timer's and the IPIs' are negative,
 * a few device vectors and page-fault error codes are not). False where the
 * kernel cannot say: bpf_task_pt_regs came in v5.15 (commit dd6e10fbd9fb
 * "bpf: Add bpf_task_pt_regs() helper").
 */
static __always_inline bool ckpt_task_syscall_nr(struct task_struct *task, long *nr)
{
	if (!bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_task_pt_regs))
		return false;
	*nr = ckpt_syscall_nr((struct pt_regs *)bpf_task_pt_regs(task));
	return true;
}

/*
 * The head page of a compound page: a tail page keeps its head's address with
 * bit 0 set in compound_head (include/linux/page-flags.h _compound_head(),
 * the same since v4.6), a head or order-0 page has bit 0 clear. A head page is
 * its folio (struct folio overlays it).
 */
static __always_inline struct page *ckpt_compound_head(struct page *page)
{
	unsigned long head = BPF_CORE_READ(page, compound_head);

	return (head & 1) ? (struct page *)(head - 1) : page;
}

/* folio->mapping of an anonymous folio (a private mapping's copy-on-write
 * page) has bit 0 set: PAGE_MAPPING_ANON, FOLIO_MAPPING_ANON in 6.18. */
#define CKPT_PAGE_MAPPING_ANON 0x1UL

/*
 * sk_protocol was an 8-bit bitfield until v5.6 (commit bf9765145b85 "sock:
 * Make sk_protocol a 16-bit value"); the probed bitfield read handles both.
 */
static __always_inline __u16 ckpt_sk_protocol(const struct sock *sk)
{
	return (__u16)BPF_CORE_READ_BITFIELD_PROBED(sk, sk_protocol);
}

/*
 * Ring-buffer wakeups. By default every submit wakes a waiting consumer
 * (an irq_work and a context switch, microseconds per record), which made a
 * traced write(2) cost ~3 us here. Wake user space only once `threshold`
 * bytes are waiting; it also drains the ring on a timer, so nothing waits
 * longer than its poll period.
 */
static __always_inline __u64 ckpt_wakeup_flags(void *ringbuf, __u64 threshold)
{
	return bpf_ringbuf_query(ringbuf, BPF_RB_AVAIL_DATA) >= threshold ? BPF_RB_FORCE_WAKEUP
									  : BPF_RB_NO_WAKEUP;
}

/*
 * Calls fn(i, ctx) for i = 0, 1, ... until it returns non-zero or the bound;
 * returns the bound. bpf_loop (v5.17, commit e6f2dd0f8067 "bpf: Add bpf_loop
 * helper") walks up to 64K fds in one verified call; before it, a bounded
 * loop the verifier unrolls must stay short (1024 turns of an fd check hit
 * its 8192-jump limit on 6.1), so older kernels see the first 256.
 */
#define CKPT_FD_SCAN_LOOP 65536
#define CKPT_FD_SCAN_UNROLLED 256
static __always_inline unsigned int ckpt_for_each_fd(long (*fn)(__u32, void *), void *ctx)
{
	if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_loop)) {
		bpf_loop(CKPT_FD_SCAN_LOOP, fn, ctx, 0);
		return CKPT_FD_SCAN_LOOP;
	}
	for (__u32 i = 0; i < CKPT_FD_SCAN_UNROLLED; i++)
		if (fn(i, ctx))
			break;
	return CKPT_FD_SCAN_UNROLLED;
}

#endif /* CKPTSCOPE_CORE_FIXES_BPF_H */
