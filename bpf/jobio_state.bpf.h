/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What every jobio program shares, whichever way it attaches (raw syscalls,
 * the file layer, the io_uring and page-cache tracepoints): the settings user
 * space writes before load, the maps, one thread's state, and the steps of a
 * traced call — is this thread traced, is this file one we report (the
 * verdict), the CPU accounting around the call, and the folding of small calls
 * into one record. Included once, by jobio.bpf.c.
 */
#ifndef CKPTSCOPE_JOBIO_STATE_BPF_H
#define CKPTSCOPE_JOBIO_STATE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "core_fixes.bpf.h"
#include "jobio.h"

/* ---- set by user space before load --------------------------------------- */

const volatile __u32 filter_mode = CKPT_FILTER_TGIDS;
const volatile __u32 self_tgid = 0;
const volatile __u64 wakeup_bytes = 1 << 20;
/* Benchmarks only: attach the syscall programs but return at once, to
 * measure what enabling syscall tracepoints costs before any work. */
const volatile bool floor_only = false;
/* Kernel-side aggregation (the node exporter): a thread's on-CPU time outside
 * I/O calls is reported when it leaves the CPU only once it adds up to this
 * much; below it the window stays open, and the thread's next I/O call or
 * its exit reports it. 0 reports at every switch (run, attach). */
const volatile __u64 cpu_flush_min_ns = 0;
/* enum ckpt_probe_mode: which attachment user space chose (it loads only
 * that mode's programs; the shared ones consult this). */
const volatile __u32 probe_mode = CKPT_MODE_SYSCALL;
/* Folding (bpf/jobio.h ckpt_io_record): calls of at most fold_max_bytes that
 * start within fold_window_ns of the first call of a fold join it; 0: never. */
const volatile __u64 fold_window_ns = 1000000;
const volatile __u64 fold_max_bytes = 65536;
/* A thread's sums of calls on ruled-out files (struct other_io) are reported
 * at a switch once the oldest call in them is this old: user space learns of
 * a long-running thread's bulk I/O within about this long, at a record per
 * file per period rather than per time slice. */
const volatile __u64 other_io_flush_ns = 1000000000;
/* A data call asking for at least this many bytes is announced as it
 * enters (announce_call), not only when it first leaves the CPU: a 2 GiB
 * read(2) served from the page cache can copy on a CPU for longer than a
 * checkpoint's quiet gap without ever being switched out. Below it a call
 * on a CPU ends within milliseconds. */
const volatile __u64 announce_min_bytes = 4 << 20;
/* PAGE_SHIFT (not in BTF): from sysconf(_SC_PAGESIZE) in user space. */
const volatile __u32 page_shift = 12;
/* enum ckpt_syscall_kind per syscall number of this architecture. */
const volatile __u8 syscall_kinds[CKPT_MAX_SYSCALLS] = {};

/* Ring-buffer records are only ever cast from void *, so clang would leave
 * their types out of the object's BTF; these keep them in, and the unit tests
 * compare that layout with the C++ compiler's. */
const struct ckpt_io_record *unused_io_record __attribute__((unused));
const struct ckpt_path_record *unused_path_record __attribute__((unused));
const struct ckpt_cpu_record *unused_cpu_record __attribute__((unused));
const struct ckpt_proc_record *unused_proc_record __attribute__((unused));
const struct ckpt_open_file_record *unused_open_file_record __attribute__((unused));
const struct ckpt_copy_record *unused_copy_record __attribute__((unused));
const struct ckpt_mmap_record *unused_mmap_record __attribute__((unused));
const struct ckpt_other_io_record *unused_other_io_record __attribute__((unused));
const struct ckpt_storage_busy_record *unused_storage_busy_record __attribute__((unused));

/* ---- maps ----------------------------------------------------------------- */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20); /* resized by user space before load */
} jobio_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} traced_tgids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} target_cgroup SEC(".maps");

/* enum ckpt_file_verdict per inode, written by user space, cleared at open. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct ckpt_file_key);
	__type(value, __u8);
} file_verdicts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CKPT_JOBIO_DROP_MAX);
	__type(key, __u32);
	__type(value, __u64);
} jobio_drops SEC(".maps");

enum call_state {
	CALL_NONE = 0,
	CALL_FD = 1,	     /* a data or flush call on a file we report is in progress */
	CALL_PATH = 2,	     /* a path call is in progress: details in path_calls */
	CALL_COPY = 3,	     /* a copy between two files is in progress */
	CALL_OTHER = 4,	     /* a call on a file user space said is not a checkpoint */
	CALL_OTHER_COPY = 5, /* a copy neither side of which can be a checkpoint */
	CALL_AIO_SUBMIT = 6, /* io_submit, or the file layer's io_submit_one (jobio_aio.bpf.h) */
	CALL_AIO_WAIT = 7,   /* io_getevents: reaping Linux AIO completions */
};

/* Small successful calls of one thread on one file, not yet reported. */
struct io_fold {
	__u64 dev;
	__u64 ino;
	__u32 op;
	__u32 via;
	__s32 fd;
	__u32 file_type;
	__u32 calls; /* 0: nothing folded */
	__u32 pad;
	__u64 bytes;
	__u64 requested;
	__u64 busy_ns;
	__u64 first_start_ns;
	__u64 last_start_ns;
	__u64 last_end_ns;
	__u64 cpu_window_start_ns;
	__u64 cpu_ns;
	__u64 storage_bytes;
	__u64 dirtied_bytes;
	__u64 throttle_ns;
};

/* Page faults of one thread on one mapped file, not yet reported: the
 * pages they mapped to read, or the folios its stores dirtied (op). */
struct mmap_fold {
	__u64 dev;
	__u64 ino;
	__u64 first_page;
	__u64 last_page;
	__u64 file_size;
	__u64 storage_pages;
	__u64 busy_ns;
	__u64 first_ns;
	__u64 last_ns;
	__u32 faults;	/* 0: nothing folded */
	__u32 in_fault; /* between filemap_fault's entry and exit (file layer) */
	__u64 fault_start_ns;
	__u32 op; /* CKPT_OP_READ or CKPT_OP_WRITE */
	__u32 pad;
	__u64 installed_pages; /* a fold of counted pages (mmap_installed) */
};

/* Successful data calls of one thread on one file ruled out (bpf/jobio.h
 * struct ckpt_other_io_record), not yet reported. */
struct other_io {
	__u64 dev;
	__u64 ino;
	__u64 bytes_read;
	__u64 bytes_written;
	__u32 read_calls; /* both 0: empty */
	__u32 write_calls;
	__u64 first_ns;
};

/* One call on one file: the thread's call in progress, or an io_uring
 * request completing on it. */
struct call_desc {
	__u64 start_ns;
	__u64 requested;
	__u64 dev;
	__u64 ino;
	__u32 op;
	__u32 via;
	__s32 fd;
	__u32 file_type;
	/* What the storage did for the call (struct ckpt_io_record). */
	__u64 storage_bytes;
	__u64 dirtied_bytes;
	__u64 throttle_ns;
	__u32 direct; /* the file was open O_DIRECT: every byte is the storage's */
	__u32 pad;
};

/* Everything a traced thread needs between events. */
struct thread_state {
	/* The call in progress. */
	struct call_desc cur;
	__u32 call; /* enum call_state */
	/* Its programs used this state in the thread's last time slice: the
	 * next switch-in moves it into the CPU's hot slot (below). */
	__u32 wants_slot;
	/* Syscall mode: the call's exit must match. File layer: the system
	 * call of an outermost call that nests (fl_enter). */
	__s64 syscall_nr;
	/* File-layer calls nest (a close that flushes through fsync, a copy
	 * that splices): only the outermost is the job's call. depth counts
	 * the calls entered and not yet left; outer_frame is the outermost's
	 * trampoline frame (fl_frame), which its exit sees again, and
	 * outer_nests says whether calls can nest in it at all (close and
	 * the copies). bpf/jobio_file_layer.bpf.h, "A missed exit". */
	__u32 depth;
	__u32 outer_nests;
	__u64 outer_frame;
	/* Set while a file-layer program works on this state: fentry/fexit
	 * programs run with migration, not preemption, disabled, so the
	 * thread can be switched out inside one, and sched_switch must not
	 * report its folds (or close its CPU window) half-updated. */
	__u32 busy;
	/* A copy's other file: the destination (dev, ino above: the source). */
	__u64 dev2;
	__u64 ino2;
	__s32 fd2;
	__u32 file_type2;
	/* The last file resolved from an fd: a thread writing a shard in
	 * 4 KiB calls resolves it once, not per call. */
	__u64 cached_file;
	__u64 cached_inode;
	__u64 cached_dev;
	__u64 cached_ino;
	__u32 cached_type;
	__u32 cached_direct;
	/* The verdict of the file last asked about (thread_file_verdict), good
	 * while verdict_generation still equals verdict_gen - 1 (0: none): the
	 * same thread's next call on that file skips the map lookup. */
	__u32 verdict;
	__u64 verdict_dev;
	__u64 verdict_ino;
	__u64 verdict_gen;
	/* On-CPU accounting outside traced calls. */
	__u32 in_io;
	/* The call in progress was announced (announce_call), or is not to
	 * be: its start record went out, so user space knows it is in flight. */
	__u32 announced;
	/* io_submit or io_getevents in progress (CALL_AIO_*): its context
	 * (bpf/jobio_aio.bpf.h). */
	__u64 aio_ctx;
	__u64 window_start_ns; /* start of the not-yet-reported window */
	__u64 oncpu_since_ns;  /* 0 while off CPU or inside a traced call */
	__u64 acc_ns;	       /* on-CPU ns outside calls since window_start_ns */
	struct io_fold fold;
	struct mmap_fold mfold;
	/* The last two files ruled out that it moved data through: `other`
	 * the latest, `other_prev` the one before. */
	struct other_io other;
	struct other_io other_prev;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread_state);
} thread_states SEC(".maps");

/*
 * The running thread's state, on the CPU it runs on. A task-storage lookup is
 * a helper call, a lock and a cache probe, paid twice by every traced call (its
 * entry and its exit); a per-CPU array element is a short helper, or a few
 * inlined instructions on recent kernels. So a thread that did traced I/O in
 * its last time slice has its state copied here when it is switched in, its
 * programs work on this copy, and it is copied back when it is switched out.
 *
 * Only sched_switch moves a state in or out, and it runs with preemption off
 * on this CPU, so for any thread the state is in exactly one place: here when
 * `head.owner` is its tid, in its task storage otherwise. A thread switched out
 * inside a file-layer program (fentry/fexit run preemptible, with migration
 * off: ckpt_task_pinned_to_cpu) keeps the slot: it resumes on this CPU and
 * finishes its update here; the threads that run meanwhile use their task
 * storage, and one switched in while inside a program is not moved in (it
 * holds a pointer to its task storage). docs/probe-modes.md, "The hot slot".
 */
struct hot_slot {
	/* owner: the tid whose state this is; 0: none (tid 0 is the idle task,
	 * never traced). used: its programs used it since it moved in. */
	struct ckpt_hot_slot_head head;
	struct thread_state st;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hot_slot);
} hot_slots SEC(".maps");

static __always_inline struct hot_slot *this_cpu_slot(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&hot_slots, &zero);
}

/* The running thread's state, wherever it lives; NULL: it has none. */
static __always_inline struct thread_state *running_state(struct task_struct *task)
{
	struct hot_slot *slot = this_cpu_slot();
	struct thread_state *st;

	/* (0: no owner; never the idle task's, say, in an interrupt) */
	if (slot && slot->head.owner && slot->head.owner == task->pid) {
		slot->head.used = 1;
		return &slot->st;
	}
	st = bpf_task_storage_get(&thread_states, task, 0, 0);
	if (st)
		st->wants_slot = 1;
	return st;
}

/* A path call between its entry and exit; too large for task storage's
 * fast path and rare next to reads and writes. */
struct path_call {
	__s32 dirfd;
	__s32 dirfd2;
	__u32 flags;
	__u16 path_len;
	__u16 path2_len;
	__u32 pad;
	/* A user-space name that read as empty at entry (its page not yet
	 * faulted in: a child just forked shares its parent's file-backed
	 * pages only once it touches them); read again at return, after the
	 * kernel's own copy of it faulted the page in. 0: nothing to retry. */
	__u64 retry_path;
	__u64 retry_path2;
	char path[CKPT_PATH_MAX];
	char path2[CKPT_PATH_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32); /* tid */
	__type(value, struct path_call);
} path_calls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct path_call);
} path_call_scratch SEC(".maps");

/* Mapping folds open on any thread: while none is, a page entering the page
 * cache (every write that grows a file) is no business of ours, and
 * on_page_cache_add returns before it looks up the thread. May overcount
 * (a thread that exits with a fold open); never undercounts. */
__u64 mmap_folds_open = 0;

/* Bumped after every change to file_verdicts: by user space after each
 * verdict it writes or forgets (ProbeManager), here at each open that forgets
 * one. A thread's cached verdict from an older generation is looked up again,
 * so no thread acts on a verdict that has since changed. */
__u64 verdict_generation = 0;

/* Set by user space while nobody wants the sums of calls on files ruled out
 * (struct other_io): the node exporter with no client tracing, which reports
 * none of it. Then such a call costs this load and nothing more. */
__u32 other_io_paused = 0;

/* ---- traced threads --------------------------------------------------------- */

static __always_inline void count_drops(__u32 cause, __u64 n)
{
	__u64 *count = bpf_map_lookup_elem(&jobio_drops, &cause);

	if (count)
		*count += n;
}

static __always_inline void count_drop(__u32 cause)
{
	count_drops(cause, 1);
}

/* PF_KTHREAD (include/linux/sched.h), stable since 2.6: kernel threads
 * (nfsd, writeback) call the VFS for nobody's job. */
#define CKPT_PF_KTHREAD 0x00200000

static __always_inline bool current_is_traced(__u32 tgid)
{
	__u8 one = 1;

	if (tgid == self_tgid)
		return false;
	if (filter_mode == CKPT_FILTER_ALL) {
		struct task_struct *task = bpf_get_current_task_btf();

		return !(task->flags & CKPT_PF_KTHREAD);
	}
	if (bpf_map_lookup_elem(&traced_tgids, &tgid))
		return true;
	/* Processes that entered the cgroup after attach join the set here. */
	if (filter_mode == CKPT_FILTER_CGROUP &&
	    bpf_current_task_under_cgroup(&target_cgroup, 0) == 1) {
		if (bpf_map_update_elem(&traced_tgids, &tgid, &one, BPF_ANY))
			count_drop(CKPT_DROP_TGID_FULL);
		return true;
	}
	return false;
}

static __always_inline bool other_task_is_traced(__u32 tgid)
{
	if (tgid == self_tgid)
		return false;
	if (filter_mode == CKPT_FILTER_ALL)
		return true;
	return bpf_map_lookup_elem(&traced_tgids, &tgid) != NULL;
}

/*
 * The running thread's state, or NULL when the thread is not traced. Only
 * traced threads ever get state, so finding it answers "traced?" without the
 * tgid lookup; a thread seen for the first time is checked, then given state.
 * `now` 0: the clock is read only when state is created (the file layer's
 * entries, which have no other use for it before the verdict).
 */
static __always_inline struct thread_state *traced_thread_state(struct task_struct *task, __u64 now)
{
	struct thread_state *st = running_state(task);

	if (st)
		return st;
	if (!current_is_traced(bpf_get_current_pid_tgid() >> 32))
		return NULL;
	st = bpf_task_storage_get(&thread_states, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st) {
		count_drop(CKPT_DROP_THREAD_FULL);
		return NULL;
	}
	if (!now)
		now = bpf_ktime_get_ns();
	st->window_start_ns = now;
	st->oncpu_since_ns = now; /* it is running: it is making this call */
	st->wants_slot = 1;
	return st;
}

/* ---- files and verdicts ---------------------------------------------------- */

static __always_inline __u32 mode_file_type(__u32 mode)
{
	mode &= CKPT_S_IFMT;
	if (mode == CKPT_S_IFREG)
		return CKPT_FT_REGULAR;
	if (mode == CKPT_S_IFDIR)
		return CKPT_FT_DIRECTORY;
	return CKPT_FT_UNKNOWN;
}

/* The file behind `inode` into `c`: its type, device and inode number. */
static __always_inline void describe_inode(struct call_desc *c, struct inode *inode)
{
	c->file_type = mode_file_type(BPF_CORE_READ(inode, i_mode));
	c->dev = BPF_CORE_READ(inode, i_sb, s_dev);
	c->ino = BPF_CORE_READ(inode, i_ino);
}

/* What user space decided about (dev, ino): enum ckpt_file_verdict. */
static __always_inline __u32 file_verdict(__u64 dev, __u64 ino)
{
	struct ckpt_file_key key = {.dev = dev, .ino = ino};
	__u8 *v = bpf_map_lookup_elem(&file_verdicts, &key);

	return v ? *v : CKPT_VERDICT_UNKNOWN;
}

/* An open of the inode: whatever was decided about an earlier file with this
 * number (inode numbers are reused) no longer holds until user space looks
 * at this open. */
static __always_inline void forget_verdict(__u64 dev, __u64 ino)
{
	struct ckpt_file_key key = {.dev = dev, .ino = ino};

	if (bpf_map_delete_elem(&file_verdicts, &key) == 0)
		__sync_fetch_and_add(&verdict_generation, 1);
}

/*
 * file_verdict through the thread's one-entry cache: a thread writing a shard
 * in 4 KiB calls, or one ruled-out file, looks its verdict up once per change
 * of verdict_generation, not once per call. The generation is read before the
 * lookup: a verdict written after that read bumps it past what is cached.
 */
static __always_inline __u32 thread_file_verdict(struct thread_state *st, __u64 dev, __u64 ino)
{
	__u64 gen = *(volatile __u64 *)&verdict_generation + 1;

	if (st->verdict_gen != gen || st->verdict_dev != dev || st->verdict_ino != ino) {
		st->verdict = file_verdict(dev, ino);
		st->verdict_dev = dev;
		st->verdict_ino = ino;
		st->verdict_gen = gen;
	}
	return st->verdict;
}

/* ---- CPU accounting around calls ------------------------------------------- */

/* The thread enters a traced call: stop counting its CPU as serialize. */
static __always_inline void cpu_pause(struct thread_state *st, __u64 now)
{
	st->announced = 0;
	if (st->oncpu_since_ns && now > st->oncpu_since_ns)
		st->acc_ns += now - st->oncpu_since_ns;
	st->oncpu_since_ns = 0;
	st->in_io = 1;
}

/* The call returns: report the window before it and open a new one. */
static __always_inline void cpu_resume(struct thread_state *st, __u64 now,
				       struct ckpt_record_header *hdr)
{
	hdr->cpu_window_start_ns = st->window_start_ns;
	hdr->cpu_ns = st->acc_ns;
	st->window_start_ns = now;
	st->acc_ns = 0;
	st->in_io = 0;
	st->oncpu_since_ns = now;
}

static __always_inline void fill_header(struct ckpt_record_header *hdr, __u32 kind, __u32 op,
					__u64 pid_tgid, __u64 start_ns, __u64 end_ns)
{
	hdr->kind = kind;
	hdr->op = op;
	hdr->tgid = pid_tgid >> 32;
	hdr->tid = (__u32)pid_tgid;
	hdr->start_ns = start_ns;
	hdr->end_ns = end_ns;
}

static __always_inline __u64 submit_flags(void)
{
	return ckpt_wakeup_flags(&jobio_events, wakeup_bytes);
}

/* ---- folded records --------------------------------------------------------- */

/* Reports the thread's folded small calls, if any. */
static __always_inline void flush_io_fold(struct thread_state *st, __u64 pid_tgid)
{
	struct io_fold *f = &st->fold;
	struct ckpt_io_record *rec;

	if (!f->calls)
		return;
	rec = bpf_ringbuf_reserve(&jobio_events, sizeof(*rec), 0);
	if (!rec) {
		count_drop(CKPT_DROP_RINGBUF_FULL);
		f->calls = 0;
		return;
	}
	fill_header(&rec->hdr, CKPT_REC_IO, f->op, pid_tgid, f->first_start_ns, f->last_end_ns);
	rec->hdr.cpu_window_start_ns = f->cpu_window_start_ns;
	rec->hdr.cpu_ns = f->cpu_ns;
	rec->ret = (__s64)f->bytes;
	rec->requested = f->requested;
	rec->dev = f->dev;
	rec->ino = f->ino;
	rec->fd = f->fd;
	rec->file_type = f->file_type;
	rec->calls = f->calls;
	rec->via = f->via;
	rec->busy_ns = f->busy_ns;
	rec->last_start_ns = f->last_start_ns;
	rec->storage_bytes = f->storage_bytes;
	rec->dirtied_bytes = f->dirtied_bytes;
	rec->throttle_ns = f->throttle_ns;
	bpf_ringbuf_submit(rec, submit_flags());
	f->calls = 0;
}

/* Reports the thread's folded page faults, if any. */
static __always_inline void flush_mmap_fold(struct thread_state *st, __u64 pid_tgid)
{
	struct mmap_fold *m = &st->mfold;
	struct ckpt_mmap_record *rec;

	if (!m->faults)
		return;
	__sync_fetch_and_add(&mmap_folds_open, -1);
	rec = bpf_ringbuf_reserve(&jobio_events, sizeof(*rec), 0);
	if (!rec) {
		count_drop(CKPT_DROP_RINGBUF_FULL);
		m->faults = 0;
		return;
	}
	fill_header(&rec->hdr, CKPT_REC_MMAP, m->op, pid_tgid, m->first_ns, m->last_ns);
	/* Faults are not calls: the thread's CPU window runs through them. */
	rec->hdr.cpu_window_start_ns = m->first_ns;
	rec->hdr.cpu_ns = 0;
	rec->dev = m->dev;
	rec->ino = m->ino;
	rec->first_page = m->first_page;
	rec->last_page = m->last_page;
	rec->file_size = m->file_size;
	rec->storage_pages = m->storage_pages;
	rec->busy_ns = m->busy_ns;
	rec->faults = m->faults;
	rec->page_shift = page_shift;
	rec->installed_pages = m->installed_pages;
	bpf_ringbuf_submit(rec, submit_flags());
	m->faults = 0;
}

/* ---- bytes through files ruled out ------------------------------------------ */

/* Whether calls on files ruled out are summed now (other_io_paused): asked
 * first, so a paused call costs this load and no more. */
static __always_inline bool other_io_counting(void)
{
	return !*(volatile __u32 *)&other_io_paused;
}

static __always_inline bool other_io_empty(const struct other_io *o)
{
	return !o->read_calls && !o->write_calls;
}

/* Reports the sums in `o`, if any, and empties it. */
static __always_inline void flush_other_io(struct other_io *o, __u64 pid_tgid, __u64 now)
{
	struct ckpt_other_io_record *rec;

	if (other_io_empty(o))
		return;
	rec = bpf_ringbuf_reserve(&jobio_events, sizeof(*rec), 0);
	if (!rec) {
		count_drop(CKPT_DROP_RINGBUF_FULL);
	} else {
		fill_header(&rec->hdr, CKPT_REC_OTHER_IO, 0, pid_tgid, o->first_ns, now);
		rec->hdr.cpu_window_start_ns = o->first_ns;
		rec->hdr.cpu_ns = 0;
		rec->dev = o->dev;
		rec->ino = o->ino;
		rec->bytes_read = o->bytes_read;
		rec->bytes_written = o->bytes_written;
		rec->read_calls = o->read_calls;
		rec->write_calls = o->write_calls;
		bpf_ringbuf_submit(rec, submit_flags());
	}
	o->read_calls = 0;
	o->write_calls = 0;
	o->bytes_read = 0;
	o->bytes_written = 0;
}

static __always_inline bool other_io_is(const struct other_io *o, __u64 dev, __u64 ino)
{
	return !other_io_empty(o) && o->dev == dev && o->ino == ino;
}

/*
 * A successful read or write of `bytes` (> 0) on a file ruled out. The same
 * file as one of the last two costs additions only; a third reports the older
 * of the two, and reads the clock for its start.
 */
static __always_inline void count_other_io(struct thread_state *st, __u64 dev, __u64 ino,
					   bool is_write, __u64 bytes)
{
	struct other_io *o = &st->other;

	if (!other_io_is(o, dev, ino)) {
		o = &st->other_prev;
		if (!other_io_is(o, dev, ino)) {
			__u64 now = bpf_ktime_get_ns();

			flush_other_io(o, bpf_get_current_pid_tgid(), now);
			st->other_prev = st->other;
			o = &st->other;
			o->dev = dev;
			o->ino = ino;
			o->bytes_read = 0;
			o->bytes_written = 0;
			o->read_calls = 0;
			o->write_calls = 0;
			o->first_ns = now;
		}
	}
	if (is_write) {
		o->bytes_written += bytes;
		if (o->write_calls != 0xffffffffu)
			o->write_calls += 1;
	} else {
		o->bytes_read += bytes;
		if (o->read_calls != 0xffffffffu)
			o->read_calls += 1;
	}
}

/* The thread closed a file ruled out: what it moved through it is told now. */
static __always_inline void other_file_closed(struct thread_state *st, __u64 dev, __u64 ino)
{
	bool last = other_io_is(&st->other, dev, ino);
	bool prev = other_io_is(&st->other_prev, dev, ino);
	__u64 pid_tgid;
	__u64 now;

	if (!last && !prev)
		return;
	now = bpf_ktime_get_ns();
	pid_tgid = bpf_get_current_pid_tgid();
	if (last)
		flush_other_io(&st->other, pid_tgid, now);
	if (prev)
		flush_other_io(&st->other_prev, pid_tgid, now);
}

/* At a switch (`min_age_ns` other_io_flush_ns) or the thread's exit (0). */
static __always_inline void flush_aged_other_io(struct thread_state *st, __u64 pid_tgid, __u64 now,
						__u64 min_age_ns)
{
	if (!other_io_empty(&st->other) && now - st->other.first_ns >= min_age_ns)
		flush_other_io(&st->other, pid_tgid, now);
	if (!other_io_empty(&st->other_prev) && now - st->other_prev.first_ns >= min_age_ns)
		flush_other_io(&st->other_prev, pid_tgid, now);
}

/* Everything this thread still holds folded, before a record that must
 * follow it (timeline order per thread) or at its exit. */
static __always_inline void flush_folds(struct thread_state *st, __u64 pid_tgid)
{
	flush_io_fold(st, pid_tgid);
	flush_mmap_fold(st, pid_tgid);
}

/*
 * One finished data call `c` of the running thread, with the CPU window
 * before it in `cpu`: folded into the thread's fold when small, else reported
 * on its own after whatever was folded. (The thread's ids are asked for only
 * when a record is written: a folded call needs none.)
 */
static __always_inline void report_data_call(struct thread_state *st, const struct call_desc *c,
					     __u64 now, long ret,
					     const struct ckpt_record_header *cpu)
{
	struct io_fold *f = &st->fold;
	struct ckpt_io_record *rec;
	__u64 pid_tgid;
	bool small = fold_window_ns && ret >= 0 && (__u64)ret <= fold_max_bytes &&
		     (c->op == CKPT_OP_READ || c->op == CKPT_OP_WRITE);
	__u64 storage = c->direct && ret > 0 ? (__u64)ret : c->storage_bytes;

	if (small && f->calls && f->dev == c->dev && f->ino == c->ino && f->op == c->op &&
	    f->via == c->via && c->start_ns - f->first_start_ns < fold_window_ns &&
	    f->calls < 0xffffffffu) {
		f->calls += 1;
		f->bytes += ret;
		f->requested += c->requested;
		f->busy_ns += now - c->start_ns;
		f->last_start_ns = c->start_ns;
		f->last_end_ns = now;
		f->cpu_ns += cpu->cpu_ns;
		f->storage_bytes += storage;
		f->dirtied_bytes += c->dirtied_bytes;
		f->throttle_ns += c->throttle_ns;
		return;
	}
	pid_tgid = bpf_get_current_pid_tgid();
	flush_io_fold(st, pid_tgid);
	if (small) {
		f->dev = c->dev;
		f->ino = c->ino;
		f->op = c->op;
		f->via = c->via;
		f->fd = c->fd;
		f->file_type = c->file_type;
		f->calls = 1;
		f->bytes = ret;
		f->requested = c->requested;
		f->busy_ns = now - c->start_ns;
		f->first_start_ns = c->start_ns;
		f->last_start_ns = c->start_ns;
		f->last_end_ns = now;
		f->cpu_window_start_ns = cpu->cpu_window_start_ns;
		f->cpu_ns = cpu->cpu_ns;
		f->storage_bytes = storage;
		f->dirtied_bytes = c->dirtied_bytes;
		f->throttle_ns = c->throttle_ns;
		return;
	}
	rec = bpf_ringbuf_reserve(&jobio_events, sizeof(*rec), 0);
	if (!rec) {
		count_drop(CKPT_DROP_RINGBUF_FULL);
		return;
	}
	fill_header(&rec->hdr, CKPT_REC_IO, c->op, pid_tgid, c->start_ns, now);
	rec->hdr.cpu_window_start_ns = cpu->cpu_window_start_ns;
	rec->hdr.cpu_ns = cpu->cpu_ns;
	rec->ret = ret;
	rec->requested = c->requested;
	rec->dev = c->dev;
	rec->ino = c->ino;
	rec->fd = c->fd;
	rec->file_type = c->file_type;
	rec->calls = 1;
	rec->via = c->via;
	rec->busy_ns = now - c->start_ns;
	rec->last_start_ns = c->start_ns;
	rec->storage_bytes = storage;
	rec->dirtied_bytes = c->dirtied_bytes;
	rec->throttle_ns = c->throttle_ns;
	bpf_ringbuf_submit(rec, submit_flags());
}

/* ---- calls on one file ------------------------------------------------------ */

/* ---- calls in flight ------------------------------------------------------------ */

/*
 * The probes report a call when it returns, so a call slower than a
 * checkpoint's quiet gap (a read queued behind a saturated NFS server, an
 * NFS close flushing for seconds) would otherwise let user space close its
 * checkpoint early, and the call's record would then start a second one. So
 * a call on a file that is, or may be, a checkpoint's is announced: a start
 * record (CKPT_REC_*_START, end_ns 0) tells user space it is in flight until
 * its record comes. Once per call, and only for calls that can outlast a
 * gap: a flush as it starts, a data call of at least announce_min_bytes as it
 * starts, any other at its first switch out of the CPU inside the call
 * (announce_switched_out). A call served from the page cache that never
 * leaves the CPU costs nothing. What the thread folded before the call goes
 * out first: user space takes any later record of the thread as the end of
 * the call in flight. A mapping's fold in the middle of a fault stays (a
 * fault inside the call, on its buffer); mmap records end no call.
 */
static __always_inline void flush_before_announce(struct thread_state *st, __u64 pid_tgid)
{
	flush_io_fold(st, pid_tgid);
	if (!st->mfold.in_fault)
		flush_mmap_fold(st, pid_tgid);
}

/* The call on one file in progress (CALL_FD) is in flight. */
static __always_inline void announce_file_call(struct thread_state *st, __u64 pid_tgid)
{
	struct ckpt_io_record *rec;

	st->announced = 1;
	flush_before_announce(st, pid_tgid);
	rec = bpf_ringbuf_reserve(&jobio_events, sizeof(*rec), 0);
	if (!rec) {
		count_drop(CKPT_DROP_RINGBUF_FULL);
		return;
	}
	fill_header(&rec->hdr, CKPT_REC_IO_START, st->cur.op, pid_tgid, st->cur.start_ns, 0);
	rec->hdr.cpu_window_start_ns = st->cur.start_ns;
	rec->hdr.cpu_ns = 0;
	rec->ret = 0;
	rec->requested = st->cur.requested;
	rec->dev = st->cur.dev;
	rec->ino = st->cur.ino;
	rec->fd = st->cur.fd;
	rec->file_type = st->cur.file_type;
	rec->calls = 1;
	rec->via = st->cur.via;
	rec->busy_ns = 0;
	rec->last_start_ns = st->cur.start_ns;
	rec->storage_bytes = 0;
	rec->dirtied_bytes = 0;
	rec->throttle_ns = 0;
	bpf_ringbuf_submit(rec, submit_flags());
}

static __always_inline bool is_flush_op(__u32 op)
{
	return op == CKPT_OP_FSYNC || op == CKPT_OP_CLOSE || op == CKPT_OP_FTRUNCATE;
}

/*
 * A call on one file begins; st->cur.dev/ino/file_type already name the file.
 * Regular files only (directories for fsync: durable renames). A file user
 * space said is not a checkpoint costs this check: its time stays the thread's
 * CPU, and only a failure is reported at the exit. `now` 0: the clock is read
 * here, and only for a file that is not ruled out (the file layer: a call on
 * any other file of the node pays for no clock read; a failed one is then
 * reported with its end as its start).
 */
static __always_inline void begin_file_call(struct thread_state *st, __u64 now, __u32 op, __u32 via,
					    int fd, __u64 requested)
{
	if (st->cur.file_type != CKPT_FT_REGULAR &&
	    !(st->cur.file_type == CKPT_FT_DIRECTORY && op == CKPT_OP_FSYNC))
		return;
	st->cur.start_ns = now;
	st->cur.op = op;
	st->cur.via = via;
	st->cur.fd = fd;
	st->cur.requested = requested;
	st->cur.storage_bytes = 0;
	st->cur.dirtied_bytes = 0;
	st->cur.throttle_ns = 0;
	if (thread_file_verdict(st, st->cur.dev, st->cur.ino) == CKPT_VERDICT_OTHER) {
		st->call = CALL_OTHER;
		return;
	}
	if (!now) {
		now = bpf_ktime_get_ns();
		st->cur.start_ns = now;
	}
	st->call = CALL_FD;
	cpu_pause(st, now);
	if (is_flush_op(op) || requested >= announce_min_bytes)
		announce_file_call(st, bpf_get_current_pid_tgid());
}

/* The call begun by begin_file_call returns `ret`. */
static __always_inline void end_file_call(struct thread_state *st, long ret)
{
	struct ckpt_record_header cpu = {};
	__u32 call = st->call;
	__u64 now;

	st->call = CALL_NONE;
	if (call == CALL_OTHER && ret >= 0) {
		if (!other_io_counting())
			return;
		if (ret > 0 && (st->cur.op == CKPT_OP_READ || st->cur.op == CKPT_OP_WRITE))
			count_other_io(st, st->cur.dev, st->cur.ino, st->cur.op == CKPT_OP_WRITE,
				       ret);
		else if (st->cur.op == CKPT_OP_CLOSE)
			other_file_closed(st, st->cur.dev, st->cur.ino);
		return;
	}
	now = bpf_ktime_get_ns();
	if (call == CALL_OTHER) {
		/* A failure on any file of the job is a job failure: report it,
		 * without disturbing the CPU window it ran in. */
		if (!st->cur.start_ns)
			st->cur.start_ns = now;
		cpu.cpu_window_start_ns = st->cur.start_ns;
		flush_folds(st, bpf_get_current_pid_tgid());
		report_data_call(st, &st->cur, now, ret, &cpu);
		return;
	}
	cpu_resume(st, now, &cpu);
	report_data_call(st, &st->cur, now, ret, &cpu);
	/* The fd may be reused for another file: resolve afresh next time. */
	if (st->cur.op == CKPT_OP_CLOSE)
		st->cached_file = 0;
}

/* ---- copies between files ---------------------------------------------------- */

/* The copy in progress (CALL_COPY) is in flight. */
static __always_inline void announce_copy(struct thread_state *st, __u64 pid_tgid)
{
	struct ckpt_copy_record *rec;

	st->announced = 1;
	flush_before_announce(st, pid_tgid);
	rec = bpf_ringbuf_reserve(&jobio_events, sizeof(*rec), 0);
	if (!rec) {
		count_drop(CKPT_DROP_RINGBUF_FULL);
		return;
	}
	fill_header(&rec->hdr, CKPT_REC_COPY_START, 0, pid_tgid, st->cur.start_ns, 0);
	rec->hdr.cpu_window_start_ns = st->cur.start_ns;
	rec->hdr.cpu_ns = 0;
	rec->ret = 0;
	rec->requested = st->cur.requested;
	rec->src_dev = st->cur.dev;
	rec->src_ino = st->cur.ino;
	rec->dst_dev = st->dev2;
	rec->dst_ino = st->ino2;
	rec->src_fd = st->cur.fd;
	rec->dst_fd = st->fd2;
	rec->src_type = st->cur.file_type;
	rec->dst_type = st->file_type2;
	rec->via = st->cur.via;
	rec->pad = 0;
	bpf_ringbuf_submit(rec, submit_flags());
}

/* A copy begins; dev/ino/file_type name the source, dev2/ino2/file_type2 the
 * destination. Reported unless neither side can be a checkpoint; then a side
 * that is a regular file (one ruled out) has its bytes summed at the end. */
static __always_inline void begin_copy(struct thread_state *st, __u64 now, __u32 via, __u64 len)
{
	bool src = st->cur.file_type == CKPT_FT_REGULAR &&
		   thread_file_verdict(st, st->cur.dev, st->cur.ino) != CKPT_VERDICT_OTHER;
	bool dst = st->file_type2 == CKPT_FT_REGULAR &&
		   thread_file_verdict(st, st->dev2, st->ino2) != CKPT_VERDICT_OTHER;

	if (!src && !dst) {
		if ((st->cur.file_type == CKPT_FT_REGULAR || st->file_type2 == CKPT_FT_REGULAR) &&
		    other_io_counting())
			st->call = CALL_OTHER_COPY;
		return;
	}
	st->call = CALL_COPY;
	st->cur.start_ns = now;
	st->cur.via = via;
	st->cur.requested = len;
	cpu_pause(st, now);
	if (len >= announce_min_bytes)
		announce_copy(st, bpf_get_current_pid_tgid());
}

/* The copy begun as CALL_OTHER_COPY returns: a read of its source and a write
 * of its destination, where they are regular files. */
static __always_inline void end_other_copy(struct thread_state *st, long ret)
{
	st->call = CALL_NONE;
	if (ret <= 0)
		return;
	if (st->cur.file_type == CKPT_FT_REGULAR)
		count_other_io(st, st->cur.dev, st->cur.ino, false, ret);
	if (st->file_type2 == CKPT_FT_REGULAR)
		count_other_io(st, st->dev2, st->ino2, true, ret);
}

static __always_inline void end_copy(struct thread_state *st, long ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u64 now = bpf_ktime_get_ns();
	struct ckpt_copy_record *rec;

	st->call = CALL_NONE;
	/* A reflink's ioctl returns 0, vfs_clone_file_range the bytes (0 for
	 * an empty source): the bytes it was asked to clone, either way
	 * (bpf/jobio_storage_copies.bpf.h clone_length). */
	if (st->cur.via == CKPT_VIA_REFLINK && ret == 0)
		ret = (long)st->cur.requested;
	flush_folds(st, pid_tgid);
	rec = bpf_ringbuf_reserve(&jobio_events, sizeof(*rec), 0);
	if (!rec) {
		struct ckpt_record_header unused = {};

		count_drop(CKPT_DROP_RINGBUF_FULL);
		cpu_resume(st, now, &unused);
		return;
	}
	fill_header(&rec->hdr, CKPT_REC_COPY, 0, pid_tgid, st->cur.start_ns, now);
	cpu_resume(st, now, &rec->hdr);
	rec->ret = ret;
	rec->requested = st->cur.requested;
	rec->src_dev = st->cur.dev;
	rec->src_ino = st->cur.ino;
	rec->dst_dev = st->dev2;
	rec->dst_ino = st->ino2;
	rec->src_fd = st->cur.fd;
	rec->dst_fd = st->fd2;
	rec->src_type = st->cur.file_type;
	rec->dst_type = st->file_type2;
	rec->via = st->cur.via;
	rec->pad = 0;
	bpf_ringbuf_submit(rec, submit_flags());
}

/* ---- calls that name a path -------------------------------------------------- */

/* Where a path call's names live: the caller's memory (syscall arguments,
 * do_sys_openat2) or the kernel's (struct filename, after getname). */
enum name_space {
	NAMES_USER = 0,
	NAMES_KERNEL = 1,
};

static __always_inline __u16 read_name(char *dst, const char *src, enum name_space space)
{
	long len;

	if (!src)
		return 0;
	if (space == NAMES_KERNEL)
		len = bpf_probe_read_kernel_str(dst, CKPT_PATH_MAX, src);
	else
		len = bpf_probe_read_user_str(dst, CKPT_PATH_MAX, src);
	return len > 0 ? (__u16)len : 0;
}

static __always_inline void begin_path_call(struct thread_state *st, __u64 now, __u32 op,
					    long dirfd, const char *path, long dirfd2,
					    const char *path2, __u32 flags, enum name_space space)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct path_call *call;
	__u32 zero = 0;

	call = bpf_map_lookup_elem(&path_call_scratch, &zero);
	if (!call)
		return;
	call->dirfd = (int)dirfd;
	call->dirfd2 = (int)dirfd2;
	call->flags = flags;
	/* A name not yet faulted in reads as empty: user space then falls
	 * back to /proc/PID/fd for opens. */
	call->path_len = read_name(call->path, path, space);
	call->path2_len = read_name(call->path2, path2, space);
	call->retry_path = space == NAMES_USER && path && !call->path_len ? (__u64)path : 0;
	call->retry_path2 = space == NAMES_USER && path2 && !call->path2_len ? (__u64)path2 : 0;
	if (bpf_map_update_elem(&path_calls, &tid, call, BPF_ANY)) {
		count_drop(CKPT_DROP_INFLIGHT_FULL);
		return;
	}
	st->call = CALL_PATH;
	st->cur.start_ns = now;
	st->cur.op = op;
	cpu_pause(st, now);
}

/* dev, ino and type of the file behind `fd`, through the thread's cache;
 * they land in st->cur.dev, st->cur.ino, st->cur.file_type. */
static __always_inline bool resolve_fd(struct task_struct *task, struct thread_state *st, int fd)
{
	struct file *file = ckpt_fd_to_file(task, fd);
	struct inode *inode;

	if (!file)
		return false;
	inode = BPF_CORE_READ(file, f_inode);
	if (!inode)
		return false;
	if (st->cached_file != (__u64)file || st->cached_inode != (__u64)inode) {
		st->cached_type = mode_file_type(BPF_CORE_READ(inode, i_mode));
		st->cached_dev = BPF_CORE_READ(inode, i_sb, s_dev);
		st->cached_ino = BPF_CORE_READ(inode, i_ino);
		st->cached_direct = ckpt_file_is_direct(file);
		st->cached_file = (__u64)file;
		st->cached_inode = (__u64)inode;
	}
	st->cur.dev = st->cached_dev;
	st->cur.ino = st->cached_ino;
	st->cur.file_type = st->cached_type;
	st->cur.direct = st->cached_direct;
	return true;
}

static __always_inline void end_path_call(struct task_struct *task, struct thread_state *st,
					  long ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	__u64 now = bpf_ktime_get_ns();
	struct ckpt_path_record *rec;
	struct path_call *call;

	st->call = CALL_NONE;
	call = bpf_map_lookup_elem(&path_calls, &tid);
	if (!call) {
		struct ckpt_record_header unused = {};

		cpu_resume(st, now, &unused);
		return;
	}
	flush_folds(st, pid_tgid);
	if (call->retry_path)
		call->path_len = read_name(call->path, (const char *)call->retry_path, NAMES_USER);
	if (call->retry_path2)
		call->path2_len =
		    read_name(call->path2, (const char *)call->retry_path2, NAMES_USER);
	/* A rename may make a file ruled out a checkpoint's (user space decides
	 * by the new name): what this thread summed goes first, so that it is
	 * there when the rename is (docs/stitching.md, "Decided late"). */
	if (st->cur.op == CKPT_OP_RENAME && ret == 0)
		flush_aged_other_io(st, pid_tgid, now, 0);
	rec = bpf_ringbuf_reserve(&jobio_events, sizeof(*rec), 0);
	if (!rec) {
		struct ckpt_record_header unused = {};

		count_drop(CKPT_DROP_RINGBUF_FULL);
		cpu_resume(st, now, &unused);
		bpf_map_delete_elem(&path_calls, &tid);
		return;
	}
	fill_header(&rec->hdr, CKPT_REC_PATH, st->cur.op, pid_tgid, st->cur.start_ns, now);
	cpu_resume(st, now, &rec->hdr);
	rec->ret = ret;
	rec->dev = 0;
	rec->ino = 0;
	rec->file_type = CKPT_FT_UNKNOWN;
	rec->dirfd = call->dirfd;
	rec->dirfd2 = call->dirfd2;
	rec->flags = call->flags;
	rec->path_len = call->path_len;
	rec->path2_len = call->path2_len;
	rec->pad = 0;
	__builtin_memcpy(rec->path, call->path, sizeof(rec->path));
	__builtin_memcpy(rec->path2, call->path2, sizeof(rec->path2));
	if (st->cur.op == CKPT_OP_OPEN && ret >= 0 && resolve_fd(task, st, (int)ret)) {
		rec->dev = st->cur.dev;
		rec->ino = st->cur.ino;
		rec->file_type = st->cur.file_type;
		if (st->cur.file_type == CKPT_FT_REGULAR)
			forget_verdict(st->cur.dev, st->cur.ino);
	}
	bpf_ringbuf_submit(rec, submit_flags());
	bpf_map_delete_elem(&path_calls, &tid);
}

/* open(2) flags (uapi asm-generic/fcntl.h): an open that can change the tree. */
#define CKPT_O_ACCMODE 00000003
#define CKPT_O_CREAT 00000100
#define CKPT_O_TRUNC 00001000

/* The path call in progress (CALL_PATH) is in flight: one that changes the
 * tree or opens for writing, as user space counts a call that keeps a
 * checkpoint going; a stat or a read-only open never holds one open. */
static __always_inline void announce_path_call(struct thread_state *st, __u64 pid_tgid)
{
	__u32 tid = (__u32)pid_tgid;
	struct ckpt_path_record *rec;
	struct path_call *call;

	st->announced = 1;
	if (st->cur.op == CKPT_OP_STAT || st->cur.op == CKPT_OP_CHDIR)
		return;
	call = bpf_map_lookup_elem(&path_calls, &tid);
	if (!call)
		return;
	if (st->cur.op == CKPT_OP_OPEN &&
	    !(call->flags & (CKPT_O_ACCMODE | CKPT_O_CREAT | CKPT_O_TRUNC)))
		return;
	flush_before_announce(st, pid_tgid);
	rec = bpf_ringbuf_reserve(&jobio_events, sizeof(*rec), 0);
	if (!rec) {
		count_drop(CKPT_DROP_RINGBUF_FULL);
		return;
	}
	fill_header(&rec->hdr, CKPT_REC_PATH_START, st->cur.op, pid_tgid, st->cur.start_ns, 0);
	rec->hdr.cpu_window_start_ns = st->cur.start_ns;
	rec->hdr.cpu_ns = 0;
	rec->ret = 0;
	rec->dev = 0;
	rec->ino = 0;
	rec->file_type = CKPT_FT_UNKNOWN;
	rec->dirfd = call->dirfd;
	rec->dirfd2 = call->dirfd2;
	rec->flags = call->flags;
	rec->path_len = call->path_len;
	rec->path2_len = call->path2_len;
	rec->pad = 0;
	__builtin_memcpy(rec->path, call->path, sizeof(rec->path));
	__builtin_memcpy(rec->path2, call->path2, sizeof(rec->path2));
	bpf_ringbuf_submit(rec, submit_flags());
}

/*
 * `task` (running, in sched_switch) leaves the CPU inside its traced call:
 * announce the call, once. Not when the thread is outside any system call
 * (preempted in user space), since every traced call runs inside one: that
 * call ended without its exit program (a missed exit,
 * bpf/jobio_file_layer.bpf.h) and its next call will count it.
 */
static __always_inline void announce_switched_out(struct thread_state *st, struct task_struct *task,
						  __u64 pid_tgid)
{
	long nr = 0;

	if (st->announced)
		return;
	if (ckpt_task_syscall_nr(task, &nr) && nr < 0) {
		st->announced = 1;
		return;
	}
	switch (st->call) {
	case CALL_FD:
		announce_file_call(st, pid_tgid);
		return;
	case CALL_COPY:
		announce_copy(st, pid_tgid);
		return;
	case CALL_PATH:
		announce_path_call(st, pid_tgid);
		return;
	default:
		st->announced = 1;
		return;
	}
}

/* ---- page faults on mapped files ---------------------------------------------- */

/*
 * Into the thread's mapping fold: pages [first, last] of a mapped file, or
 * (installed non-zero) `installed` pages counted at faults on pages [first,
 * last]. A fold holds one file, one op and one kind: contiguous or
 * overlapping ranges within the fold window join it, counts join it wherever
 * they lie; anything else reports it and starts a new one.
 */
static __always_inline void mmap_fold_add(struct thread_state *st, __u64 pid_tgid,
					  struct inode *inode, __u32 op, __u64 first, __u64 last,
					  __u64 installed, __u64 now)
{
	struct mmap_fold *m = &st->mfold;
	__u64 dev = BPF_CORE_READ(inode, i_sb, s_dev);
	__u64 ino = BPF_CORE_READ(inode, i_ino);
	__s64 size = BPF_CORE_READ(inode, i_size);

	if (size <= 0)
		return;
	/* Fault-around windows run past the end of the file. */
	if (!installed && last > (size - 1) >> page_shift)
		last = (size - 1) >> page_shift;
	if (last < first)
		return;
	if (mode_file_type(BPF_CORE_READ(inode, i_mode)) != CKPT_FT_REGULAR)
		return;
	if (thread_file_verdict(st, dev, ino) == CKPT_VERDICT_OTHER)
		return;
	if (m->faults && m->dev == dev && m->ino == ino && m->op == op &&
	    !m->installed_pages == !installed && now - m->first_ns < fold_window_ns &&
	    m->faults < 0xffffffffu &&
	    (installed || (first <= m->last_page + 1 && last + 1 >= m->first_page))) {
		if (first < m->first_page)
			m->first_page = first;
		if (last > m->last_page)
			m->last_page = last;
		m->installed_pages += installed;
		m->faults += 1;
		m->file_size = size;
		m->last_ns = now;
		return;
	}
	flush_folds(st, pid_tgid);
	__sync_fetch_and_add(&mmap_folds_open, 1);
	m->dev = dev;
	m->ino = ino;
	m->op = op;
	m->installed_pages = installed;
	m->first_page = first;
	m->last_page = last;
	m->file_size = size;
	m->storage_pages = 0;
	m->busy_ns = 0;
	m->first_ns = now;
	m->last_ns = now;
	m->faults = 1;
}

/* Pages [first, last] of a mapped file were mapped for the running thread to
 * read (op CKPT_OP_READ), or dirtied by its stores (CKPT_OP_WRITE). */
static __always_inline void mmap_touch(struct thread_state *st, __u64 pid_tgid, struct inode *inode,
				       __u64 first, __u64 last, __u64 now, __u32 op)
{
	mmap_fold_add(st, pid_tgid, inode, op, first, last, 0, now);
}

/* `pages` pages of a mapped file were installed in the running thread's page
 * tables by one fault at page `pgoff` (syscall mode, counted from the
 * kernel's file-page counters: jobio_mappings.bpf.h). */
static __always_inline void mmap_installed(struct thread_state *st, __u64 pid_tgid,
					   struct inode *inode, __u64 pgoff, __u64 pages, __u64 now)
{
	mmap_fold_add(st, pid_tgid, inode, CKPT_OP_READ, pgoff, pgoff, pages, now);
}

#endif /* CKPTSCOPE_JOBIO_STATE_BPF_H */
