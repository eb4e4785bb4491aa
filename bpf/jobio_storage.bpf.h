/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the storage did inside a traced call on a checkpoint's file, apart
 * from the copy to or from the page cache: the call's struct call_desc sums
 * storage_bytes and throttle_ns here, dirtied_bytes in the mapping
 * programs' writeback_dirty_folio (bpf/jobio_mappings.bpf.h: one program per
 * dirtied folio); bpf/jobio.h struct ckpt_io_record says what each means.
 * All are tracepoints that run in
 * the calling thread, so both probe modes count them, and only while the
 * thread is inside a call on one file (CALL_FD): the flusher's writeback and
 * io_uring's workers run in threads of their own and are not the call's.
 *
 * Bios, not page-cache insertions, measure the storage: a bio is what the
 * device was asked for (the readahead a miss starts, an fsync's writeback,
 * an O_SYNC write's data), whatever the file system, and a page-cache hit
 * starts none. Only bios for the file's own block device (bi_bdev->bd_dev is
 * the super block's s_dev): a stacked device's clones (dm, md) go to other
 * devices and are not counted twice. A file system with no block device of
 * its own (NFS, tmpfs, btrfs' anonymous s_dev) counts none here; NFS's RPCs
 * say what its server did.
 */
#ifndef CKPTSCOPE_JOBIO_STORAGE_BPF_H
#define CKPTSCOPE_JOBIO_STORAGE_BPF_H

/* include/linux/blk_types.h: REQ_OP_READ 0, REQ_OP_WRITE 1 in the low
 * REQ_OP_BITS (8) of bi_opf; flushes, discards and zeroing move no data. */
#define CKPT_REQ_OP_MASK 0xffu
#define CKPT_REQ_OP_WRITE 1u

/*
 * The storage's own time: a bio counted in a call is remembered until it
 * completes, and each device's count of such bios in flight opens a busy
 * interval when it leaves 0 and reports it (CKPT_REC_STORAGE_BUSY) when it
 * returns to 0. Readahead the call started and writeback it waits on go on
 * after or beside the call, so the calls' own durations are not the
 * storage's. Completions run in interrupt context on any CPU: the counts are
 * atomic, and a race on the interval's start costs at most one bio's share.
 */
struct storage_bio {
	__u64 dev;
	__u64 pid_tgid;
	__u64 bytes; /* as queued: a split bio completes with its last part's size */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64); /* struct bio * */
	__type(value, struct storage_bio);
} storage_bios SEC(".maps");

struct storage_device {
	__s64 in_flight;
	__u64 busy_since;
	__u64 pid_tgid; /* the thread whose bio opened the interval */
	__u64 bytes;	/* completed in the interval */
	__u64 bios;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u64); /* dev_t */
	__type(value, struct storage_device);
} storage_devices SEC(".maps");

/* `done` bios of ours on device `dev`, of `bytes` in all, completed: the
 * device's interval ends when they were the last in flight. */
static __always_inline void storage_bios_done(__u64 dev, __u64 done, __u64 bytes)
{
	struct ckpt_storage_busy_record *rec;
	struct storage_device *d;
	__u64 now;

	d = bpf_map_lookup_elem(&storage_devices, &dev);
	if (!d || !done)
		return;
	__sync_fetch_and_add(&d->bytes, bytes);
	__sync_fetch_and_add(&d->bios, done);
	if (__sync_fetch_and_add(&d->in_flight, -(__s64)done) != (__s64)done)
		return;
	now = bpf_ktime_get_ns();
	rec = bpf_ringbuf_reserve(&jobio_events, sizeof(*rec), 0);
	if (!rec) {
		count_drop(CKPT_DROP_RINGBUF_FULL);
		return;
	}
	fill_header(&rec->hdr, CKPT_REC_STORAGE_BUSY, 0, d->pid_tgid, d->busy_since, now);
	rec->hdr.cpu_window_start_ns = d->busy_since;
	rec->hdr.cpu_ns = 0;
	rec->dev = dev;
	rec->bytes = d->bytes;
	rec->bios = (__u32)d->bios;
	rec->pad = 0;
	bpf_ringbuf_submit(rec, 0);
}

/* Forgets bio `key` if it is one of ours, adding its bytes as queued to
 * `*bytes`; its device then, else 0. */
static __always_inline __u64 storage_bio_forget(__u64 key, __u64 *bytes)
{
	struct storage_bio *b = bpf_map_lookup_elem(&storage_bios, &key);
	__u64 dev;

	if (!b)
		return 0;
	dev = b->dev;
	*bytes += b->bytes;
	bpf_map_delete_elem(&storage_bios, &key);
	return dev;
}

static __always_inline void storage_bio_queued(struct bio *bio, __u64 dev)
{
	struct storage_bio b = {.dev = dev,
				.pid_tgid = bpf_get_current_pid_tgid(),
				.bytes = BPF_CORE_READ(bio, bi_iter.bi_size)};
	struct storage_device fresh = {}, *d;
	__u64 key = (__u64)bio;

	d = bpf_map_lookup_elem(&storage_devices, &dev);
	if (!d) {
		bpf_map_update_elem(&storage_devices, &dev, &fresh, BPF_NOEXIST);
		d = bpf_map_lookup_elem(&storage_devices, &dev);
	}
	if (!d) {
		count_drop(CKPT_DROP_STORAGE_BIOS_FULL);
		return;
	}
	/* A bio still on record under this address completed unseen (its
	 * memory is reused): count it done, or the device never idles. */
	if (bpf_map_lookup_elem(&storage_bios, &key)) {
		__u64 stale = 0, stale_dev = storage_bio_forget(key, &stale);

		storage_bios_done(stale_dev, 1, stale);
	}
	if (bpf_map_update_elem(&storage_bios, &key, &b, BPF_NOEXIST)) {
		count_drop(CKPT_DROP_STORAGE_BIOS_FULL);
		return;
	}
	if (__sync_fetch_and_add(&d->in_flight, 1) == 0) {
		d->busy_since = bpf_ktime_get_ns();
		d->pid_tgid = b.pid_tgid;
		d->bytes = 0;
		d->bios = 0;
	}
}

/*
 * A request-based device (every disk: blk-mq) completes its bios through
 * the request (block/blk-mq.c blk_update_request), which clears their
 * BIO_TRACE_COMPLETION flag ("Completion has already been traced"), so
 * block_bio_complete never fires for them: the request's completion is
 * theirs. It fires before the bios are ended, the chain still whole; the
 * first nr_bytes of it are done (a request can complete in parts). A request
 * holds at most max_segments bios (BLK_MAX_SEGMENTS, 128, for most drivers;
 * a file system's writeback of scattered 4 KiB blocks fills it with them).
 */
#define CKPT_RQ_BIOS_MAX 256
/* Without bpf_loop (before 5.17) the walk is an unrolled loop, which the
 * verifier takes this far. */
#define CKPT_RQ_BIOS_UNROLLED 32

struct rq_walk {
	__u64 bio; /* the next bio of the chain, or 0 */
	__u64 done;
	__u64 nr_bytes;
	__u64 ours;
	__u64 bytes;
	__u64 dev;
};

/* One bio of a completing request: bpf_loop's callback, and the unrolled
 * loop's body. 1 stops the walk. */
static long rq_walk_one(__u64 index, void *ctx)
{
	struct rq_walk *w = ctx;
	struct bio *bio = (struct bio *)w->bio;
	__u32 size;
	__u64 dev;

	if (!bio)
		return 1;
	size = BPF_CORE_READ(bio, bi_iter.bi_size);
	if (w->done + size > w->nr_bytes)
		return 1;
	w->done += size;
	dev = storage_bio_forget(w->bio, &w->bytes);
	if (dev) {
		w->dev = dev; /* a request is for one device */
		w->ours++;
	}
	w->bio = (__u64)BPF_CORE_READ(bio, bi_next);
	return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(on_rq_complete, struct request *rq, int error, unsigned int nr_bytes)
{
	struct rq_walk w = {.bio = (__u64)BPF_CORE_READ(rq, bio), .nr_bytes = nr_bytes};

	if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_loop)) {
		bpf_loop(CKPT_RQ_BIOS_MAX, rq_walk_one, &w, 0);
	} else {
		for (int i = 0; i < CKPT_RQ_BIOS_UNROLLED; i++)
			if (rq_walk_one(i, &w))
				break;
	}
	storage_bios_done(w.dev, w.ours, w.bytes);
	return 0;
}

/* A bio-based device (device mapper, md) ends the bio itself (block/bio.c
 * bio_endio): block_bio_complete, once for every bio block_bio_queue traced. */
SEC("tp_btf/block_bio_complete")
int BPF_PROG(on_bio_complete, struct request_queue *q, struct bio *bio)
{
	__u64 bytes = 0, dev = storage_bio_forget((__u64)bio, &bytes);

	if (dev)
		storage_bios_done(dev, 1, bytes);
	return 0;
}

/* The running thread's call on one checkpoint file, or NULL. */
static __always_inline struct thread_state *in_file_call(void)
{
	struct thread_state *st = running_state(bpf_get_current_task_btf());

	return st && st->call == CALL_FD ? st : NULL;
}

/*
 * block:block_bio_queue, where a bio enters the block layer
 * (block/blk-core.c submit_bio_noacct_nocheck), once per bio: the
 * BIO_TRACE_COMPLETION flag keeps a split bio's remainder from being traced
 * again. Reads count in read calls, writes in any call (a write's O_SYNC
 * data, an fsync's or a close's writeback).
 */
SEC("tp_btf/block_bio_queue")
int BPF_PROG(on_bio_queue, struct bio *bio)
{
	struct thread_state *st = running_state(bpf_get_current_task_btf());
	__u32 op, dev;

	if (!st || (st->call != CALL_FD && st->call != CALL_AIO_SUBMIT))
		return 0;
	op = BPF_CORE_READ(bio, bi_opf) & CKPT_REQ_OP_MASK;
	if (op > CKPT_REQ_OP_WRITE)
		return 0;
	dev = BPF_CORE_READ(bio, bi_bdev, bd_dev);
	/* An io_submit's requests are direct I/O (their bytes are counted as
	 * they are reaped): only their time is the device's. */
	if (st->call == CALL_AIO_SUBMIT) {
		storage_bio_queued(bio, dev);
		return 0;
	}
	if (dev != (__u32)st->cur.dev || (op == 0 && st->cur.op != CKPT_OP_READ))
		return 0;
	/* Direct I/O: the call's own bytes, counted at its end. */
	if (!st->cur.direct)
		st->cur.storage_bytes += BPF_CORE_READ(bio, bi_iter.bi_size);
	storage_bio_queued(bio, dev);
	return 0;
}

/* 10^9 / CONFIG_HZ, from user space (userspace/probes/kernel_hz.h); the
 * program is not loaded where it is not known. */
const volatile __u64 jiffy_ns = 0;
/* The pause's index among balance_dirty_pages' arguments: 10 on 6.1 (the
 * limits one by one), 6 since they travel in a dirty_throttle_control; from
 * the tracepoint's BTF prototype (userspace/probes/kernel_features.h). */
const volatile __u32 dirty_pause_arg = 0;

/*
 * writeback:balance_dirty_pages (mm/page-writeback.c): the writer is about
 * to sleep `pause` jiffies because the storage has not yet taken enough of
 * the node's dirty pages; a pause of 0 or less is no sleep. That time of the
 * write call is the storage's. (tp_btf, not the classic tracepoint: that
 * needs tracefs mounted where libbpf looks.)
 */
SEC("tp_btf/balance_dirty_pages")
int on_dirty_throttle(__u64 *ctx)
{
	struct thread_state *st = in_file_call();
	long pause;

	if (!st || st->cur.op != CKPT_OP_WRITE)
		return 0;
	/* The index is a load-time constant, but the verifier refuses a ctx
	 * access at a computed offset: read the argument as memory. */
	if (bpf_probe_read_kernel(&pause, sizeof(pause), &ctx[dirty_pause_arg == 10 ? 10 : 6]))
		return 0;
	if (pause <= 0)
		return 0;
	st->cur.throttle_ns += (__u64)pause * jiffy_ns;
	return 0;
}

#endif /* CKPTSCOPE_JOBIO_STORAGE_BPF_H */
