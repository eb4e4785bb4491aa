// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The job's side of a checkpoint: file I/O calls on regular files, the
 * path calls that set up and commit checkpoint directories, the threads'
 * on-CPU time outside those calls (the serialize stage), and the process
 * tree (fork/exit), selected in the kernel by tgid set or cgroup.
 *
 * Syscalls are traced with the per-syscall tracepoints (syscalls:sys_*), so
 * the programs only run for the calls we care about; scheduler and process
 * events use tp_btf for typed task_struct access.
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

/* Ring-buffer records are only ever cast from void *, so clang would leave
 * their types out of the object's BTF; these keep them in, and the unit tests
 * compare that layout with the C++ compiler's. */
const struct ckpt_io_record *unused_io_record __attribute__((unused));
const struct ckpt_path_record *unused_path_record __attribute__((unused));
const struct ckpt_cpu_record *unused_cpu_record __attribute__((unused));
const struct ckpt_proc_record *unused_proc_record __attribute__((unused));

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

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CKPT_JOBIO_DROP_MAX);
	__type(key, __u32);
	__type(value, __u64);
} jobio_drops SEC(".maps");

/* A file-descriptor call between its entry and exit. */
struct fd_call {
	__u64 start_ns;
	__u64 requested;
	__u64 dev;
	__u64 ino;
	__u32 op;
	__s32 fd;
	__u32 file_type;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32); /* tid */
	__type(value, struct fd_call);
} fd_calls SEC(".maps");

/* A path call between its entry and exit; too large for the stack. */
struct path_call {
	__u64 start_ns;
	__u32 op;
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

/* Per-thread on-CPU accounting outside traced I/O calls. */
struct thread_cpu {
	__u64 window_start_ns; /* start of the not-yet-reported window */
	__u64 oncpu_since_ns;  /* 0 while off CPU or inside an I/O call */
	__u64 acc_ns;	       /* on-CPU ns outside I/O since window_start_ns */
	__u32 in_io;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32); /* tid */
	__type(value, struct thread_cpu);
} thread_cpus SEC(".maps");

static __always_inline void count_drop(__u32 cause)
{
	__u64 *count = bpf_map_lookup_elem(&jobio_drops, &cause);

	if (count)
		*count += 1;
}

static __always_inline bool tgid_is_traced(__u32 tgid)
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

static __always_inline struct thread_cpu *thread_cpu_get(__u32 tid, __u64 now)
{
	struct thread_cpu *st = bpf_map_lookup_elem(&thread_cpus, &tid);
	struct thread_cpu fresh = {};

	if (st)
		return st;
	fresh.window_start_ns = now;
	fresh.oncpu_since_ns = now; /* only called for the running thread */
	if (bpf_map_update_elem(&thread_cpus, &tid, &fresh, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&thread_cpus, &tid)) {
		count_drop(CKPT_DROP_THREAD_FULL);
		return NULL;
	}
	return bpf_map_lookup_elem(&thread_cpus, &tid);
}

/* The thread enters a traced I/O call: stop counting its CPU as serialize. */
static __always_inline void thread_io_enter(__u32 tid, __u64 now)
{
	struct thread_cpu *st = thread_cpu_get(tid, now);

	if (!st)
		return;
	if (st->oncpu_since_ns && now > st->oncpu_since_ns)
		st->acc_ns += now - st->oncpu_since_ns;
	st->oncpu_since_ns = 0;
	st->in_io = 1;
}

/* The call returns: report the window before it and open a new one. */
static __always_inline void thread_io_exit(__u32 tid, __u64 now, struct ckpt_record_header *hdr)
{
	struct thread_cpu *st = bpf_map_lookup_elem(&thread_cpus, &tid);

	if (!st) {
		hdr->cpu_window_start_ns = hdr->start_ns;
		hdr->cpu_ns = 0;
		return;
	}
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

static __always_inline __u32 inode_file_type(struct inode *inode)
{
	__u32 mode = BPF_CORE_READ(inode, i_mode) & CKPT_S_IFMT;

	if (mode == CKPT_S_IFREG)
		return CKPT_FT_REGULAR;
	if (mode == CKPT_S_IFDIR)
		return CKPT_FT_DIRECTORY;
	return CKPT_FT_UNKNOWN;
}

/* ---- calls on a file descriptor ---------------------------------------- */

static __always_inline int fd_call_enter(__u32 op, long fd, __u64 requested)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct task_struct *task;
	struct fd_call call = {};
	struct inode *inode;
	struct file *file;

	if (!tgid_is_traced(pid_tgid >> 32))
		return 0;
	task = (struct task_struct *)bpf_get_current_task();
	file = ckpt_fd_to_file(task, (int)fd);
	if (!file)
		return 0;
	inode = BPF_CORE_READ(file, f_inode);
	if (!inode)
		return 0;
	call.file_type = inode_file_type(inode);
	/* Regular files; directories only for fsync (durable renames). */
	if (call.file_type != CKPT_FT_REGULAR &&
	    !(call.file_type == CKPT_FT_DIRECTORY && op == CKPT_OP_FSYNC))
		return 0;
	call.start_ns = bpf_ktime_get_ns();
	call.op = op;
	call.fd = (int)fd;
	call.requested = requested;
	call.dev = BPF_CORE_READ(inode, i_sb, s_dev);
	call.ino = BPF_CORE_READ(inode, i_ino);
	if (bpf_map_update_elem(&fd_calls, &tid, &call, BPF_ANY)) {
		count_drop(CKPT_DROP_INFLIGHT_FULL);
		return 0;
	}
	thread_io_enter(tid, call.start_ns);
	return 0;
}

static __always_inline int fd_call_exit(long ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct ckpt_io_record *rec;
	struct fd_call *call;
	__u64 now;

	call = bpf_map_lookup_elem(&fd_calls, &tid);
	if (!call)
		return 0;
	now = bpf_ktime_get_ns();
	rec = bpf_ringbuf_reserve(&jobio_events, sizeof(*rec), 0);
	if (!rec) {
		count_drop(CKPT_DROP_RINGBUF_FULL);
		struct ckpt_record_header unused = {};
		thread_io_exit(tid, now, &unused);
		bpf_map_delete_elem(&fd_calls, &tid);
		return 0;
	}
	fill_header(&rec->hdr, CKPT_REC_IO, call->op, pid_tgid, call->start_ns, now);
	thread_io_exit(tid, now, &rec->hdr);
	rec->ret = ret;
	rec->requested = call->requested;
	rec->dev = call->dev;
	rec->ino = call->ino;
	rec->fd = call->fd;
	rec->file_type = call->file_type;
	bpf_ringbuf_submit(rec, 0);
	bpf_map_delete_elem(&fd_calls, &tid);
	return 0;
}

#define FD_CALL(name, op, requested_arg)                                       \
	SEC("tracepoint/syscalls/sys_enter_" #name)                            \
	int enter_##name(struct trace_event_raw_sys_enter *ctx)                \
	{                                                                      \
		return fd_call_enter(op, (long)ctx->args[0], (requested_arg)); \
	}                                                                      \
	SEC("tracepoint/syscalls/sys_exit_" #name)                             \
	int exit_##name(struct trace_event_raw_sys_exit *ctx)                  \
	{                                                                      \
		return fd_call_exit(ctx->ret);                                 \
	}

FD_CALL(read, CKPT_OP_READ, ctx->args[2])
FD_CALL(pread64, CKPT_OP_READ, ctx->args[2])
FD_CALL(readv, CKPT_OP_READ, 0)
FD_CALL(preadv, CKPT_OP_READ, 0)
FD_CALL(preadv2, CKPT_OP_READ, 0)
FD_CALL(write, CKPT_OP_WRITE, ctx->args[2])
FD_CALL(pwrite64, CKPT_OP_WRITE, ctx->args[2])
FD_CALL(writev, CKPT_OP_WRITE, 0)
FD_CALL(pwritev, CKPT_OP_WRITE, 0)
FD_CALL(pwritev2, CKPT_OP_WRITE, 0)
FD_CALL(fsync, CKPT_OP_FSYNC, 0)
FD_CALL(fdatasync, CKPT_OP_FSYNC, 0)
FD_CALL(close, CKPT_OP_CLOSE, 0)
FD_CALL(ftruncate, CKPT_OP_FTRUNCATE, ctx->args[1])

/* ---- calls that name a path -------------------------------------------- */

static __always_inline int path_call_enter(__u32 op, long dirfd, const char *path, long dirfd2,
					   const char *path2, __u32 flags)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	__u32 zero = 0;
	struct path_call *call;
	long len;

	if (!tgid_is_traced(pid_tgid >> 32))
		return 0;
	call = bpf_map_lookup_elem(&path_call_scratch, &zero);
	if (!call)
		return 0;
	call->start_ns = bpf_ktime_get_ns();
	call->op = op;
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
	thread_io_enter(tid, call->start_ns);
	return 0;
}

static __always_inline int path_call_exit(long ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct ckpt_path_record *rec;
	struct path_call *call;
	__u64 now;

	call = bpf_map_lookup_elem(&path_calls, &tid);
	if (!call)
		return 0;
	now = bpf_ktime_get_ns();
	rec = bpf_ringbuf_reserve(&jobio_events, sizeof(*rec), 0);
	if (!rec) {
		count_drop(CKPT_DROP_RINGBUF_FULL);
		struct ckpt_record_header unused = {};
		thread_io_exit(tid, now, &unused);
		bpf_map_delete_elem(&path_calls, &tid);
		return 0;
	}
	fill_header(&rec->hdr, CKPT_REC_PATH, call->op, pid_tgid, call->start_ns, now);
	thread_io_exit(tid, now, &rec->hdr);
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
	if (call->op == CKPT_OP_OPEN && ret >= 0) {
		struct file *file =
		    ckpt_fd_to_file((struct task_struct *)bpf_get_current_task(), (int)ret);
		struct inode *inode = file ? BPF_CORE_READ(file, f_inode) : NULL;

		if (inode) {
			rec->dev = BPF_CORE_READ(inode, i_sb, s_dev);
			rec->ino = BPF_CORE_READ(inode, i_ino);
			rec->file_type = inode_file_type(inode);
		}
	}
	bpf_ringbuf_submit(rec, 0);
	bpf_map_delete_elem(&path_calls, &tid);
	return 0;
}

#define AT_FDCWD_ARG (-100L)
#define NO_PATH ((const char *)0)

#define PATH_CALL(name, op, dirfd, path, dirfd2, path2, flags)                      \
	SEC("tracepoint/syscalls/sys_enter_" #name)                                 \
	int enter_##name(struct trace_event_raw_sys_enter *ctx)                     \
	{                                                                           \
		return path_call_enter(op, (dirfd), (const char *)(path), (dirfd2), \
				       (const char *)(path2), (__u32)(flags));      \
	}                                                                           \
	SEC("tracepoint/syscalls/sys_exit_" #name)                                  \
	int exit_##name(struct trace_event_raw_sys_exit *ctx)                       \
	{                                                                           \
		return path_call_exit(ctx->ret);                                    \
	}

/* O_CREAT|O_WRONLY|O_TRUNC, what creat() means. */
#define CREAT_FLAGS (00000100 | 00000001 | 00001000)

PATH_CALL(openat, CKPT_OP_OPEN, ctx->args[0], ctx->args[1], 0, NO_PATH, ctx->args[2])
PATH_CALL(openat2, CKPT_OP_OPEN, ctx->args[0], ctx->args[1], 0, NO_PATH, 0)
PATH_CALL(open, CKPT_OP_OPEN, AT_FDCWD_ARG, ctx->args[0], 0, NO_PATH, ctx->args[1])
PATH_CALL(creat, CKPT_OP_OPEN, AT_FDCWD_ARG, ctx->args[0], 0, NO_PATH, CREAT_FLAGS)
PATH_CALL(rename, CKPT_OP_RENAME, AT_FDCWD_ARG, ctx->args[0], AT_FDCWD_ARG, ctx->args[1], 0)
PATH_CALL(renameat, CKPT_OP_RENAME, ctx->args[0], ctx->args[1], ctx->args[2], ctx->args[3], 0)
PATH_CALL(renameat2, CKPT_OP_RENAME, ctx->args[0], ctx->args[1], ctx->args[2], ctx->args[3],
	  ctx->args[4])
PATH_CALL(mkdir, CKPT_OP_MKDIR, AT_FDCWD_ARG, ctx->args[0], 0, NO_PATH, 0)
PATH_CALL(mkdirat, CKPT_OP_MKDIR, ctx->args[0], ctx->args[1], 0, NO_PATH, 0)
PATH_CALL(unlink, CKPT_OP_UNLINK, AT_FDCWD_ARG, ctx->args[0], 0, NO_PATH, 0)
PATH_CALL(unlinkat, CKPT_OP_UNLINK, ctx->args[0], ctx->args[1], 0, NO_PATH, ctx->args[2])
PATH_CALL(rmdir, CKPT_OP_UNLINK, AT_FDCWD_ARG, ctx->args[0], 0, NO_PATH, 0)
PATH_CALL(newfstatat, CKPT_OP_STAT, ctx->args[0], ctx->args[1], 0, NO_PATH, ctx->args[3])
PATH_CALL(statx, CKPT_OP_STAT, ctx->args[0], ctx->args[1], 0, NO_PATH, ctx->args[2])
PATH_CALL(newstat, CKPT_OP_STAT, AT_FDCWD_ARG, ctx->args[0], 0, NO_PATH, 0)
PATH_CALL(newlstat, CKPT_OP_STAT, AT_FDCWD_ARG, ctx->args[0], 0, NO_PATH, 0x100 /* nofollow */)

/* ---- scheduler: on-CPU time outside I/O ---------------------------------- */

static __always_inline void flush_cpu_window(struct thread_cpu *st, __u64 pid_tgid, __u64 now)
{
	struct ckpt_cpu_record *rec;

	if (st->oncpu_since_ns && now > st->oncpu_since_ns)
		st->acc_ns += now - st->oncpu_since_ns;
	st->oncpu_since_ns = 0;
	if (st->acc_ns == 0)
		return;
	rec = bpf_ringbuf_reserve(&jobio_events, sizeof(*rec), 0);
	if (!rec) {
		count_drop(CKPT_DROP_RINGBUF_FULL);
	} else {
		fill_header(&rec->hdr, CKPT_REC_CPU, 0, pid_tgid, st->window_start_ns, now);
		rec->hdr.cpu_window_start_ns = st->window_start_ns;
		rec->hdr.cpu_ns = st->acc_ns;
		bpf_ringbuf_submit(rec, 0);
	}
	st->window_start_ns = now;
	st->acc_ns = 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 prev_tgid = BPF_CORE_READ(prev, tgid);
	__u32 next_tgid = BPF_CORE_READ(next, tgid);
	struct thread_cpu *st;
	__u32 tid;

	if (other_task_is_traced(prev_tgid)) {
		tid = BPF_CORE_READ(prev, pid);
		st = bpf_map_lookup_elem(&thread_cpus, &tid);
		if (st && !st->in_io)
			flush_cpu_window(st, ((__u64)prev_tgid << 32) | tid, now);
	}
	if (other_task_is_traced(next_tgid)) {
		tid = BPF_CORE_READ(next, pid);
		st = bpf_map_lookup_elem(&thread_cpus, &tid);
		if (st) {
			if (!st->in_io)
				st->oncpu_since_ns = now;
		} else {
			struct thread_cpu fresh = {.window_start_ns = now, .oncpu_since_ns = now};

			if (bpf_map_update_elem(&thread_cpus, &tid, &fresh, BPF_NOEXIST) ==
			    -7 /* -E2BIG: the map is full */)
				count_drop(CKPT_DROP_THREAD_FULL);
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
	bpf_ringbuf_submit(rec, 0);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_process_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 parent_tgid = BPF_CORE_READ(parent, tgid);
	__u32 child_tgid = BPF_CORE_READ(child, tgid);
	__u8 one = 1;

	if (child_tgid == parent_tgid || !tgid_is_traced(parent_tgid))
		return 0;
	if (bpf_map_update_elem(&traced_tgids, &child_tgid, &one, BPF_ANY)) {
		count_drop(CKPT_DROP_TGID_FULL);
		return 0;
	}
	emit_proc(CKPT_PROC_FORK, parent_tgid, BPF_CORE_READ(parent, pid), child_tgid, 0, child);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_process_exit, struct task_struct *task)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);
	__u32 tid = BPF_CORE_READ(task, pid);
	struct thread_cpu *st;

	if (!other_task_is_traced(tgid))
		return 0;
	st = bpf_map_lookup_elem(&thread_cpus, &tid);
	if (st && !st->in_io)
		flush_cpu_window(st, ((__u64)tgid << 32) | tid, bpf_ktime_get_ns());
	bpf_map_delete_elem(&thread_cpus, &tid);
	bpf_map_delete_elem(&fd_calls, &tid);
	bpf_map_delete_elem(&path_calls, &tid);
	if (!ckpt_task_group_dead(task)) {
		emit_proc(CKPT_PROC_THREAD_EXIT, tgid, tid, 0, BPF_CORE_READ(task, exit_code),
			  task);
		return 0;
	}
	emit_proc(CKPT_PROC_EXIT, tgid, tid, 0, BPF_CORE_READ(task, exit_code), task);
	if (filter_mode != CKPT_FILTER_ALL)
		bpf_map_delete_elem(&traced_tgids, &tgid);
	return 0;
}
