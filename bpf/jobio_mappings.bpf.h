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
	__u64 address; /* the faulting user address */
	/* Counting installed pages (count_installed_pages): the faulting
	 * thread's mm, its file and shmem page counters as this CPU saw them
	 * (file_pages_seen), and this CPU's per-CPU offset, once found. */
	__u64 mm;
	__s64 seen[2];
	__u64 cpu_offset;
	__u64 scratch; /* a pointer, read back as a number */
	/* Folios this fault added to the page cache before its file had a
	 * fold (the fault reads before it maps): for on_rss_stat to add. */
	__u64 pending_dev;
	__u64 pending_ino;
	__u64 pending_pages;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct last_fault);
} last_faults SEC(".maps");

#define CKPT_X86_PF_WRITE 0x2 /* X86_PF_WRITE */
#define CKPT_X86_PF_USER 0x4  /* X86_PF_USER */

/*
 * Syscall mode on 6.11+ (set by user space with the programs below): the
 * pages a fault installs are counted from the mm's own counters of mapped
 * file and shmem pages. The filemap tracepoints say which page a fault asked
 * for and which window fault-around scanned, not what was mapped: 6.18 maps
 * a cached large folio whole, a PMD-sized one by one entry with no filemap
 * tracepoint, and a window skips folios still being read. Every mapping of a
 * file page adds to mm->rss_stat[MM_FILEPAGES or MM_SHMEMPAGES] (a
 * percpu_counter since 6.2, commit f1a7941243c1 "mm: convert mm's rss stats
 * into percpu_counter") and fires rss_stat, in the faulting thread. A
 * percpu_counter's count plus this CPU's share changes by exactly what this
 * CPU adds (lib/percpu_counter.c percpu_counter_add_batch folds this CPU's
 * share into count and takes it out of the share together), so that sum,
 * read as the fault starts and again at each rss_stat inside it, gives the
 * pages this fault mapped. The file is the faulting address's mapping.
 */
const volatile bool count_installed_pages = false;

/* This CPU's per-CPU offset: where this CPU's copy of a __percpu variable is,
 * less the variable's __percpu address. Found from our own per-CPU array:
 * the address a lookup returns, less the __percpu pointer the array keeps
 * (struct bpf_array pptrs[0]), read through the map's address, which its
 * freeze_mutex's empty wait list holds (a list head points at itself). */
static __always_inline __u64 this_cpu_offset(struct last_fault *f)
{
	struct bpf_array *arr = (struct bpf_array *)&last_faults;
	__u64 map, pptr = 0;

	if (f->cpu_offset)
		return f->cpu_offset;
	if (!bpf_core_field_exists(struct mutex, wait_list))
		return 0;
	/* Spilled to map memory and read back: the verifier keeps a pointer's
	 * type through arithmetic, and these are numbers here. */
	f->scratch = (__u64)arr->map.freeze_mutex.wait_list.next;
	map = *(volatile __u64 *)&f->scratch - bpf_core_field_offset(struct bpf_map, freeze_mutex) -
	      bpf_core_field_offset(struct mutex, wait_list);
	if (bpf_probe_read_kernel(&pptr, sizeof(pptr),
				  (void *)(map + bpf_core_field_offset(struct bpf_array, pptrs))) ||
	    !pptr)
		return 0;
	f->scratch = (__u64)f;
	f->cpu_offset = *(volatile __u64 *)&f->scratch - pptr;
	return f->cpu_offset;
}

/* mm's count of mapped file (which 0) or shmem (1) pages as this CPU sees it:
 * the counter's count plus this CPU's share. */
static __always_inline __s64 file_pages_seen(struct mm_struct *mm, int which, __u64 cpu_offset)
{
	__s32 share = 0;
	__s64 count;
	__s32 *shares;

	/* Direct loads from the trusted mm (no helper call): this runs on the
	 * faults of the job's threads. */
	if (which) {
		count = mm->rss_stat[MM_SHMEMPAGES].count;
		shares = mm->rss_stat[MM_SHMEMPAGES].counters;
	} else {
		count = mm->rss_stat[MM_FILEPAGES].count;
		shares = mm->rss_stat[MM_FILEPAGES].counters;
	}
	bpf_probe_read_kernel(&share, sizeof(share), (void *)((__u64)shares + cpu_offset));
	return count + share;
}

/* The counts `mm`'s faults on this CPU rise from, from here on. */
static __always_inline void count_from_here(struct last_fault *f, struct mm_struct *mm,
					    __u64 offset)
{
	f->mm = (__u64)mm;
	f->seen[0] = file_pages_seen(mm, 0, offset);
	f->seen[1] = file_pages_seen(mm, 1, offset);
}

static __always_inline int fault_taken(unsigned long address, unsigned long error_code)
{
	__u32 zero = 0;
	struct last_fault *f = bpf_map_lookup_elem(&last_faults, &zero);
	struct task_struct *task;
	struct mm_struct *mm;
	__u64 offset;

	if (!f)
		return 0;
	f->tid = (__u32)bpf_get_current_pid_tgid();
	f->error_code = (__u32)error_code;
	f->address = address;
	f->mm = 0;
	f->pending_pages = 0;
	if (!count_installed_pages)
		return 0;
	/* Every fault on the node comes here: only a traced thread's fault is
	 * counted, so only its start is read. */
	task = bpf_get_current_task_btf();
	if (!traced_thread_state(task, 0))
		return 0;
	mm = task->mm;
	offset = this_cpu_offset(f);
	if (mm && offset)
		count_from_here(f, mm, offset);
	return 0;
}

/* exceptions:page_fault_user and page_fault_kernel (x86 only), before the
 * fault is handled: a fault in the kernel on a user address (a read(2) into
 * a mapped buffer) reaches filemap_fault too. */
SEC("tp_btf/page_fault_user")
int BPF_PROG(on_user_fault, unsigned long address, struct pt_regs *regs, unsigned long error_code)
{
	return fault_taken(address, error_code);
}

SEC("tp_btf/page_fault_kernel")
int BPF_PROG(on_kernel_fault, unsigned long address, struct pt_regs *regs, unsigned long error_code)
{
	return fault_taken(address, error_code);
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

/* The faulting page's file and index, from the faulting address's mapping. */
struct fault_file {
	__u64 address;
	struct inode *inode;
	__u64 pgoff;
};

static long fault_file_of(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct fault_file *ff = data;
	struct file *file = vma->vm_file;

	if (file) {
		ff->inode = file->f_inode;
		ff->pgoff = vma->vm_pgoff + ((ff->address - vma->vm_start) >> page_shift);
	}
	return 0;
}

/*
 * Whether the running thread is handling a page fault: its kernel entry saved
 * no system call number (-1 without FRED; with FRED, x86's orig_ax holds the
 * fault's error code), or the CPU's last fault was its own fault in the
 * kernel on a user address (a read(2) into a mapped buffer). A mapping made
 * inside a system call (MAP_POPULATE, MADV_POPULATE_READ, mlock) installs
 * pages with no fault of its own: not counted (docs/probe-modes.md).
 */
static __always_inline bool in_a_fault(struct task_struct *task, struct last_fault *f)
{
	long nr;

	if (!ckpt_task_syscall_nr(task, &nr))
		return false;
	if (nr < 0)
		return true;
	if (f->tid != (__u32)bpf_get_current_pid_tgid())
		return false;
	return (f->error_code & CKPT_X86_PF_USER) ? nr == (long)f->error_code : true;
}

/* A traced thread's fault in progress when it left the CPU (it sleeps on the
 * page's read, or is preempted): put back in the slot of whichever CPU it
 * resumes on, with that CPU's view of the counters, so the fault's rss_stat
 * there counts from it. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct last_fault); /* tid 0: none */
} fault_handovers SEC(".maps");

static __always_inline void fault_switched_out(struct task_struct *prev)
{
	struct last_fault *h;
	struct last_fault *f;
	__u32 zero = 0;

	if (!count_installed_pages)
		return;
	f = bpf_map_lookup_elem(&last_faults, &zero);
	if (!f || f->tid != (__u32)prev->pid || !f->mm)
		return;
	h = bpf_task_storage_get(&fault_handovers, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (h)
		*h = *f;
}

static __always_inline void fault_switched_in(struct task_struct *next)
{
	struct last_fault *h;
	struct last_fault *f;
	struct mm_struct *mm;
	__u32 zero = 0;
	__u64 offset;

	if (!count_installed_pages)
		return;
	h = bpf_task_storage_get(&fault_handovers, next, 0, 0);
	f = bpf_map_lookup_elem(&last_faults, &zero);
	if (!h || !h->tid || !f)
		return;
	mm = next->mm;
	offset = this_cpu_offset(f);
	if (!mm || !offset)
		return;
	/* Its fault, with this CPU's offset and this CPU's view of the counts. */
	*f = *h;
	f->cpu_offset = offset;
	count_from_here(f, mm, offset);
}

/*
 * kmem:rss_stat: one of mm's page counters changed, in the thread that
 * changed it. Inside a traced thread's read fault, a rise of its file or
 * shmem pages is what the fault mapped (count_installed_pages above).
 */
SEC("tp_btf/rss_stat")
int BPF_PROG(on_rss_stat, struct mm_struct *mm, int member)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct fault_file ff = {};
	struct thread_state *st;
	struct last_fault *f;
	__u32 zero = 0;
	__s64 now_seen, added;
	int which;

	/* An anonymous enum (mm_types_task.h), the same values since v4.5. */
	if (member == MM_FILEPAGES)
		which = 0;
	else if (member == MM_SHMEMPAGES)
		which = 1;
	else
		return 0;
	f = bpf_map_lookup_elem(&last_faults, &zero);
	if (!f || mm != task->mm)
		return 0; /* another mm's counter */
	if (f->tid != (__u32)bpf_get_current_pid_tgid() || f->mm != (__u64)mm) {
		/* Not this fault's start on this CPU (fault_switched_in covers a
		 * thread switched back in): whose pages these are is not known. */
		if (running_state(task) && in_a_fault(task, f))
			count_drop(CKPT_DROP_MMAP_UNATTRIBUTED);
		return 0;
	}
	if (!in_a_fault(task, f))
		return 0; /* a mapping made inside a system call */
	now_seen = file_pages_seen(mm, which, f->cpu_offset);
	added = now_seen - f->seen[which & 1];
	f->seen[which & 1] = now_seen;
	if (added <= 0 || (f->error_code & CKPT_X86_PF_WRITE))
		return 0; /* unmapped, or mapped to be stored to (counted when dirtied) */
	st = traced_thread_state(task, 0);
	if (!st)
		return 0;
	ff.address = f->address;
	if (bpf_find_vma(task, f->address, fault_file_of, &ff, 0) || !ff.inode)
		return 0;
	mmap_installed(st, bpf_get_current_pid_tgid(), ff.inode, ff.pgoff, (__u64)added,
		       bpf_ktime_get_ns());
	if (f->pending_pages && st->mfold.faults && st->mfold.ino == f->pending_ino &&
	    st->mfold.dev == f->pending_dev)
		st->mfold.storage_pages += f->pending_pages;
	f->pending_pages = 0;
	return 0;
}

/*
 * A folio entered the page cache, in the running thread: read from storage
 * (or newly written). Counted for a mapping's read fold when this thread is
 * faulting on that file: inside filemap_fault (file layer), after the
 * mm_filemap_fault tracepoint outside any call (syscall mode), or in a fault
 * counted by on_rss_stat, which adds what came before the file's fold.
 */
SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(on_page_cache_add, struct folio *folio)
{
	struct task_struct *task;
	struct thread_state *st;
	struct last_fault *f = NULL;
	struct inode *inode;
	__u32 zero = 0;
	__u64 dev, ino;

	if (count_installed_pages) {
		f = bpf_map_lookup_elem(&last_faults, &zero);
		if (!f || f->tid != (__u32)bpf_get_current_pid_tgid() || !f->mm)
			return 0;
	} else if (!mmap_folds_open) {
		return 0;
	}
	task = bpf_get_current_task_btf();
	st = running_state(task);
	if (!st)
		return 0;
	if (probe_mode == CKPT_MODE_FILE_LAYER ? !st->mfold.in_fault
	    : f				       ? !in_a_fault(task, f)
					       : st->call != CALL_NONE)
		return 0;
	inode = BPF_CORE_READ(folio, mapping, host);
	if (!inode)
		return 0;
	dev = BPF_CORE_READ(inode, i_sb, s_dev);
	ino = BPF_CORE_READ(inode, i_ino);
	if (st->mfold.faults && st->mfold.op == CKPT_OP_READ && st->mfold.ino == ino &&
	    st->mfold.dev == dev) {
		st->mfold.storage_pages += folio_pages(folio);
		return 0;
	}
	if (f) {
		if (f->pending_ino != ino || f->pending_dev != dev) {
			f->pending_dev = dev;
			f->pending_ino = ino;
			f->pending_pages = 0;
		}
		f->pending_pages += folio_pages(folio);
	}
	return 0;
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

	if (count_installed_pages)
		return 0; /* on_rss_stat counts what the fault maps */
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
	if (count_installed_pages)
		return 0;
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
 * the thread that dirtied it: by a write call on that file (counted for the
 * call), or by a store through a shared mapping. Through a shared mapping that is the store's
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
	if (!st)
		return 0;
	/* A write(2) turning its own file's folio dirty: what writeback owes the
	 * storage for the call (its dirtied_bytes, bpf/jobio_storage.bpf.h). A
	 * write's folios are never a store through a mapping. */
	if (st->call == CALL_FD && st->cur.op == CKPT_OP_WRITE) {
		inode = BPF_CORE_READ(folio, mapping, host);
		if (inode && BPF_CORE_READ(inode, i_ino) == st->cur.ino &&
		    BPF_CORE_READ(inode, i_sb, s_dev) == st->cur.dev)
			st->cur.dirtied_bytes += folio_pages(folio) << page_shift;
		return 0;
	}
	if (!dirtied_by_a_store(task, st))
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
