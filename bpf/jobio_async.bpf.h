/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The job's file I/O that no call of its own carries, from tracepoints (so
 * in both probe modes): io_uring requests, which complete after the
 * submitting call returned. Mapped files are jobio_mappings.bpf.h's.
 * Included by jobio.bpf.c.
 */
#ifndef CKPTSCOPE_JOBIO_ASYNC_BPF_H
#define CKPTSCOPE_JOBIO_ASYNC_BPF_H

#include "jobio_state.bpf.h"

/* ---- io_uring ---------------------------------------------------------------- */

/* enum io_uring_op (uapi linux/io_uring.h): stable numbers. */
#define CKPT_IORING_OP_READV 1
#define CKPT_IORING_OP_WRITEV 2
#define CKPT_IORING_OP_READ_FIXED 4
#define CKPT_IORING_OP_WRITE_FIXED 5
#define CKPT_IORING_OP_READ 22
#define CKPT_IORING_OP_WRITE 23

/* A read or write request submitted, not yet complete. */
struct uring_request {
	__u64 start_ns;
	__s32 fd;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64); /* the struct io_kiocb's address */
	__type(value, struct uring_request);
} uring_requests SEC(".maps");

static __always_inline __u32 uring_data_op(__u8 opcode)
{
	switch (opcode) {
	case CKPT_IORING_OP_READV:
	case CKPT_IORING_OP_READ_FIXED:
	case CKPT_IORING_OP_READ:
		return CKPT_OP_READ;
	case CKPT_IORING_OP_WRITEV:
	case CKPT_IORING_OP_WRITE_FIXED:
	case CKPT_IORING_OP_WRITE:
		return CKPT_OP_WRITE;
	default:
		return 0;
	}
}

/* The request's file is assigned when it is issued, after this tracepoint:
 * keep its submit time and fd (the sqe's, still in cqe.fd) for the
 * completion. */
static __always_inline int uring_submitted(struct io_kiocb *req)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct uring_request r = {};
	__u64 key = (__u64)req;

	if (!uring_data_op(BPF_CORE_READ(req, opcode)))
		return 0;
	r.start_ns = bpf_ktime_get_ns();
	if (!traced_thread_state(task, r.start_ns))
		return 0;
	r.fd = BPF_CORE_READ(req, cqe.fd);
	if (bpf_map_update_elem(&uring_requests, &key, &r, BPF_ANY))
		count_drop(CKPT_DROP_URING_INFLIGHT_FULL);
	return 0;
}

/* io_uring_submit_req: 6.12 and this host's 6.18 have it (BTF). */
SEC("tp_btf/io_uring_submit_req")
int BPF_PROG(on_uring_submit_req, struct io_kiocb *req)
{
	return uring_submitted(req);
}

/* Its older name (6.1's BTF): io_uring_submit_sqe, the request first too. */
SEC("tp_btf/io_uring_submit_sqe")
int BPF_PROG(on_uring_submit_sqe, struct io_kiocb *req)
{
	return uring_submitted(req);
}

/* A request completed with `res` (bytes or -errno), in the submitter's task
 * work or an io-wq worker of its process. */
static __always_inline int uring_completed(struct io_kiocb *req, int res)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct ckpt_record_header cpu = {};
	struct uring_request *r;
	struct thread_state *st;
	struct call_desc c = {};
	struct inode *inode;
	struct file *file;
	__u64 key = (__u64)req;
	__u64 now;

	c.op = uring_data_op(BPF_CORE_READ(req, opcode));
	if (!c.op)
		return 0;
	now = bpf_ktime_get_ns();
	r = bpf_map_lookup_elem(&uring_requests, &key);
	c.start_ns = now;
	c.fd = -1;
	if (r) {
		c.start_ns = r->start_ns;
		c.fd = r->fd;
		bpf_map_delete_elem(&uring_requests, &key);
	}
	st = traced_thread_state(task, now);
	if (!st)
		return 0;
	file = BPF_CORE_READ(req, file);
	if (!file)
		return 0;
	inode = BPF_CORE_READ(file, f_inode);
	if (!inode)
		return 0;
	c.file_type = mode_file_type(BPF_CORE_READ(inode, i_mode));
	if (c.file_type != CKPT_FT_REGULAR)
		return 0;
	c.dev = BPF_CORE_READ(inode, i_sb, s_dev);
	c.ino = BPF_CORE_READ(inode, i_ino);
	c.direct = ckpt_file_is_direct(file);
	if (res >= 0 && thread_file_verdict(st, c.dev, c.ino) == CKPT_VERDICT_OTHER) {
		if (res > 0 && other_io_counting())
			count_other_io(st, c.dev, c.ino, c.op == CKPT_OP_WRITE, res);
		return 0;
	}
	c.via = CKPT_VIA_IO_URING;
	/* The submitter ran on while the request was in flight: no CPU window
	 * is closed by it. */
	cpu.cpu_window_start_ns = c.start_ns;
	report_data_call(st, &c, now, res, &cpu);
	return 0;
}

/* (ctx, req, user_data, res, cflags, extra1, extra2): the prototype in the
 * 6.1 and 6.12 BTF. */
SEC("tp_btf/io_uring_complete")
int BPF_PROG(on_uring_complete_res, void *ring, void *req, __u64 user_data, int res)
{
	return uring_completed(req, res);
}

/* (ctx, req, cqe): the prototype in this host's 6.18 BTF. User space loads
 * whichever of the two matches the kernel's btf_trace_io_uring_complete. */
SEC("tp_btf/io_uring_complete")
int BPF_PROG(on_uring_complete_cqe, void *ring, void *req, struct io_uring_cqe *cqe)
{
	return uring_completed(req, BPF_CORE_READ(cqe, res));
}

#endif /* CKPTSCOPE_JOBIO_ASYNC_BPF_H */
