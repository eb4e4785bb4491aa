/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Records shared by bpf/nfs.bpf.c and the C++ collector: the NFS client's
 * page I/O (nfs tracepoints) and each RPC's life in the sunrpc client
 * (sunrpc tracepoints). Writeback runs in kernel threads, not in the job, so
 * NFS I/O is tied to the job's files by (dev, ino), and RPCs to NFS I/O by
 * the rpc_task that carries it.
 */
#ifndef CKPTSCOPE_BPF_NFS_H
#define CKPTSCOPE_BPF_NFS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

enum ckpt_nfs_event {
	CKPT_NFS_IO_START = 1,	/* nfs_initiate_{read,write,commit} */
	CKPT_NFS_IO_DONE = 2,	/* nfs_{readpage,writeback,commit}_done */
	CKPT_RPC_DONE = 3,	/* sunrpc:rpc_stats_latency, with the task's queue waits */
	CKPT_RPC_TIMEOUT = 4,	/* sunrpc:rpc_timeout_status: a major timeout */
	CKPT_RPC_ABANDONED = 5, /* sunrpc:rpc_task_end of a task that never got a slot */
};

enum ckpt_nfs_io_kind {
	CKPT_NFS_READ = 1,
	CKPT_NFS_WRITE = 2,
	CKPT_NFS_COMMIT = 3,
};

/* Where an RPC waited, from rpc_task_sleep/rpc_task_wakeup on its transport's
 * queues (struct rpc_xprt: backlog, sending, pending). */
enum ckpt_rpc_queue {
	CKPT_RPCQ_BACKLOG = 0, /* xprt_backlog: no free request slot */
	CKPT_RPCQ_SENDING = 1, /* xprt_sending: waiting for the transport to send */
	CKPT_RPCQ_PENDING = 2, /* xprt_pending: sent, waiting for the reply */
	CKPT_RPCQ_OTHER = 3,   /* any other queue (v4.1 session slots, delay queue) */
	CKPT_RPCQ_MAX = 4,
};

#define CKPT_RPC_PROC_NAME 24

struct ckpt_nfs_record {
	__u32 event;   /* enum ckpt_nfs_event */
	__u32 io_kind; /* enum ckpt_nfs_io_kind, NFS I/O records */
	__u64 time_ns; /* CLOCK_MONOTONIC */
	/* The rpc_task's address: an opaque id that ties NFS I/O to its RPC
	 * while the task lives (never dereferenced by user space). */
	__u64 task_id;

	/* NFS I/O: the file (inode->i_sb->s_dev in the kernel's dev_t encoding,
	 * inode->i_ino), the byte range and the result. */
	__u64 dev;
	__u64 ino;
	__u64 offset;
	__u64 count;	    /* requested */
	__u64 result_count; /* done records: bytes the server took or returned */
	__s32 status;	    /* done records: rpc_task.tk_status (0 or -errno) */

	/* RPCs. */
	__u32 client_id; /* rpc_clnt.cl_clid */
	__u32 prog;	 /* 100003 = NFS */
	__u32 vers;
	__u32 proc;	/* rpc_procinfo.p_statidx */
	__u32 xid;	/* host byte order */
	__u16 task_pid; /* rpc_task.tk_pid, the id sunrpc's own traces print */
	__u16 timeouts; /* major timeouts this task has had */
	__u32 ntrans;	/* transmissions of the request (1 + retransmissions) */
	/* rpc_stats_latency, as /proc/self/mountstats sums them: queue time
	 * (start to first transmission), round trip, and start to end. */
	__u64 backlog_ns;
	__u64 rtt_ns;
	__u64 execute_ns;
	__u64 bytes_sent;
	__u64 bytes_recv;
	__u64 wait_ns[CKPT_RPCQ_MAX]; /* sleeps by queue, enum ckpt_rpc_queue */

	/* The server (rpc_xprt.addr). */
	__u16 family;
	__u16 port; /* host byte order */
	__u32 pad1;
	__u8 addr[16];
	char proc_name[CKPT_RPC_PROC_NAME];
};

enum ckpt_nfs_drop {
	CKPT_NFS_DROP_RINGBUF_FULL = 0,
	CKPT_NFS_DROP_TASK_TABLE_FULL = 1, /* no room to follow an RPC's queue waits */
	CKPT_NFS_DROP_MAX = 2,
};

#endif /* CKPTSCOPE_BPF_NFS_H */
