/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Mapped files, from tracepoints (so in both probe modes, except the
 * fault tracepoints the file layer replaces with filemap_fault's
 * trampolines): the pages a fault maps are read, the folios a store through
 * a shared mapping dirties are written, and the page cache filling under a
 * read fault is what the storage did for it. Included by jobio.bpf.c.
 */
#ifndef CKPTSCOPE_JOBIO_MAPPINGS_BPF_H
#define CKPTSCOPE_JOBIO_MAPPINGS_BPF_H

#include "jobio_state.bpf.h"

/* ---- the page cache under a mapped file ------------------------------------------ */

/* Pages in a folio: 1, or 1 << order for a large one (PG_head set). The
 * order is in _folio_order in 6.1's struct folio, in the low byte of
 * _flags_1 in 6.12's and later (folio_large_order() in mm.h). */
struct folio___v61 {
	unsigned char _folio_order;
} __attribute__((preserve_access_index));

static __always_inline __u64 folio_pages(struct folio *folio)
{
	unsigned long flags = 0;
	unsigned int order;

	bpf_probe_read_kernel(&flags, sizeof(flags), folio);
	if (!(flags & (1UL << bpf_core_enum_value(enum pageflags, PG_head))))
		return 1;
	if (bpf_core_field_exists(((struct folio___v61 *)folio)->_folio_order))
		order = BPF_CORE_READ((struct folio___v61 *)folio, _folio_order);
	else
		order = BPF_CORE_READ(folio, _flags_1) & 0xff;
	return 1ULL << (order & 31);
}

/*
 * A folio entered the page cache, in the running thread: read from storage
 * (or newly written). Counted for a mapping's read fold when this thread is
 * faulting on that file: inside filemap_fault (file layer), or after the
 * mm_filemap_fault tracepoint outside any call (syscall mode).
 */
SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(on_page_cache_add, struct folio *folio)
{
	struct thread_state *st;
	struct inode *inode;

	if (!mmap_folds_open)
		return 0;
	st = running_state(bpf_get_current_task_btf());
	if (!st || !st->mfold.faults || st->mfold.op != CKPT_OP_READ)
		return 0;
	if (probe_mode == CKPT_MODE_FILE_LAYER ? !st->mfold.in_fault : st->call != CALL_NONE)
		return 0;
	inode = BPF_CORE_READ(folio, mapping, host);
	if (!inode || BPF_CORE_READ(inode, i_ino) != st->mfold.ino ||
	    BPF_CORE_READ(inode, i_sb, s_dev) != st->mfold.dev)
		return 0;
	st->mfold.storage_pages += folio_pages(folio);
	return 0;
}

/* ---- which faults write ---------------------------------------------------------- */

/*
 * The last page fault on each CPU: its thread and the x86 error code
 * (arch/x86/include/asm/trap_pf.h). mm_filemap_fault does not say whether
 * the fault reads or writes, and a write fault on a shared mapping reads the
 * page in only to dirty it: a store, never a read of the checkpoint. The
 * fault tracepoints run on every fault of the node, so they keep no per-thread
 * state: a slot per CPU, read back by the same thread's filemap tracepoints,
 * which run in the same fault. A fault that sleeps and resumes on another
 * CPU before reaching filemap_fault finds another thread's entry and counts
 * as a read, as it did before the slot.
 */
struct last_fault {
	__u32 tid;
	__u32 error_code;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct last_fault);
} last_faults SEC(".maps");

#define CKPT_X86_PF_WRITE 0x2 /* X86_PF_WRITE */
#define CKPT_X86_PF_USER 0x4  /* X86_PF_USER */

static __always_inline int fault_taken(unsigned long error_code)
{
	__u32 zero = 0;
	struct last_fault *f = bpf_map_lookup_elem(&last_faults, &zero);

	if (f) {
		f->tid = (__u32)bpf_get_current_pid_tgid();
		f->error_code = (__u32)error_code;
	}
	return 0;
}

/* exceptions:page_fault_user and page_fault_kernel (x86 only), before the
 * fault is handled: a fault in the kernel on a user address (a read(2) into
 * a mapped buffer) reaches filemap_fault too. */
SEC("tp_btf/page_fault_user")
int BPF_PROG(on_user_fault, unsigned long address, struct pt_regs *regs, unsigned long error_code)
{
	return fault_taken(error_code);
}

SEC("tp_btf/page_fault_kernel")
int BPF_PROG(on_kernel_fault, unsigned long address, struct pt_regs *regs, unsigned long error_code)
{
	return fault_taken(error_code);
}

/* This CPU's last fault is the running thread's, and its error code, if so. */
static __always_inline bool running_thread_faulted(__u32 *error_code)
{
	__u32 zero = 0;
	struct last_fault *f = bpf_map_lookup_elem(&last_faults, &zero);

	if (!f || f->tid != (__u32)bpf_get_current_pid_tgid())
		return false;
	*error_code = f->error_code;
	return true;
}

/* ---- page faults seen by tracepoints (syscall mode, 6.11+) ---------------------- */

/* mm_filemap_fault and mm_filemap_map_pages: in the 6.12 and 6.18 BTF, not
 * in 6.1's; they need no trampolines. */
/* Pages [first, last] of `mapping` mapped for the running thread to read. */
static __always_inline int mapping_touched(struct address_space *mapping, __u64 first, __u64 last)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 now = bpf_ktime_get_ns();
	struct thread_state *st = traced_thread_state(task, now);
	struct inode *inode;

	if (!st)
		return 0;
	inode = BPF_CORE_READ(mapping, host);
	if (inode)
		mmap_touch(st, bpf_get_current_pid_tgid(), inode, first, last, now, CKPT_OP_READ);
	return 0;
}

SEC("tp_btf/mm_filemap_fault")
int BPF_PROG(on_fault_tp, struct address_space *mapping, unsigned long index)
{
	__u32 error_code;

	/* A write fault (do_shared_fault, do_cow_fault) maps what it is about
	 * to store to: the store is counted when it dirties the folio. */
	if (running_thread_faulted(&error_code) && (error_code & CKPT_X86_PF_WRITE))
		return 0;
	return mapping_touched(mapping, index, index);
}

/* Fault-around (mm/memory.c do_read_fault): read faults only. */
SEC("tp_btf/mm_filemap_map_pages")
int BPF_PROG(on_map_pages_tp, struct address_space *mapping, unsigned long start_index,
	     unsigned long last_index)
{
	return mapping_touched(mapping, start_index, last_index);
}

/* ---- stores through a shared mapping --------------------------------------------- */

/*
 * Whether a folio the running thread dirties is dirtied by a store through a
 * mapping rather than by a call's own write: the thread is in a page fault
 * (its kernel entry saved no system call number: -1 on x86-64 without FRED
 * and on arm64; with FRED, x86's orig_ax holds the fault's error code, which
 * the fault tracepoint saw), or in a read(2) on a traced file, whose only
 * stores are into its buffer (a read never dirties the file it reads).
 * io_uring's workers and a write's own folios are neither.
 */
static __always_inline bool dirtied_by_a_store(struct task_struct *task, struct thread_state *st)
{
	__u32 error_code;
	long nr;

	if (task->flags & CKPT_PF_KTHREAD)
		return false;
	if (st->call == CALL_FD && st->cur.op == CKPT_OP_READ)
		return true;
	if (!ckpt_task_syscall_nr(task, &nr))
		return false;
	if (nr < 0)
		return true;
	return running_thread_faulted(&error_code) && (error_code & CKPT_X86_PF_USER) &&
	       nr == (long)error_code;
}

/*
 * writeback:writeback_dirty_folio: a clean folio of a file that can be
 * written back turned dirty (mm/page-writeback.c folio_account_dirtied), in
 * the thread that dirtied it. Through a shared mapping that is the store's
 * fault (fault_dirty_shared_page after ->page_mkwrite): the folio's bytes are
 * what writeback or msync will carry to the file. Every clean-to-dirty turn
 * is reported; user space counts each page once per save. tmpfs folios are never accounted dirty
 * (shmem's noop_dirty_folio): stores into a mapped tmpfs file are not seen.
 */
SEC("tp_btf/writeback_dirty_folio")
int BPF_PROG(on_folio_dirtied, struct folio *folio, struct address_space *mapping)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct thread_state *st;
	struct inode *inode;
	__u64 now, index;

	st = traced_thread_state(task, 0);
	if (!st || !dirtied_by_a_store(task, st))
		return 0;
	/* The folio's own mapping: the argument may be NULL to the verifier. */
	inode = BPF_CORE_READ(folio, mapping, host);
	if (!inode)
		return 0;
	now = bpf_ktime_get_ns();
	index = BPF_CORE_READ(folio, index);
	mmap_touch(st, bpf_get_current_pid_tgid(), inode, index, index + folio_pages(folio) - 1,
		   now, CKPT_OP_WRITE);
	return 0;
}

#endif /* CKPTSCOPE_JOBIO_MAPPINGS_BPF_H */
