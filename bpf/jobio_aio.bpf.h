/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Linux AIO: io_submit(2) and io_getevents(2), the interface libaio wraps and
 * DeepSpeed's async I/O (and FastPersist) write checkpoints through, with
 * O_DIRECT. Neither mode sees these requests any other way: fs/aio.c
 * aio_read/aio_write call ->read_iter/->write_iter directly, never vfs_read
 * or vfs_write, and the syscall table has no read or write in them.
 *
 * A request is remembered when it is submitted (its file, op and size from
 * the job's struct iocb, which the kernel copies at the same moment) and
 * reported when the job reaps its completion: io_getevents copies each
 * struct io_event, whose `obj` is the submitted iocb's address, to the
 * job's memory before it returns. Its record is an ordinary data call
 * (CKPT_REC_IO, via CKPT_VIA_AIO) from submission to reaping: for O_DIRECT
 * the kernel completes it earlier, in a worker or an interrupt (iomap's
 * dio completion), so its time is an upper bound by the reaper's wait.
 * Buffered AIO completes inside io_submit. Reaping in user space (from the
 * ring at ctx_id, fio's userspace_reap) makes no system call: those
 * requests are counted as lost (CKPT_DROP_AIO_UNREAPED) when their process
 * exits, never reported as moved.
 *
 * Both modes hook the same two moments: syscall mode through its raw
 * sys_enter/sys_exit (jobio.bpf.c, kinds CKPT_SC_IO_SUBMIT and
 * CKPT_SC_IO_GETEVENTS), the file layer through fentry/fexit on
 * io_submit_one (one request: the kernel's own loop) and do_io_getevents
 * (every getevents variant: io_getevents, io_pgetevents and their compat and
 * time32 forms). Both are in the 6.1, 6.12 and 6.18 BTF.
 *
 * Calls in flight (jobio_state.bpf.h): a thread that waits in io_getevents
 * while its process has requests out on a file that is, or may be, a
 * checkpoint's is announced (CKPT_REC_IO_START, via CKPT_VIA_AIO) when it
 * first leaves the CPU in the wait; the completions it reaps end it, as any
 * later record of the thread does. A wait that reaped nothing leaves it in
 * flight: the requests still are.
 *
 * Included by jobio.bpf.c.
 */
#ifndef CKPTSCOPE_JOBIO_AIO_BPF_H
#define CKPTSCOPE_JOBIO_AIO_BPF_H

#include "jobio_state.bpf.h"

/* enum IOCB_CMD_* (uapi linux/aio_abi.h): stable numbers. */
#define CKPT_IOCB_CMD_PREAD 0
#define CKPT_IOCB_CMD_PWRITE 1
#define CKPT_IOCB_CMD_FSYNC 2
#define CKPT_IOCB_CMD_FDSYNC 3
#define CKPT_IOCB_CMD_PREADV 7
#define CKPT_IOCB_CMD_PWRITEV 8

/* thread_state.announced during an io_submit or io_getevents: 0 not yet
 * looked at, NOT_ANNOUNCED looked at (nothing out, or a poll), ANNOUNCED a
 * start record went out (its end, CKPT_REC_CALL_END, goes at the exit). */
#define CKPT_AIO_NOT_ANNOUNCED 1
#define CKPT_AIO_ANNOUNCED 2

/* Requests read per io_submit and completions per io_getevents: DeepSpeed
 * submits its queue depth (8 to 128) at once. Past it: CKPT_DROP_AIO_UNREADABLE. */
#define CKPT_AIO_BATCH_MAX 4096

/* A request is known by its process, its context and its iocb's address:
 * what the completion (io_event.obj) names. */
struct aio_request_key {
	__u64 ctx_id; /* aio_context_t, the address of the context's ring */
	__u64 iocb;   /* the job's struct iocb */
	__u32 tgid;
	__u32 pad;
};

struct aio_request {
	struct call_desc c; /* op 0: not a data or flush request (poll, noop) */
	__u32 counted;	    /* counted in its process' aio_process.outstanding */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct aio_request_key);
	__type(value, struct aio_request);
} aio_requests SEC(".maps");

/* Per context (a process' aio_context_t) with AIO on record: its requests
 * out on files that are, or may be, a checkpoint's, and the latest of them
 * (what an announcement names). */
struct aio_context_key {
	__u64 ctx_id;
	__u32 tgid;
	__u32 pad;
};

struct aio_context {
	__s64 outstanding;
	struct call_desc last;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct aio_context_key);
	__type(value, struct aio_context);
} aio_contexts SEC(".maps");

/* The processes with anything in aio_requests or aio_contexts: their exit
 * clears it (a process without AIO costs that exit one failed lookup). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32); /* tgid */
	__type(value, __u8);
} aio_tgids SEC(".maps");

static __always_inline bool aio_loop_available(void)
{
	return bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_loop);
}

static __always_inline __u32 aio_op(__u16 opcode)
{
	switch (opcode) {
	case CKPT_IOCB_CMD_PREAD:
	case CKPT_IOCB_CMD_PREADV:
		return CKPT_OP_READ;
	case CKPT_IOCB_CMD_PWRITE:
	case CKPT_IOCB_CMD_PWRITEV:
		return CKPT_OP_WRITE;
	case CKPT_IOCB_CMD_FSYNC:
	case CKPT_IOCB_CMD_FDSYNC:
		return CKPT_OP_FSYNC;
	default:
		return 0;
	}
}

/* The context's count of requests out on possible checkpoint files moves by
 * `delta`. Two threads may create the entry at once: it is made at 0, then
 * moved atomically, so neither's count is lost. */
static __always_inline void aio_count(__u32 tgid, __u64 ctx_id, const struct call_desc *c,
				      __s64 delta)
{
	struct aio_context_key key = {.ctx_id = ctx_id, .tgid = tgid};
	struct aio_context fresh = {};
	struct aio_context *p = bpf_map_lookup_elem(&aio_contexts, &key);

	if (!p) {
		if (delta <= 0)
			return;
		if (bpf_map_update_elem(&aio_contexts, &key, &fresh, BPF_NOEXIST) &&
		    !bpf_map_lookup_elem(&aio_contexts, &key)) {
			count_drop(CKPT_DROP_AIO_INFLIGHT_FULL);
			return;
		}
		p = bpf_map_lookup_elem(&aio_contexts, &key);
		if (!p)
			return;
	}
	__sync_fetch_and_add(&p->outstanding, delta);
	if (delta > 0)
		p->last = *c;
}

/* Forgets a request taken off the record (reaped or refused). */
static __always_inline void aio_forget(const struct aio_request_key *key,
				       const struct aio_request *r)
{
	if (r->counted)
		aio_count(key->tgid, key->ctx_id, &r->c, -1);
	bpf_map_delete_elem(&aio_requests, key);
}

/*
 * The request whose struct iocb is at `user_iocb` is being submitted on
 * `ctx_id` by the running thread of traced process `tgid`: remember its
 * file, op and size. The kernel reads the same iocb now, so it is in memory.
 */
static __always_inline void aio_submitted(struct task_struct *task, __u32 tgid, __u64 ctx_id,
					  __u64 user_iocb, __u64 now)
{
	struct aio_request_key key = {.ctx_id = ctx_id, .iocb = user_iocb, .tgid = tgid};
	struct aio_request r = {};
	struct aio_request *old;
	struct iocb cb;
	struct inode *inode;
	struct file *file;
	__u8 one = 1;

	/* Marked first: what is remembered is cleared at the process' exit. */
	if (!bpf_map_lookup_elem(&aio_tgids, &tgid) &&
	    bpf_map_update_elem(&aio_tgids, &tgid, &one, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&aio_tgids, &tgid)) {
		count_drop(CKPT_DROP_AIO_INFLIGHT_FULL);
		return;
	}
	if (bpf_probe_read_user(&cb, sizeof(cb), (void *)user_iocb)) {
		count_drop(CKPT_DROP_AIO_UNREADABLE);
		return;
	}
	r.c.start_ns = now;
	r.c.op = aio_op(cb.aio_lio_opcode);
	r.c.via = CKPT_VIA_AIO;
	r.c.fd = (__s32)cb.aio_fildes;
	if (cb.aio_lio_opcode == CKPT_IOCB_CMD_PREAD || cb.aio_lio_opcode == CKPT_IOCB_CMD_PWRITE)
		r.c.requested = cb.aio_nbytes; /* the vectored forms: an iovec count */
	file = r.c.op ? ckpt_fd_to_file(task, r.c.fd) : NULL;
	inode = file ? BPF_CORE_READ(file, f_inode) : NULL;
	if (inode) {
		describe_inode(&r.c, inode);
		r.c.direct = ckpt_file_is_direct(file);
	}
	/* Regular files only (a directory's fsync too: durable renames); the
	 * rest is remembered as op 0, so its completion is known and ignored. */
	if (r.c.file_type != CKPT_FT_REGULAR &&
	    !(r.c.file_type == CKPT_FT_DIRECTORY && r.c.op == CKPT_OP_FSYNC))
		r.c.op = 0;
	r.counted = r.c.op && file_verdict(r.c.dev, r.c.ino) != CKPT_VERDICT_OTHER;
	old = bpf_map_lookup_elem(&aio_requests, &key);
	if (old && old->counted)
		aio_count(tgid, ctx_id, &old->c, -1); /* its completion was never reaped */
	if (bpf_map_update_elem(&aio_requests, &key, &r, BPF_ANY)) {
		count_drop(CKPT_DROP_AIO_INFLIGHT_FULL);
		return;
	}
	if (r.counted)
		aio_count(tgid, ctx_id, &r.c, 1);
}

/* The kernel refused the request at `user_iocb` with `err` (or, err 0, did
 * not take it: io_submit returned a short count): off the record, and a
 * refusal reported as a failed call of the thread. */
static __always_inline void aio_refused(struct thread_state *st, __u32 tgid, __u64 ctx_id,
					__u64 user_iocb, long err, __u64 now)
{
	struct aio_request_key key = {.ctx_id = ctx_id, .iocb = user_iocb, .tgid = tgid};
	struct ckpt_record_header cpu = {};
	struct aio_request *found = bpf_map_lookup_elem(&aio_requests, &key);
	struct aio_request r;

	if (!found)
		return;
	r = *found;
	aio_forget(&key, &r);
	if (err >= 0 || !r.c.op)
		return;
	cpu.cpu_window_start_ns = r.c.start_ns;
	report_data_call(st, &r.c, now, err, &cpu);
}

/* One completion reaped, `ev` as the kernel copied it to the job: the
 * request's record, from its submission to now. */
static __always_inline void aio_reaped(struct thread_state *st, __u32 tgid, __u64 ctx_id,
				       const struct io_event *ev, __u64 now)
{
	struct aio_request_key key = {.ctx_id = ctx_id, .iocb = ev->obj, .tgid = tgid};
	struct ckpt_record_header cpu = {};
	struct aio_request *found = bpf_map_lookup_elem(&aio_requests, &key);
	struct aio_request r;
	long res = (long)ev->res;

	if (!found) {
		count_drop(CKPT_DROP_AIO_UNMATCHED);
		return;
	}
	r = *found;
	aio_forget(&key, &r);
	if (!r.c.op)
		return;
	if (res >= 0 && thread_file_verdict(st, r.c.dev, r.c.ino) == CKPT_VERDICT_OTHER) {
		if (res > 0 && other_io_counting() && r.c.op != CKPT_OP_FSYNC)
			count_other_io(st, r.c.dev, r.c.ino, r.c.op == CKPT_OP_WRITE, res);
		return;
	}
	/* The thread ran on, or waited, while the request was out: no CPU
	 * window is closed by it (as for io_uring). */
	cpu.cpu_window_start_ns = r.c.start_ns;
	report_data_call(st, &r.c, now, res, &cpu);
}

/* ---- the loops over one call's requests or completions ----------------------- */

struct aio_batch {
	struct task_struct *task;
	__u64 ctx_id;
	__u64 array; /* struct iocb ** (io_submit) or struct io_event * (io_getevents) */
	__u64 now;
	__u32 tgid;
	__u32 first; /* io_submit's exit: the first request not taken */
	__u32 count;
	__s32 err; /* io_submit's error, for the first request */
};

/* io_submit's entry: request i submitted. */
static long aio_submit_one(__u32 i, void *data)
{
	struct aio_batch *b = data;
	__u64 user_iocb = 0;

	if (i >= b->count)
		return 1;
	if (bpf_probe_read_user(&user_iocb, sizeof(user_iocb), (void *)(b->array + 8 * (__u64)i))) {
		count_drop(CKPT_DROP_AIO_UNREADABLE);
		return 0;
	}
	aio_submitted(b->task, b->tgid, b->ctx_id, user_iocb, b->now);
	return 0;
}

/* io_submit's exit: request first + i was not taken. */
static long aio_refuse_one(__u32 i, void *data)
{
	struct aio_batch *b = data;
	struct thread_state *st;
	__u64 user_iocb = 0;
	__u64 at = (__u64)b->first + i;

	if (at >= b->count)
		return 1;
	if (bpf_probe_read_user(&user_iocb, sizeof(user_iocb), (void *)(b->array + 8 * at))) {
		count_drop(CKPT_DROP_AIO_UNREADABLE); /* left on record: unreaped at exit */
		return 0;
	}
	st = running_state(b->task);
	if (!st) {
		count_drop(CKPT_DROP_THREAD_FULL);
		return 0;
	}
	aio_refused(st, b->tgid, b->ctx_id, user_iocb, i == 0 ? b->err : 0, b->now);
	return 0;
}

/* io_getevents' exit: completion i reaped. */
static long aio_reap_one(__u32 i, void *data)
{
	struct aio_batch *b = data;
	struct thread_state *st;
	struct io_event ev;

	if (i >= b->count)
		return 1;
	if (bpf_probe_read_user(&ev, sizeof(ev), (void *)(b->array + sizeof(ev) * (__u64)i))) {
		count_drop(CKPT_DROP_AIO_UNREADABLE);
		return 0;
	}
	st = running_state(b->task);
	if (!st) {
		count_drop(CKPT_DROP_THREAD_FULL); /* left on record: unreaped at exit */
		return 0;
	}
	aio_reaped(st, b->tgid, b->ctx_id, &ev, b->now);
	return 0;
}

/* Runs fn over the batch's first `count` entries, at most
 * CKPT_AIO_BATCH_MAX (without bpf_loop, before 5.17: only the first). What is
 * past the bound is counted lost when `lost_past` (requests or completions
 * never looked at; a refusal past it needs nothing: its request was never
 * remembered either). */
static __always_inline void aio_for_each(long (*fn)(__u32, void *), struct aio_batch *b, long count,
					 bool lost_past)
{
	long bound = aio_loop_available() ? CKPT_AIO_BATCH_MAX : 1;

	if (count <= 0)
		return;
	if (count > bound) {
		if (lost_past)
			count_drops(CKPT_DROP_AIO_UNREADABLE, count - bound);
		count = bound;
	}
	b->count = b->first + (__u32)count;
	if (aio_loop_available())
		bpf_loop((__u32)count, fn, b, 0);
	else
		fn(0, b);
}

/* ---- a submission or a wait in flight ------------------------------------------ */

/* The thread enters io_submit (`wait` false) or io_getevents on `ctx_id`:
 * a call that may block, announced if it does (aio_announce). A poll
 * (io_getevents with min_nr 0) never waits: never announced. */
static __always_inline void aio_call_enter(struct thread_state *st, __u64 ctx_id, bool wait,
					   bool poll, __u64 now)
{
	st->call = wait ? CALL_AIO_WAIT : CALL_AIO_SUBMIT;
	st->announced = poll ? CKPT_AIO_NOT_ANNOUNCED : 0;
	st->aio_ctx = ctx_id;
	st->cur.start_ns = now;
}

/* The thread leaves the CPU inside io_submit or io_getevents: announced in
 * flight (once a call) when its context has requests out on a file that is,
 * or may be, a checkpoint's: an O_DIRECT write that extends its file waits
 * inside io_submit (ext4, IOMAP_DIO_FORCE_WAIT), a reaper in io_getevents. A
 * call that never leaves the CPU costs no record. (sched_switch flushed the
 * thread's folds just before: they go out ahead of the announcement.) */
static __always_inline void aio_announce(struct thread_state *st, __u32 tgid, __u64 pid_tgid)
{
	struct aio_context_key key = {.ctx_id = st->aio_ctx, .tgid = tgid};
	struct aio_context *p = bpf_map_lookup_elem(&aio_contexts, &key);
	struct ckpt_io_record *rec;

	st->announced = CKPT_AIO_NOT_ANNOUNCED;
	if (!p || p->outstanding <= 0)
		return;
	rec = bpf_ringbuf_reserve(&jobio_events, sizeof(*rec), 0);
	if (!rec) {
		count_drop(CKPT_DROP_RINGBUF_FULL);
		return;
	}
	st->announced = CKPT_AIO_ANNOUNCED;
	fill_header(&rec->hdr, CKPT_REC_IO_START, p->last.op, pid_tgid, st->cur.start_ns, 0);
	rec->hdr.cpu_window_start_ns = st->cur.start_ns;
	rec->hdr.cpu_ns = 0;
	rec->ret = 0;
	rec->requested = 0;
	rec->dev = p->last.dev;
	rec->ino = p->last.ino;
	rec->fd = p->last.fd;
	rec->file_type = p->last.file_type;
	rec->calls = 1;
	rec->via = CKPT_VIA_AIO;
	rec->busy_ns = 0;
	rec->last_start_ns = st->cur.start_ns;
	rec->storage_bytes = 0;
	rec->dirtied_bytes = 0;
	rec->throttle_ns = 0;
	bpf_ringbuf_submit(rec, submit_flags());
}

/* The io_submit or io_getevents call is over, its records sent. One that was
 * announced ends now, whatever it reported (a wait that timed out, or reaped
 * only files ruled out, reports nothing): what it folded goes out, then a
 * CKPT_REC_CALL_END. */
static __always_inline void aio_call_exit(struct task_struct *task, __u64 now)
{
	struct thread_state *st = running_state(task);
	struct ckpt_record_header *rec;
	__u64 pid_tgid;

	if (!st || (st->call != CALL_AIO_SUBMIT && st->call != CALL_AIO_WAIT))
		return;
	st->call = CALL_NONE;
	if (st->announced != CKPT_AIO_ANNOUNCED)
		return;
	pid_tgid = bpf_get_current_pid_tgid();
	flush_io_fold(st, pid_tgid);
	rec = bpf_ringbuf_reserve(&jobio_events, sizeof(*rec), 0);
	if (!rec) {
		count_drop(CKPT_DROP_RINGBUF_FULL);
		return;
	}
	fill_header(rec, CKPT_REC_CALL_END, 0, pid_tgid, now, now);
	rec->cpu_window_start_ns = now;
	rec->cpu_ns = 0;
	bpf_ringbuf_submit(rec, submit_flags());
}

/* ---- the two moments, for either mode ------------------------------------------ */

/* io_submit(ctx_id, nr, iocbpp) enters: every request it names is remembered
 * (those the kernel does not take are forgotten at its exit). */
static __always_inline void aio_submit_enter(struct task_struct *task, struct thread_state *st,
					     __u64 ctx_id, long nr, __u64 iocbpp, __u64 now)
{
	struct aio_batch b = {.task = task, .ctx_id = ctx_id, .array = iocbpp, .now = now};

	aio_call_enter(st, ctx_id, false, false, now);

	if (nr <= 0)
		return;
	b.tgid = task->tgid;
	aio_for_each(aio_submit_one, &b, nr, true);
}

/* io_submit returns `ret`: the first `ret` requests were taken, the rest not
 * (ret < 0: none, the first refused with -ret). */
static __always_inline void aio_submit_exit(struct task_struct *task, __u64 ctx_id, long nr,
					    __u64 iocbpp, long ret, __u64 now)
{
	struct aio_batch b = {.task = task, .ctx_id = ctx_id, .array = iocbpp, .now = now};
	long taken = ret < 0 ? 0 : ret;

	if (nr > taken) {
		b.tgid = task->tgid;
		b.first = (__u32)taken;
		b.err = ret < 0 ? (__s32)ret : 0;
		aio_for_each(aio_refuse_one, &b, nr - taken, false);
	}
	aio_call_exit(task, now);
}

/* io_getevents returns `ret` completions copied to `events`. */
static __always_inline void aio_wait_exit(struct task_struct *task, __u64 ctx_id, __u64 events,
					  long ret, __u64 now)
{
	struct aio_batch b = {.task = task, .ctx_id = ctx_id, .array = events, .now = now};

	if (ret > 0) {
		b.tgid = task->tgid;
		aio_for_each(aio_reap_one, &b, ret, true);
	}
	aio_call_exit(task, now);
}

/* A process with AIO on record exits: what it submitted and never reaped
 * through io_getevents is counted lost, and its entries go. */
static long aio_forget_unreaped(struct bpf_map *map, struct aio_request_key *key,
				struct aio_request *r, void *data)
{
	if (key->tgid != *(__u32 *)data)
		return 0;
	if (r->c.op)
		count_drop(CKPT_DROP_AIO_UNREAPED);
	bpf_map_delete_elem(map, key);
	return 0;
}

static long aio_forget_context(struct bpf_map *map, struct aio_context_key *key,
			       struct aio_context *c, void *data)
{
	if (key->tgid == *(__u32 *)data)
		bpf_map_delete_elem(map, key);
	return 0;
}

static __always_inline void aio_process_exited(__u32 tgid)
{
	if (!bpf_map_lookup_elem(&aio_tgids, &tgid))
		return;
	bpf_for_each_map_elem(&aio_requests, aio_forget_unreaped, &tgid, 0);
	bpf_for_each_map_elem(&aio_contexts, aio_forget_context, &tgid, 0);
	bpf_map_delete_elem(&aio_tgids, &tgid);
}

/* ---- the file layer's hooks (CKPT_MODE_FILE_LAYER) ------------------------------ */

/* One request, as fs/aio.c io_submit() hands each to io_submit_one() in turn
 * (the kernel reads the iocb just after this entry). */
SEC("fentry/io_submit_one")
int BPF_PROG(fl_aio_submit_enter, struct kioctx *kctx, struct iocb *user_iocb, bool compat)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct thread_state *st = traced_thread_state(task, 0);
	__u64 ctx_id = BPF_CORE_READ(kctx, user_id);
	__u64 now = bpf_ktime_get_ns();

	if (!st)
		return 0;
	st->busy = 1;
	aio_submitted(task, task->tgid, ctx_id, (__u64)user_iocb, now);
	aio_call_enter(st, ctx_id, false, false, now);
	st->busy = 0;
	return 0;
}

/* The request taken, or refused (io_submit reports the first refusal; a
 * later one only shortens its count): a refusal goes off the record, as a
 * failed call. */
SEC("fexit/io_submit_one")
int BPF_PROG(fl_aio_submit_exit, struct kioctx *kctx, struct iocb *user_iocb, bool compat, int ret)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct thread_state *st = running_state(task);
	__u64 now = bpf_ktime_get_ns();

	if (!st)
		return 0;
	st->busy = 1;
	if (ret)
		aio_refused(st, task->tgid, BPF_CORE_READ(kctx, user_id), (__u64)user_iocb, ret,
			    now);
	aio_call_exit(task, now);
	st->busy = 0;
	return 0;
}

/* io_getevents, io_pgetevents and their compat and time32 forms all wait here. */
SEC("fentry/do_io_getevents")
int BPF_PROG(fl_aio_wait_enter, long ctx_id, long min_nr, long nr, struct io_event *events)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct thread_state *st = traced_thread_state(task, 0);

	if (!st)
		return 0;
	st->busy = 1;
	aio_call_enter(st, (__u64)ctx_id, true, min_nr <= 0, bpf_ktime_get_ns());
	st->busy = 0;
	return 0;
}

SEC("fexit/do_io_getevents")
int BPF_PROG(fl_aio_wait_exit, long ctx_id, long min_nr, long nr, struct io_event *events,
	     struct timespec64 *ts, long ret)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct thread_state *st = running_state(task);

	if (!st)
		return 0;
	st->busy = 1;
	aio_wait_exit(task, (__u64)ctx_id, (__u64)events, ret, bpf_ktime_get_ns());
	st->busy = 0;
	return 0;
}

#endif /* CKPTSCOPE_JOBIO_AIO_BPF_H */
