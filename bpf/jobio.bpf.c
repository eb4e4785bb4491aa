// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The job's side of a checkpoint: file I/O calls on regular files, the
 * path calls that set up and commit checkpoint directories, the threads'
 * on-CPU time outside those calls (the serialize stage), and the process
 * tree (fork/exit), selected in the kernel by tgid set or cgroup.
 *
 * Syscalls come from the raw_syscalls sys_enter/sys_exit tracepoints through
 * tp_btf, as Falco and Tracee do: a table lookup drops every syscall we do
 * not trace in a few instructions, and the calls we do trace skip the perf
 * buffer set-up of the per-syscall (syscalls:sys_*) tracepoints, which cost
 * ~400 ns a traced call on our test machine. Per-thread state lives in task
 * storage, so a traced call touches no hash map.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "core_fixes.bpf.h"
#include "jobio.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set by user space before load. */
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
	CALL_FD = 1,   /* a file-descriptor call is in progress */
	CALL_PATH = 2, /* a path call is in progress: details in path_calls */
};

/* Everything a traced thread needs between events. */
struct thread_state {
	/* The call in progress. */
	__u64 start_ns;
	__u64 requested;
	__u64 dev;
	__u64 ino;
	__u32 call; /* enum call_state */
	__u32 op;
	__s64 syscall_nr; /* of the call in progress: its exit must match */
	__s32 fd;
	__u32 file_type;
	/* The last file resolved from an fd: a thread writing a shard in
	 * 4 KiB calls resolves it once, not per call. */
	__u64 cached_file;
	__u64 cached_inode;
	__u64 cached_dev;
	__u64 cached_ino;
	__u32 cached_type;
	/* On-CPU accounting outside traced calls. */
	__u32 in_io;
	__u64 window_start_ns; /* start of the not-yet-reported window */
	__u64 oncpu_since_ns;  /* 0 while off CPU or inside a traced call */
	__u64 acc_ns;	       /* on-CPU ns outside calls since window_start_ns */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread_state);
} thread_states SEC(".maps");

/* A path call between its entry and exit; too large for task storage's
 * fast path and rare next to reads and writes. */
struct path_call {
	__s32 dirfd;
	__s32 dirfd2;
	__u32 flags;
	__u16 path_len;
	__u16 path2_len;
	__u32 pad;
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

static __always_inline void count_drop(__u32 cause)
{
	__u64 *count = bpf_map_lookup_elem(&jobio_drops, &cause);

	if (count)
		*count += 1;
}

static __always_inline bool current_is_traced(__u32 tgid)
{
	__u8 one = 1;

	if (tgid == self_tgid)
		return false;
	if (filter_mode == CKPT_FILTER_ALL)
		return true;
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
 */
static __always_inline struct thread_state *traced_thread_state(struct task_struct *task, __u64 now)
{
	struct thread_state *st = bpf_task_storage_get(&thread_states, task, 0, 0);

	if (st)
		return st;
	if (!current_is_traced(bpf_get_current_pid_tgid() >> 32))
		return NULL;
	st = bpf_task_storage_get(&thread_states, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st) {
		count_drop(CKPT_DROP_THREAD_FULL);
		return NULL;
	}
	st->window_start_ns = now;
	st->oncpu_since_ns = now; /* it is running: it is making this call */
	return st;
}

/* The thread enters a traced call: stop counting its CPU as serialize. */
static __always_inline void cpu_pause(struct thread_state *st, __u64 now)
{
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

static __always_inline __u32 mode_file_type(__u32 mode)
{
	mode &= CKPT_S_IFMT;
	if (mode == CKPT_S_IFREG)
		return CKPT_FT_REGULAR;
	if (mode == CKPT_S_IFDIR)
		return CKPT_FT_DIRECTORY;
	return CKPT_FT_UNKNOWN;
}

/* dev, ino and type of the file behind `fd`, through the thread's cache. */
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
		st->cached_file = (__u64)file;
		st->cached_inode = (__u64)inode;
	}
	st->dev = st->cached_dev;
	st->ino = st->cached_ino;
	st->file_type = st->cached_type;
	return true;
}

/* ---- calls on a file descriptor ---------------------------------------- */

/* The call in progress, as an I/O record's body. */
static __always_inline void fill_io(struct ckpt_io_record *rec, const struct thread_state *st,
				    long ret)
{
	rec->ret = ret;
	rec->requested = st->requested;
	rec->dev = st->dev;
	rec->ino = st->ino;
	rec->fd = st->fd;
	rec->file_type = st->file_type;
}

static __always_inline void emit_io_start(struct thread_state *st)
{
	struct ckpt_io_record *rec = bpf_ringbuf_reserve(&jobio_events, sizeof(*rec), 0);

	if (!rec) {
		count_drop(CKPT_DROP_RINGBUF_FULL);
		return;
	}
	fill_header(&rec->hdr, CKPT_REC_IO_START, st->op, bpf_get_current_pid_tgid(), st->start_ns,
		    0);
	rec->hdr.cpu_window_start_ns = st->start_ns;
	rec->hdr.cpu_ns = 0;
	fill_io(rec, st, 0);
	bpf_ringbuf_submit(rec, ckpt_wakeup_flags(&jobio_events, wakeup_bytes));
}

static __always_inline int fd_call_enter(struct task_struct *task, struct thread_state *st,
					 __u64 now, __u32 op, long fd, __u64 requested)
{
	if (!resolve_fd(task, st, (int)fd))
		return 0;
	/* Regular files; directories only for fsync (durable renames). */
	if (st->file_type != CKPT_FT_REGULAR &&
	    !(st->file_type == CKPT_FT_DIRECTORY && op == CKPT_OP_FSYNC))
		return 0;
	st->call = CALL_FD;
	st->start_ns = now;
	st->op = op;
	st->fd = (int)fd;
	st->requested = requested;
	cpu_pause(st, now);
	if (op == CKPT_OP_FSYNC || op == CKPT_OP_CLOSE || op == CKPT_OP_FTRUNCATE)
		emit_io_start(st);
	return 0;
}

static __always_inline int fd_call_exit(struct thread_state *st, long ret)
{
	__u64 now = bpf_ktime_get_ns();
	struct ckpt_io_record *rec;

	st->call = CALL_NONE;
	rec = bpf_ringbuf_reserve(&jobio_events, sizeof(*rec), 0);
	if (!rec) {
		struct ckpt_record_header unused = {};

		count_drop(CKPT_DROP_RINGBUF_FULL);
		cpu_resume(st, now, &unused);
		return 0;
	}
	fill_header(&rec->hdr, CKPT_REC_IO, st->op, bpf_get_current_pid_tgid(), st->start_ns, now);
	cpu_resume(st, now, &rec->hdr);
	fill_io(rec, st, ret);
	bpf_ringbuf_submit(rec, ckpt_wakeup_flags(&jobio_events, wakeup_bytes));
	/* The fd may be reused for another file: resolve afresh next time. */
	if (st->op == CKPT_OP_CLOSE)
		st->cached_file = 0;
	return 0;
}

/* ---- calls that name a path -------------------------------------------- */

static __always_inline int path_call_enter(struct thread_state *st, __u64 now, __u32 op, long dirfd,
					   const char *path, long dirfd2, const char *path2,
					   __u32 flags)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct path_call *call;
	__u32 zero = 0;
	long len;

	call = bpf_map_lookup_elem(&path_call_scratch, &zero);
	if (!call)
		return 0;
	call->dirfd = (int)dirfd;
	call->dirfd2 = (int)dirfd2;
	call->flags = flags;
	/* A name not yet faulted in reads as empty: user space then falls
	 * back to /proc/PID/fd for opens. */
	len = bpf_probe_read_user_str(call->path, sizeof(call->path), path);
	call->path_len = len > 0 ? (__u16)len : 0;
	call->path2_len = 0;
	if (path2) {
		len = bpf_probe_read_user_str(call->path2, sizeof(call->path2), path2);
		call->path2_len = len > 0 ? (__u16)len : 0;
	}
	if (bpf_map_update_elem(&path_calls, &tid, call, BPF_ANY)) {
		count_drop(CKPT_DROP_INFLIGHT_FULL);
		return 0;
	}
	st->call = CALL_PATH;
	st->start_ns = now;
	st->op = op;
	cpu_pause(st, now);
	return 0;
}

static __always_inline int path_call_exit(struct task_struct *task, struct thread_state *st,
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
		return 0;
	}
	rec = bpf_ringbuf_reserve(&jobio_events, sizeof(*rec), 0);
	if (!rec) {
		struct ckpt_record_header unused = {};

		count_drop(CKPT_DROP_RINGBUF_FULL);
		cpu_resume(st, now, &unused);
		bpf_map_delete_elem(&path_calls, &tid);
		return 0;
	}
	fill_header(&rec->hdr, CKPT_REC_PATH, st->op, pid_tgid, st->start_ns, now);
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
	if (st->op == CKPT_OP_OPEN && ret >= 0 && resolve_fd(task, st, (int)ret)) {
		rec->dev = st->dev;
		rec->ino = st->ino;
		rec->file_type = st->file_type;
	}
	bpf_ringbuf_submit(rec, ckpt_wakeup_flags(&jobio_events, wakeup_bytes));
	bpf_map_delete_elem(&path_calls, &tid);
	return 0;
}

/* ---- the syscall dispatcher ---------------------------------------------- */

#define AT_FDCWD_ARG (-100L)
/* O_CREAT|O_WRONLY|O_TRUNC, what creat() means. */
#define CREAT_FLAGS (00000100 | 00000001 | 00001000)
/* AT_SYMLINK_NOFOLLOW, what lstat() means. */
#define NOFOLLOW_FLAG 0x100

static __always_inline __u32 kind_of(long id)
{
	if (id < 0 || id >= CKPT_MAX_SYSCALLS)
		return CKPT_SC_NONE;
	return syscall_kinds[id];
}

SEC("tp_btf/sys_enter")
int BPF_PROG(on_sys_enter, struct pt_regs *regs, long id)
{
	__u32 kind = kind_of(id);
	struct thread_state *st;
	struct task_struct *task;
	__u64 now;

	if (floor_only || kind == CKPT_SC_NONE)
		return 0;
	task = bpf_get_current_task_btf();
	now = bpf_ktime_get_ns();
	st = traced_thread_state(task, now);
	if (!st)
		return 0;
	/* A call whose exit we never saw (probes attached between its entry
	 * and exit) must not leave its state to this one. */
	st->call = CALL_NONE;
	st->syscall_nr = id;
	long a0 = ckpt_syscall_arg(regs, 0);
	long a1 = ckpt_syscall_arg(regs, 1);
	long a2 = ckpt_syscall_arg(regs, 2);

	switch (kind) {
	case CKPT_SC_READ:
		return fd_call_enter(task, st, now, CKPT_OP_READ, a0, a2);
	case CKPT_SC_READV:
		return fd_call_enter(task, st, now, CKPT_OP_READ, a0, 0);
	case CKPT_SC_WRITE:
		return fd_call_enter(task, st, now, CKPT_OP_WRITE, a0, a2);
	case CKPT_SC_WRITEV:
		return fd_call_enter(task, st, now, CKPT_OP_WRITE, a0, 0);
	case CKPT_SC_FSYNC:
		return fd_call_enter(task, st, now, CKPT_OP_FSYNC, a0, 0);
	case CKPT_SC_CLOSE:
		return fd_call_enter(task, st, now, CKPT_OP_CLOSE, a0, 0);
	case CKPT_SC_FTRUNCATE:
		return fd_call_enter(task, st, now, CKPT_OP_FTRUNCATE, a0, a1);
	case CKPT_SC_OPENAT:
		return path_call_enter(st, now, CKPT_OP_OPEN, a0, (const char *)a1, 0, NULL, a2);
	case CKPT_SC_OPENAT2:
		return path_call_enter(st, now, CKPT_OP_OPEN, a0, (const char *)a1, 0, NULL, 0);
	case CKPT_SC_OPEN:
		return path_call_enter(st, now, CKPT_OP_OPEN, AT_FDCWD_ARG, (const char *)a0, 0,
				       NULL, a1);
	case CKPT_SC_CREAT:
		return path_call_enter(st, now, CKPT_OP_OPEN, AT_FDCWD_ARG, (const char *)a0, 0,
				       NULL, CREAT_FLAGS);
	case CKPT_SC_RENAME:
		return path_call_enter(st, now, CKPT_OP_RENAME, AT_FDCWD_ARG, (const char *)a0,
				       AT_FDCWD_ARG, (const char *)a1, 0);
	case CKPT_SC_RENAMEAT:
		return path_call_enter(st, now, CKPT_OP_RENAME, a0, (const char *)a1, a2,
				       (const char *)ckpt_syscall_arg(regs, 3),
				       ckpt_syscall_arg(regs, 4));
	case CKPT_SC_MKDIR:
		return path_call_enter(st, now, CKPT_OP_MKDIR, AT_FDCWD_ARG, (const char *)a0, 0,
				       NULL, 0);
	case CKPT_SC_MKDIRAT:
		return path_call_enter(st, now, CKPT_OP_MKDIR, a0, (const char *)a1, 0, NULL, 0);
	case CKPT_SC_UNLINK:
		return path_call_enter(st, now, CKPT_OP_UNLINK, AT_FDCWD_ARG, (const char *)a0, 0,
				       NULL, 0);
	case CKPT_SC_UNLINKAT:
		return path_call_enter(st, now, CKPT_OP_UNLINK, a0, (const char *)a1, 0, NULL, a2);
	case CKPT_SC_FSTATAT:
		return path_call_enter(st, now, CKPT_OP_STAT, a0, (const char *)a1, 0, NULL,
				       ckpt_syscall_arg(regs, 3));
	case CKPT_SC_STATX:
		return path_call_enter(st, now, CKPT_OP_STAT, a0, (const char *)a1, 0, NULL, a2);
	case CKPT_SC_STAT:
		return path_call_enter(st, now, CKPT_OP_STAT, AT_FDCWD_ARG, (const char *)a0, 0,
				       NULL, 0);
	case CKPT_SC_LSTAT:
		return path_call_enter(st, now, CKPT_OP_STAT, AT_FDCWD_ARG, (const char *)a0, 0,
				       NULL, NOFOLLOW_FLAG);
	default:
		return 0;
	}
}

SEC("tp_btf/sys_exit")
int BPF_PROG(on_sys_exit, struct pt_regs *regs, long ret)
{
	struct task_struct *task;
	struct thread_state *st;

	long nr = ckpt_syscall_nr(regs);

	if (floor_only || kind_of(nr) == CKPT_SC_NONE)
		return 0;
	task = bpf_get_current_task_btf();
	st = bpf_task_storage_get(&thread_states, task, 0, 0);
	if (!st || st->call == CALL_NONE || st->syscall_nr != nr)
		return 0;
	if (st->call == CALL_FD)
		return fd_call_exit(st, ret);
	return path_call_exit(task, st, ret);
}

/* ---- scheduler: on-CPU time outside I/O ---------------------------------- */

static __always_inline void flush_cpu_window(struct thread_state *st, __u64 pid_tgid, __u64 now,
					     __u64 min_ns)
{
	struct ckpt_cpu_record *rec;

	if (st->oncpu_since_ns && now > st->oncpu_since_ns)
		st->acc_ns += now - st->oncpu_since_ns;
	st->oncpu_since_ns = 0;
	if (st->acc_ns == 0 || st->acc_ns < min_ns)
		return;
	rec = bpf_ringbuf_reserve(&jobio_events, sizeof(*rec), 0);
	if (!rec) {
		count_drop(CKPT_DROP_RINGBUF_FULL);
	} else {
		fill_header(&rec->hdr, CKPT_REC_CPU, 0, pid_tgid, st->window_start_ns, now);
		rec->hdr.cpu_window_start_ns = st->window_start_ns;
		rec->hdr.cpu_ns = st->acc_ns;
		bpf_ringbuf_submit(rec, ckpt_wakeup_flags(&jobio_events, wakeup_bytes));
	}
	st->window_start_ns = now;
	st->acc_ns = 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 now = bpf_ktime_get_ns();
	struct thread_state *st;

	if (other_task_is_traced(prev->tgid)) {
		st = bpf_task_storage_get(&thread_states, prev, 0, 0);
		if (st && !st->in_io)
			flush_cpu_window(st, ((__u64)prev->tgid << 32) | (__u32)prev->pid, now,
					 cpu_flush_min_ns);
	}
	if (other_task_is_traced(next->tgid)) {
		st = bpf_task_storage_get(&thread_states, next, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!st) {
			count_drop(CKPT_DROP_THREAD_FULL);
		} else if (!st->window_start_ns) {
			st->window_start_ns = now;
			st->oncpu_since_ns = now;
		} else if (!st->in_io) {
			st->oncpu_since_ns = now;
		}
	}
	return 0;
}

/* ---- the process tree ----------------------------------------------------- */

static __always_inline void emit_proc(__u32 op, __u32 tgid, __u32 tid, __u32 child_tgid,
				      __s32 exit_code, struct task_struct *task)
{
	struct ckpt_proc_record *rec = bpf_ringbuf_reserve(&jobio_events, sizeof(*rec), 0);
	__u64 now = bpf_ktime_get_ns();

	if (!rec) {
		count_drop(CKPT_DROP_RINGBUF_FULL);
		return;
	}
	fill_header(&rec->hdr, CKPT_REC_PROC, op, ((__u64)tgid << 32) | tid, now, now);
	rec->hdr.cpu_window_start_ns = now;
	rec->hdr.cpu_ns = 0;
	rec->child_tgid = child_tgid;
	rec->exit_code = exit_code;
	BPF_CORE_READ_STR_INTO(&rec->comm, task, comm);
	/* Process events are rare and end a trace: always wake the reader. */
	bpf_ringbuf_submit(rec, BPF_RB_FORCE_WAKEUP);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_process_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 parent_tgid = parent->tgid;
	__u32 child_tgid = child->tgid;
	__u8 one = 1;

	if (child_tgid == parent_tgid || !current_is_traced(parent_tgid))
		return 0;
	/* Tracing everything needs no set (and would fill it). */
	if (filter_mode != CKPT_FILTER_ALL &&
	    bpf_map_update_elem(&traced_tgids, &child_tgid, &one, BPF_ANY)) {
		count_drop(CKPT_DROP_TGID_FULL);
		return 0;
	}
	emit_proc(CKPT_PROC_FORK, parent_tgid, parent->pid, child_tgid, 0, child);
	return 0;
}

/* FMODE_WRITE (include/linux/fs.h), stable since 2.6. */
#define CKPT_FMODE_WRITE 0x2

static __always_inline void emit_open_file(__u64 pid_tgid, __u64 now, __s32 fd, __u64 dev,
					   __u64 ino)
{
	struct ckpt_open_file_record *rec = bpf_ringbuf_reserve(&jobio_events, sizeof(*rec), 0);

	if (!rec) {
		count_drop(CKPT_DROP_RINGBUF_FULL);
		return;
	}
	fill_header(&rec->hdr, CKPT_REC_OPEN_FILE, 0, pid_tgid, now, now);
	rec->hdr.cpu_window_start_ns = now;
	rec->hdr.cpu_ns = 0;
	rec->dev = dev;
	rec->ino = ino;
	rec->fd = fd;
	rec->pad = 0;
	bpf_ringbuf_submit(rec, 0);
}

struct fd_scan {
	struct file **fds;
	unsigned int max_fds;
	__u64 pid_tgid;
	__u64 now;
};

/* One fd of a dying process: emit it when it is a regular file open for
 * writing. Returns 1 past the end of the table (bpf_loop's stop). */
static long scan_fd(__u32 fd, void *data)
{
	struct fd_scan *scan = data;
	struct file *file = NULL;
	struct inode *inode;

	if (fd >= scan->max_fds)
		return 1;
	if (bpf_probe_read_kernel(&file, sizeof(file), &scan->fds[fd]) || !file)
		return 0;
	if (!(BPF_CORE_READ(file, f_mode) & CKPT_FMODE_WRITE))
		return 0;
	inode = BPF_CORE_READ(file, f_inode);
	if (!inode || mode_file_type(BPF_CORE_READ(inode, i_mode)) != CKPT_FT_REGULAR)
		return 0;
	emit_open_file(scan->pid_tgid, scan->now, fd, BPF_CORE_READ(inode, i_sb, s_dev),
		       BPF_CORE_READ(inode, i_ino));
	return 0;
}

/*
 * A process killed by a signal leaves the files it had open for writing as
 * they were: a checkpoint shard cut short. sched_process_exit runs before
 * exit_files() in do_exit(), so the fd table is still there to read. Only at
 * a signalled death, so the walk costs nothing in normal runs.
 */
static __always_inline void emit_files_open_for_write(struct task_struct *task, __u64 pid_tgid)
{
	struct files_struct *files = task->files;
	struct fd_scan scan = {};
	struct fdtable *fdt;
	unsigned int scanned;

	if (!files)
		return;
	fdt = files->fdt;
	if (!fdt)
		return;
	scan.fds = fdt->fd;
	scan.max_fds = fdt->max_fds;
	scan.pid_tgid = pid_tgid;
	scan.now = bpf_ktime_get_ns();
	scanned = ckpt_for_each_fd(scan_fd, &scan);
	if (scan.max_fds > scanned)
		emit_open_file(pid_tgid, scan.now, -1, 0, 0);
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_process_exit, struct task_struct *task)
{
	__u32 tgid = task->tgid;
	__u32 tid = task->pid;
	struct thread_state *st;

	if (!other_task_is_traced(tgid))
		return 0;
	st = bpf_task_storage_get(&thread_states, task, 0, 0);
	if (st && !st->in_io)
		flush_cpu_window(st, ((__u64)tgid << 32) | tid, bpf_ktime_get_ns(), 0);
	/* Task storage goes with the task; a path call cut short does not. */
	bpf_map_delete_elem(&path_calls, &tid);
	if (!ckpt_task_group_dead(task)) {
		emit_proc(CKPT_PROC_THREAD_EXIT, tgid, tid, 0, task->exit_code, task);
		return 0;
	}
	if (task->exit_code & 0x7f)
		emit_files_open_for_write(task, ((__u64)tgid << 32) | tid);
	emit_proc(CKPT_PROC_EXIT, tgid, tid, 0, task->exit_code, task);
	if (filter_mode != CKPT_FILTER_ALL)
		bpf_map_delete_elem(&traced_tgids, &tgid);
	return 0;
}
