// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The NFS client and its RPC transport (sunrpc), from the kernel's own
 * tracepoints through tp_btf (the types live in the nfs and sunrpc modules'
 * BTF, so this object loads only where those modules are present).
 *
 * - nfs_initiate_{read,write,commit} and nfs_{readpage,writeback,commit}_done
 *   give each page-I/O RPC's file (dev, ino), byte range and result. They run
 *   in writeback and rpciod threads, not in the job, so user space ties them
 *   to the job's files by (dev, ino), never by pid.
 * - rpc_stats_latency gives each finished RPC's queue time, round trip and
 *   execute time, the figures /proc/self/mountstats sums (net/sunrpc/stats.c
 *   rpc_count_iostats_metrics), plus bytes and transmissions.
 * - rpc_task_sleep/rpc_task_wakeup split the wait by transport queue
 *   (backlog = no slot, sending = transport busy, pending = awaiting reply).
 * - rpc_timeout_status fires at a major timeout, where the kernel prints
 *   "server ... not responding" (net/sunrpc/clnt.c rpc_check_timeout).
 *
 * Only NFS RPCs (program 100003) are followed: rpcbind, mountd and lockd are
 * not checkpoint traffic.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "core_fixes.bpf.h"
#include "nfs.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define CKPT_NFS_PROGRAM 100003
#define CKPT_AF_INET 2
#define CKPT_AF_INET6 10

const volatile __u64 wakeup_bytes = 256 << 10;

/* Keeps the record type in the object's BTF (see jobio.bpf.c). */
const struct ckpt_nfs_record *unused_nfs_record __attribute__((unused));

/*
 * The module types we read. The host's vmlinux.h has no sunrpc/nfs types, so
 * they are declared here with only the fields used; CO-RE relocates every
 * access against the running kernel's module BTF at load (libbpf drops the
 * ___ckpt suffix when matching names).
 */
struct rpc_procinfo___ckpt {
	__u32 p_statidx;
	const char *p_name;
} __attribute__((preserve_access_index));

struct rpc_message___ckpt {
	const struct rpc_procinfo___ckpt *rpc_proc;
} __attribute__((preserve_access_index));

struct rpc_clnt___ckpt {
	unsigned int cl_clid;
	__u32 cl_prog;
	__u32 cl_vers;
} __attribute__((preserve_access_index));

struct rpc_wait_queue___ckpt {
	const char *name;
} __attribute__((preserve_access_index));

/* Read as bytes; only its address and the uapi sockaddr layouts matter. */
struct __kernel_sockaddr_storage___ckpt {
	char data[128];
};

struct rpc_xprt___ckpt {
	struct __kernel_sockaddr_storage___ckpt addr;
	struct rpc_wait_queue___ckpt sending;
	struct rpc_wait_queue___ckpt pending;
	struct rpc_wait_queue___ckpt backlog;
} __attribute__((preserve_access_index));

struct rpc_rqst___ckpt {
	__be32 rq_xid;
	size_t rq_xmit_bytes_sent;
	size_t rq_reply_bytes_recvd;
	int rq_ntrans;
} __attribute__((preserve_access_index));

struct rpc_task___ckpt {
	int tk_status;
	struct rpc_message___ckpt tk_msg;
	struct rpc_clnt___ckpt *tk_client;
	struct rpc_xprt___ckpt *tk_xprt;
	struct rpc_rqst___ckpt *tk_rqstp;
	ktime_t tk_start;
	unsigned short tk_timeouts;
	unsigned short tk_pid;
} __attribute__((preserve_access_index));

struct nfs_pgio_args___ckpt {
	__u64 offset;
	__u32 count;
} __attribute__((preserve_access_index));

struct nfs_pgio_res___ckpt {
	__u64 count;
} __attribute__((preserve_access_index));

struct nfs_pgio_header___ckpt {
	struct inode *inode;
	struct rpc_task___ckpt task;
	struct nfs_pgio_args___ckpt args;
	struct nfs_pgio_res___ckpt res;
} __attribute__((preserve_access_index));

struct nfs_commitargs___ckpt {
	__u64 offset;
	__u32 count;
} __attribute__((preserve_access_index));

struct nfs_commit_data___ckpt {
	struct rpc_task___ckpt task;
	struct inode *inode;
	struct nfs_commitargs___ckpt args;
} __attribute__((preserve_access_index));

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} nfs_events SEC(".maps");

/* An RPC's queue waits so far, by task, until rpc_stats_latency reports it. */
struct rpc_wait_state {
	__u64 sleep_start_ns; /* 0 when not asleep */
	__u32 queue;	      /* enum ckpt_rpc_queue of the current sleep */
	__u32 pad;
	__u64 wait_ns[CKPT_RPCQ_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, struct rpc_wait_state);
} rpc_waits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CKPT_NFS_DROP_MAX);
	__type(key, __u32);
	__type(value, __u64);
} nfs_drops SEC(".maps");

static __always_inline void count_drop(__u32 cause)
{
	__u64 *count = bpf_map_lookup_elem(&nfs_drops, &cause);

	if (count)
		*count += 1;
}

static __always_inline struct ckpt_nfs_record *reserve(__u32 event)
{
	struct ckpt_nfs_record *rec = bpf_ringbuf_reserve(&nfs_events, sizeof(*rec), 0);

	if (!rec) {
		count_drop(CKPT_NFS_DROP_RINGBUF_FULL);
		return NULL;
	}
	__builtin_memset(rec, 0, sizeof(*rec));
	rec->event = event;
	rec->time_ns = bpf_ktime_get_ns();
	return rec;
}

static __always_inline void submit(struct ckpt_nfs_record *rec)
{
	bpf_ringbuf_submit(rec, ckpt_wakeup_flags(&nfs_events, wakeup_bytes));
}

static __always_inline bool is_nfs_task(const struct rpc_task___ckpt *task)
{
	return BPF_CORE_READ(task, tk_client, cl_prog) == CKPT_NFS_PROGRAM;
}

static __always_inline void fill_file(struct ckpt_nfs_record *rec, const struct inode *inode)
{
	rec->dev = BPF_CORE_READ(inode, i_sb, s_dev);
	rec->ino = BPF_CORE_READ(inode, i_ino);
}

/* The server's address: sockaddr_in / sockaddr_in6 (uapi layouts). */
static __always_inline void fill_server(struct ckpt_nfs_record *rec,
					const struct rpc_xprt___ckpt *xprt)
{
	__u8 sa[28] = {};

	if (!xprt || bpf_probe_read_kernel(sa, sizeof(sa), &xprt->addr))
		return;
	rec->family = sa[0] | (sa[1] << 8);
	rec->port = (sa[2] << 8) | sa[3];
	if (rec->family == CKPT_AF_INET)
		__builtin_memcpy(rec->addr, sa + 4, 4);
	else if (rec->family == CKPT_AF_INET6)
		__builtin_memcpy(rec->addr, sa + 8, 16);
}

static __always_inline void fill_rpc(struct ckpt_nfs_record *rec,
				     const struct rpc_task___ckpt *task)
{
	const struct rpc_procinfo___ckpt *proc = BPF_CORE_READ(task, tk_msg.rpc_proc);
	const char *name;

	rec->task_id = (__u64)task;
	rec->status = BPF_CORE_READ(task, tk_status);
	rec->client_id = BPF_CORE_READ(task, tk_client, cl_clid);
	rec->prog = BPF_CORE_READ(task, tk_client, cl_prog);
	rec->vers = BPF_CORE_READ(task, tk_client, cl_vers);
	rec->task_pid = BPF_CORE_READ(task, tk_pid);
	rec->timeouts = BPF_CORE_READ(task, tk_timeouts);
	if (proc) {
		rec->proc = BPF_CORE_READ(proc, p_statidx);
		name = BPF_CORE_READ(proc, p_name);
		if (name)
			bpf_probe_read_kernel_str(rec->proc_name, sizeof(rec->proc_name), name);
	}
	fill_server(rec, BPF_CORE_READ(task, tk_xprt));
}

/* ---- NFS page I/O ---- */

static __always_inline int pgio_start(const struct nfs_pgio_header___ckpt *hdr, __u32 kind)
{
	struct ckpt_nfs_record *rec;

	/* Recent verifiers mark tracepoint arguments maybe-NULL; pointer
	 * arithmetic (&hdr->task) needs the check first. */
	if (!hdr)
		return 0;
	rec = reserve(CKPT_NFS_IO_START);
	if (!rec)
		return 0;
	rec->io_kind = kind;
	rec->task_id = (__u64)&hdr->task;
	fill_file(rec, BPF_CORE_READ(hdr, inode));
	rec->offset = BPF_CORE_READ(hdr, args.offset);
	rec->count = BPF_CORE_READ(hdr, args.count);
	submit(rec);
	return 0;
}

static __always_inline int pgio_done(const struct rpc_task___ckpt *task,
				     const struct nfs_pgio_header___ckpt *hdr, __u32 kind)
{
	struct ckpt_nfs_record *rec;

	if (!task || !hdr)
		return 0;
	rec = reserve(CKPT_NFS_IO_DONE);
	if (!rec)
		return 0;
	rec->io_kind = kind;
	rec->task_id = (__u64)task;
	rec->status = BPF_CORE_READ(task, tk_status);
	fill_file(rec, BPF_CORE_READ(hdr, inode));
	rec->offset = BPF_CORE_READ(hdr, args.offset);
	rec->count = BPF_CORE_READ(hdr, args.count);
	rec->result_count = BPF_CORE_READ(hdr, res.count);
	submit(rec);
	return 0;
}

SEC("tp_btf/nfs_initiate_write")
int BPF_PROG(nfs_initiate_write, const struct nfs_pgio_header___ckpt *hdr)
{
	return pgio_start(hdr, CKPT_NFS_WRITE);
}

SEC("tp_btf/nfs_initiate_read")
int BPF_PROG(nfs_initiate_read, const struct nfs_pgio_header___ckpt *hdr)
{
	return pgio_start(hdr, CKPT_NFS_READ);
}

SEC("tp_btf/nfs_writeback_done")
int BPF_PROG(nfs_writeback_done, const struct rpc_task___ckpt *task,
	     const struct nfs_pgio_header___ckpt *hdr)
{
	return pgio_done(task, hdr, CKPT_NFS_WRITE);
}

SEC("tp_btf/nfs_readpage_done")
int BPF_PROG(nfs_readpage_done, const struct rpc_task___ckpt *task,
	     const struct nfs_pgio_header___ckpt *hdr)
{
	return pgio_done(task, hdr, CKPT_NFS_READ);
}

SEC("tp_btf/nfs_initiate_commit")
int BPF_PROG(nfs_initiate_commit, const struct nfs_commit_data___ckpt *data)
{
	struct ckpt_nfs_record *rec;

	if (!data)
		return 0;
	rec = reserve(CKPT_NFS_IO_START);
	if (!rec)
		return 0;
	rec->io_kind = CKPT_NFS_COMMIT;
	rec->task_id = (__u64)&data->task;
	fill_file(rec, BPF_CORE_READ(data, inode));
	rec->offset = BPF_CORE_READ(data, args.offset);
	rec->count = BPF_CORE_READ(data, args.count);
	submit(rec);
	return 0;
}

SEC("tp_btf/nfs_commit_done")
int BPF_PROG(nfs_commit_done, const struct rpc_task___ckpt *task,
	     const struct nfs_commit_data___ckpt *data)
{
	struct ckpt_nfs_record *rec;

	if (!task || !data)
		return 0;
	rec = reserve(CKPT_NFS_IO_DONE);
	if (!rec)
		return 0;
	rec->io_kind = CKPT_NFS_COMMIT;
	rec->task_id = (__u64)task;
	rec->status = BPF_CORE_READ(task, tk_status);
	fill_file(rec, BPF_CORE_READ(data, inode));
	rec->offset = BPF_CORE_READ(data, args.offset);
	rec->count = BPF_CORE_READ(data, args.count);
	submit(rec);
	return 0;
}

/* ---- RPC queue waits ---- */

static __always_inline __u32 classify_queue(const struct rpc_task___ckpt *task,
					    const struct rpc_wait_queue___ckpt *q)
{
	const struct rpc_xprt___ckpt *xprt = BPF_CORE_READ(task, tk_xprt);

	if (!xprt)
		return CKPT_RPCQ_OTHER;
	if (q == &xprt->backlog)
		return CKPT_RPCQ_BACKLOG;
	if (q == &xprt->sending)
		return CKPT_RPCQ_SENDING;
	if (q == &xprt->pending)
		return CKPT_RPCQ_PENDING;
	return CKPT_RPCQ_OTHER;
}

SEC("tp_btf/rpc_task_sleep")
int BPF_PROG(rpc_task_sleep, const struct rpc_task___ckpt *task,
	     const struct rpc_wait_queue___ckpt *q)
{
	__u64 key = (__u64)task;
	struct rpc_wait_state *st;

	if (!task || !q || !is_nfs_task(task))
		return 0;
	st = bpf_map_lookup_elem(&rpc_waits, &key);
	if (!st) {
		struct rpc_wait_state fresh = {};

		bpf_map_update_elem(&rpc_waits, &key, &fresh, BPF_NOEXIST);
		st = bpf_map_lookup_elem(&rpc_waits, &key);
		if (!st) {
			count_drop(CKPT_NFS_DROP_TASK_TABLE_FULL);
			return 0;
		}
	}
	st->sleep_start_ns = bpf_ktime_get_ns();
	st->queue = classify_queue(task, q);
	return 0;
}

SEC("tp_btf/rpc_task_wakeup")
int BPF_PROG(rpc_task_wakeup, const struct rpc_task___ckpt *task,
	     const struct rpc_wait_queue___ckpt *q)
{
	__u64 key = (__u64)task;
	struct rpc_wait_state *st = bpf_map_lookup_elem(&rpc_waits, &key);
	__u32 queue;

	if (!st || !st->sleep_start_ns)
		return 0;
	queue = st->queue;
	if (queue < CKPT_RPCQ_MAX)
		st->wait_ns[queue] += bpf_ktime_get_ns() - st->sleep_start_ns;
	st->sleep_start_ns = 0;
	return 0;
}

/* ---- RPC completion, timeouts ---- */

SEC("tp_btf/rpc_stats_latency")
int BPF_PROG(rpc_stats_latency, const struct rpc_task___ckpt *task, ktime_t backlog, ktime_t rtt,
	     ktime_t execute)
{
	__u64 key = (__u64)task;
	const struct rpc_rqst___ckpt *req;
	struct rpc_wait_state *st;
	struct ckpt_nfs_record *rec;

	if (!task || !is_nfs_task(task))
		return 0;
	rec = reserve(CKPT_RPC_DONE);
	if (!rec) {
		bpf_map_delete_elem(&rpc_waits, &key);
		return 0;
	}
	fill_rpc(rec, task);
	rec->backlog_ns = backlog > 0 ? backlog : 0;
	rec->rtt_ns = rtt > 0 ? rtt : 0;
	rec->execute_ns = execute > 0 ? execute : 0;
	req = BPF_CORE_READ(task, tk_rqstp);
	if (req) {
		rec->xid = bpf_ntohl(BPF_CORE_READ(req, rq_xid));
		rec->ntrans = BPF_CORE_READ(req, rq_ntrans);
		rec->bytes_sent = BPF_CORE_READ(req, rq_xmit_bytes_sent);
		rec->bytes_recv = BPF_CORE_READ(req, rq_reply_bytes_recvd);
	}
	st = bpf_map_lookup_elem(&rpc_waits, &key);
	if (st) {
		for (int i = 0; i < CKPT_RPCQ_MAX; i++)
			rec->wait_ns[i] = st->wait_ns[i];
		bpf_map_delete_elem(&rpc_waits, &key);
	}
	submit(rec);
	return 0;
}

SEC("tp_btf/rpc_timeout_status")
int BPF_PROG(rpc_timeout_status, const struct rpc_task___ckpt *task)
{
	const struct rpc_rqst___ckpt *req;
	struct ckpt_nfs_record *rec;
	__s64 start;

	if (!task || !is_nfs_task(task))
		return 0;
	rec = reserve(CKPT_RPC_TIMEOUT);
	if (!rec)
		return 0;
	fill_rpc(rec, task);
	rec->timeouts += 1; /* the tracepoint fires before tk_timeouts++ */
	req = BPF_CORE_READ(task, tk_rqstp);
	if (req) {
		rec->xid = bpf_ntohl(BPF_CORE_READ(req, rq_xid));
		rec->ntrans = BPF_CORE_READ(req, rq_ntrans);
	}
	start = BPF_CORE_READ(task, tk_start);
	if (start > 0 && rec->time_ns > (__u64)start)
		rec->execute_ns = rec->time_ns - start;
	submit(rec);
	return 0;
}

SEC("tp_btf/rpc_task_end")
int BPF_PROG(rpc_task_end, const struct rpc_task___ckpt *task, const void *action)
{
	__u64 key = (__u64)task;
	struct ckpt_nfs_record *rec;
	__s64 start;

	/* A task with a request gets rpc_stats_latency right after this; one
	 * that never got a request slot is reported here, or not at all. */
	if (!task || BPF_CORE_READ(task, tk_rqstp))
		return 0;
	bpf_map_delete_elem(&rpc_waits, &key);
	if (!is_nfs_task(task) || BPF_CORE_READ(task, tk_status) >= 0)
		return 0;
	rec = reserve(CKPT_RPC_ABANDONED);
	if (!rec)
		return 0;
	fill_rpc(rec, task);
	start = BPF_CORE_READ(task, tk_start);
	if (start > 0 && rec->time_ns > (__u64)start)
		rec->execute_ns = rec->time_ns - start;
	submit(rec);
	return 0;
}
