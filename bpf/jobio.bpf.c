// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The job's side of a checkpoint: file I/O calls on regular files, the
 * path calls that set up and commit checkpoint directories, the threads'
 * on-CPU time outside those calls (the serialize stage), and the process
 * tree (fork/exit), selected in the kernel by tgid set or cgroup.
 *
 * Two ways in, one chosen by user space at load (enum ckpt_probe_mode):
 *  - the file layer (jobio_file_layer.bpf.h): fentry/fexit on the VFS
 *    functions every path funnels through, so only file I/O pays, and calls
 *    on files user space ruled out cost a map lookup;
 *  - the syscall boundary (below), where trampolines are refused: the
 *    raw_syscalls sys_enter/sys_exit tracepoints through tp_btf, as Falco and
 *    Tracee do. A table lookup drops every syscall we do not trace in a few
 *    instructions, and the calls we do trace skip the perf buffer set-up of
 *    the per-syscall (syscalls:sys_*) tracepoints, which cost ~400 ns a
 *    traced call on our test machine.
 * Both share the io_uring and page-cache programs (jobio_async.bpf.h), the
 * scheduler and process-tree programs below, and one thread state in task
 * storage, so a traced call touches no hash map but the verdict.
 */
#include "jobio_state.bpf.h"
#include "jobio_aio.bpf.h"
#include "jobio_storage_copies.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* ---- the syscall boundary (CKPT_MODE_SYSCALL) ------------------------------ */

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

static __always_inline int fd_call_enter(struct task_struct *task, struct thread_state *st,
					 __u64 now, __u32 op, long fd, __u64 requested)
{
	if (!resolve_fd(task, st, (int)fd))
		return 0;
	begin_file_call(st, now, op, CKPT_VIA_SYSCALL, (int)fd, requested);
	return 0;
}

/* copy_file_range, sendfile, splice: two fds; a pipe side has no file type. */
static __always_inline int copy_call_enter(struct task_struct *task, struct thread_state *st,
					   __u64 now, __u32 via, long src_fd, long dst_fd,
					   __u64 len)
{
	if (!resolve_fd(task, st, (int)dst_fd))
		return 0;
	st->dev2 = st->cur.dev;
	st->ino2 = st->cur.ino;
	st->file_type2 = st->cur.file_type;
	st->fd2 = (int)dst_fd;
	if (!resolve_fd(task, st, (int)src_fd))
		return 0;
	st->cur.fd = (int)src_fd;
	begin_copy(st, now, via, len);
	return 0;
}

/* ioctl(dst_fd, FICLONE, src_fd) or (dst_fd, FICLONERANGE, &range): a
 * reflink, a copy of the bytes it asks to clone; any other ioctl is none
 * of ours. */
static __always_inline int reflink_call_enter(struct task_struct *task, struct thread_state *st,
					      __u64 now, long dst_fd, unsigned int cmd,
					      unsigned long arg)
{
	struct ckpt_file_clone_range range = {};

	if (cmd == CKPT_FICLONE)
		range.src_fd = (int)arg;
	else if (bpf_probe_read_user(&range, sizeof(range), (const void *)arg))
		return 0;
	return copy_call_enter(task, st, now, CKPT_VIA_REFLINK, range.src_fd, dst_fd,
			       clone_length(ckpt_fd_to_file(task, (int)range.src_fd),
					    range.src_offset, range.src_length));
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
	/* Of ioctls, only a reflink's: the others (a GPU driver's, thousands
	 * a second) leave at once, before any map is looked at. */
	if (kind == CKPT_SC_IOCTL && !is_clone_ioctl(ckpt_syscall_arg(regs, 1)))
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
	case CKPT_SC_COPY_FILE_RANGE:
		return copy_call_enter(task, st, now, CKPT_VIA_COPY_FILE_RANGE, a0, a2,
				       ckpt_syscall_arg(regs, 4));
	case CKPT_SC_SENDFILE: /* sendfile(out_fd, in_fd, offset, count) */
		return copy_call_enter(task, st, now, CKPT_VIA_SENDFILE, a1, a0,
				       ckpt_syscall_arg(regs, 3));
	case CKPT_SC_SPLICE:
		return copy_call_enter(task, st, now, CKPT_VIA_SENDFILE, a0, a2,
				       ckpt_syscall_arg(regs, 4));
	case CKPT_SC_IO_SUBMIT:
		aio_submit_enter(task, st, a0, a1, a2, now);
		return 0;
	case CKPT_SC_IO_GETEVENTS:
		aio_call_enter(st, a0, true, a1 <= 0, now);
		return 0;
	case CKPT_SC_OPENAT:
		begin_path_call(st, now, CKPT_OP_OPEN, a0, (const char *)a1, 0, NULL, a2,
				NAMES_USER);
		return 0;
	case CKPT_SC_OPENAT2:
		begin_path_call(st, now, CKPT_OP_OPEN, a0, (const char *)a1, 0, NULL, 0,
				NAMES_USER);
		return 0;
	case CKPT_SC_OPEN:
		begin_path_call(st, now, CKPT_OP_OPEN, AT_FDCWD_ARG, (const char *)a0, 0, NULL, a1,
				NAMES_USER);
		return 0;
	case CKPT_SC_CREAT:
		begin_path_call(st, now, CKPT_OP_OPEN, AT_FDCWD_ARG, (const char *)a0, 0, NULL,
				CREAT_FLAGS, NAMES_USER);
		return 0;
	case CKPT_SC_RENAME:
		begin_path_call(st, now, CKPT_OP_RENAME, AT_FDCWD_ARG, (const char *)a0,
				AT_FDCWD_ARG, (const char *)a1, 0, NAMES_USER);
		return 0;
	case CKPT_SC_RENAMEAT:
		begin_path_call(st, now, CKPT_OP_RENAME, a0, (const char *)a1, a2,
				(const char *)ckpt_syscall_arg(regs, 3), ckpt_syscall_arg(regs, 4),
				NAMES_USER);
		return 0;
	case CKPT_SC_MKDIR:
		begin_path_call(st, now, CKPT_OP_MKDIR, AT_FDCWD_ARG, (const char *)a0, 0, NULL, 0,
				NAMES_USER);
		return 0;
	case CKPT_SC_MKDIRAT:
		begin_path_call(st, now, CKPT_OP_MKDIR, a0, (const char *)a1, 0, NULL, 0,
				NAMES_USER);
		return 0;
	case CKPT_SC_UNLINK:
		begin_path_call(st, now, CKPT_OP_UNLINK, AT_FDCWD_ARG, (const char *)a0, 0, NULL, 0,
				NAMES_USER);
		return 0;
	case CKPT_SC_UNLINKAT:
		begin_path_call(st, now, CKPT_OP_UNLINK, a0, (const char *)a1, 0, NULL, a2,
				NAMES_USER);
		return 0;
	case CKPT_SC_FSTATAT:
		begin_path_call(st, now, CKPT_OP_STAT, a0, (const char *)a1, 0, NULL,
				ckpt_syscall_arg(regs, 3), NAMES_USER);
		return 0;
	case CKPT_SC_STATX:
		begin_path_call(st, now, CKPT_OP_STAT, a0, (const char *)a1, 0, NULL, a2,
				NAMES_USER);
		return 0;
	case CKPT_SC_STAT:
		begin_path_call(st, now, CKPT_OP_STAT, AT_FDCWD_ARG, (const char *)a0, 0, NULL, 0,
				NAMES_USER);
		return 0;
	case CKPT_SC_LSTAT:
		begin_path_call(st, now, CKPT_OP_STAT, AT_FDCWD_ARG, (const char *)a0, 0, NULL,
				NOFOLLOW_FLAG, NAMES_USER);
		return 0;
	case CKPT_SC_IOCTL:
		return reflink_call_enter(task, st, now, a0, (unsigned int)a1, a2);
	case CKPT_SC_CHDIR:
		begin_path_call(st, now, CKPT_OP_CHDIR, AT_FDCWD_ARG, (const char *)a0, 0, NULL, 0,
				NAMES_USER);
		return 0;
	case CKPT_SC_FCHDIR:
		begin_path_call(st, now, CKPT_OP_CHDIR, a0, NULL, 0, NULL, 0, NAMES_USER);
		return 0;
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
	__u32 kind = kind_of(nr);

	if (floor_only || kind == CKPT_SC_NONE)
		return 0;
	if (kind == CKPT_SC_IOCTL && !is_clone_ioctl(ckpt_syscall_arg(regs, 1)))
		return 0;
	task = bpf_get_current_task_btf();
	st = running_state(task);
	if (!st || st->call == CALL_NONE || st->syscall_nr != nr)
		return 0;
	switch (st->call) {
	case CALL_FD:
	case CALL_OTHER:
		end_file_call(st, ret);
		return 0;
	case CALL_COPY:
		end_copy(st, ret);
		return 0;
	case CALL_OTHER_COPY:
		end_other_copy(st, ret);
		return 0;
	/* The arguments are still in the registers at the exit. */
	case CALL_AIO_SUBMIT:
		aio_submit_exit(task, ckpt_syscall_arg(regs, 0), ckpt_syscall_arg(regs, 1),
				ckpt_syscall_arg(regs, 2), ret, bpf_ktime_get_ns());
		return 0;
	case CALL_AIO_WAIT:
		aio_wait_exit(task, ckpt_syscall_arg(regs, 0), ckpt_syscall_arg(regs, 3), ret,
			      bpf_ktime_get_ns());
		return 0;
	default:
		end_path_call(task, st, ret);
		return 0;
	}
}

#include "jobio_file_layer.bpf.h"
#include "jobio_async.bpf.h"
#include "jobio_mappings.bpf.h"
#include "jobio_storage.bpf.h"

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
		bpf_ringbuf_submit(rec, submit_flags());
	}
	st->window_start_ns = now;
	st->acc_ns = 0;
}

/* The thread leaves the CPU: what it folded is reported now, not when it next
 * runs, and its CPU time up to now unless it is inside a traced call. */
static __always_inline void switched_out(struct thread_state *st, struct task_struct *prev,
					 __u64 prev_id, __u64 now)
{
	if (!st->mfold.in_fault)
		flush_folds(st, prev_id);
	flush_aged_other_io(st, prev_id, now, other_io_flush_ns);
	if (!st->in_io)
		flush_cpu_window(st, prev_id, now, cpu_flush_min_ns);
	else
		announce_switched_out(st, prev, prev_id);
	if ((st->call == CALL_AIO_SUBMIT || st->call == CALL_AIO_WAIT) && !st->announced)
		aio_announce(st, prev->tgid, prev_id);
}

/* The hot slot's owner leaves the CPU: its state goes back to its task
 * storage (gone once a dead task's last switch is past: then it is dropped),
 * and the slot is free for the next thread. */
static __always_inline void release_slot(struct hot_slot *slot, struct task_struct *prev,
					 __u64 prev_id, __u64 now)
{
	struct thread_state *stored;

	if (other_task_is_traced(prev->tgid))
		switched_out(&slot->st, prev, prev_id, now);
	stored = bpf_task_storage_get(&thread_states, prev, 0, 0);
	if (stored) {
		*stored = slot->st;
		stored->wants_slot = slot->head.used;
	}
	slot->head.owner = 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 prev_id = ((__u64)prev->tgid << 32) | (__u32)prev->pid;
	struct hot_slot *slot = this_cpu_slot();
	__u64 now = bpf_ktime_get_ns();
	struct thread_state *st;

	/* The slot's owner first, traced or not (a dying process has left
	 * traced_tgids by its last switch). Switched out inside a file-layer
	 * program (or any section it cannot migrate out of), a thread resumes
	 * here and finishes its update in the slot: keep it for it. */
	if (slot && slot->head.owner && slot->head.owner == prev->pid) {
		if (!ckpt_task_pinned_to_cpu(prev))
			release_slot(slot, prev, prev_id, now);
		fault_switched_out(prev);
	} else if (other_task_is_traced(prev->tgid)) {
		st = bpf_task_storage_get(&thread_states, prev, 0, 0);
		if (st && !st->busy)
			switched_out(st, prev, prev_id, now);
		fault_switched_out(prev);
	}
	if (!other_task_is_traced(next->tgid))
		return 0;
	fault_switched_in(next);
	if (slot && slot->head.owner && slot->head.owner == next->pid) {
		st = &slot->st; /* back inside the program it was switched out of */
	} else {
		st = bpf_task_storage_get(&thread_states, next, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!st) {
			count_drop(CKPT_DROP_THREAD_FULL);
			return 0;
		}
		/* A thread that did traced I/O in its last slice moves in, unless
		 * it was switched out inside a program (which holds a pointer to
		 * its storage, and would go on writing there). */
		if (slot && !slot->head.owner && st->wants_slot && !ckpt_task_pinned_to_cpu(next)) {
			slot->st = *st;
			slot->head.owner = next->pid;
			slot->head.used = 0;
			st = &slot->st;
		}
	}
	if (!st->window_start_ns) {
		st->window_start_ns = now;
		st->oncpu_since_ns = now;
	} else if (!st->in_io) {
		st->oncpu_since_ns = now;
	}
	return 0;
}

/* ---- the process tree ----------------------------------------------------- */

static __always_inline void emit_proc(__u32 op, __u32 tgid, __u32 tid, __u32 child_tgid,
				      __s32 exit_code, struct task_struct *task, __u32 secure_exec)
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
	rec->uid = BPF_CORE_READ(task, cred, uid.val);
	rec->euid = BPF_CORE_READ(task, cred, euid.val);
	rec->gid = BPF_CORE_READ(task, cred, gid.val);
	rec->egid = BPF_CORE_READ(task, cred, egid.val);
	rec->secure_exec = secure_exec;
	rec->io_accounting = 0;
	rec->io_read_bytes = 0;
	rec->io_write_bytes = 0;
	rec->io_cancelled_write_bytes = 0;
	/* An exiting thread's own I/O counters: final here (release_task folds
	 * them into its process' later). */
	if ((op == CKPT_PROC_EXIT || op == CKPT_PROC_THREAD_EXIT) &&
	    bpf_core_field_exists(task->ioac.write_bytes)) {
		rec->io_accounting = 1;
		rec->io_read_bytes = BPF_CORE_READ(task, ioac.read_bytes);
		rec->io_write_bytes = BPF_CORE_READ(task, ioac.write_bytes);
		rec->io_cancelled_write_bytes = BPF_CORE_READ(task, ioac.cancelled_write_bytes);
	}
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
	emit_proc(CKPT_PROC_FORK, parent_tgid, parent->pid, child_tgid, 0, child, 0);
	return 0;
}

/*
 * An exec that changed the process' credentials: a setuid or setgid program,
 * file capabilities, an LSM domain transition. The kernel sums these up in
 * bprm->secureexec (what it tells the new program as AT_SECURE,
 * security/commoncap.c cap_bprm_creds_from_file); a setuid exec shows too as
 * euid != uid. The tracepoint fires after begin_new_exec() committed the new
 * credentials (fs/exec.c exec_binprm), before the program runs a single
 * instruction, so the record reaches the exporter ahead of any I/O the
 * privileged program does: the exporter takes it out of an unprivileged
 * client's trace from there (apps/exporter/registration_server.h). Execs
 * that change nothing make no record.
 */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_process_exec, struct task_struct *task, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = task->tgid;
	__u32 secure_exec;

	if (!other_task_is_traced(tgid))
		return 0;
	secure_exec = BPF_CORE_READ_BITFIELD_PROBED(bprm, secureexec);
	if (!secure_exec &&
	    BPF_CORE_READ(task, cred, uid.val) == BPF_CORE_READ(task, cred, euid.val) &&
	    BPF_CORE_READ(task, cred, gid.val) == BPF_CORE_READ(task, cred, egid.val))
		return 0;
	emit_proc(CKPT_PROC_EXEC_PRIVILEGED, tgid, task->pid, 0, 0, task, secure_exec);
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
	st = running_state(task);
	if (st) {
		flush_folds(st, ((__u64)tgid << 32) | tid);
		flush_aged_other_io(st, ((__u64)tgid << 32) | tid, bpf_ktime_get_ns(), 0);
		if (!st->in_io)
			flush_cpu_window(st, ((__u64)tgid << 32) | tid, bpf_ktime_get_ns(), 0);
	}
	/* Task storage goes with the task; a path call cut short does not. */
	bpf_map_delete_elem(&path_calls, &tid);
	if (!ckpt_task_group_dead(task)) {
		emit_proc(CKPT_PROC_THREAD_EXIT, tgid, tid, 0, task->exit_code, task, 0);
		return 0;
	}
	aio_process_exited(tgid);
	if (task->exit_code & 0x7f)
		emit_files_open_for_write(task, ((__u64)tgid << 32) | tid);
	emit_proc(CKPT_PROC_EXIT, tgid, tid, 0, task->exit_code, task, 0);
	if (filter_mode != CKPT_FILTER_ALL)
		bpf_map_delete_elem(&traced_tgids, &tgid);
	return 0;
}
