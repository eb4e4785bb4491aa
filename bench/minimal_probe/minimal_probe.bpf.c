/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The floor issue 18 set its file-layer target against, rebuilt so that every
 * benchmark run measures it beside the real probes: one fexit program on
 * vfs_write and one on vfs_read, each a verdict lookup and a per-inode byte
 * counter, for every process. Not part of ckptscope: bench/vm/ runs it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "minimal_probe.h"

/* --empty: the programs return at once (what the trampoline alone costs);
 * --task-storage / --clock: they only look up the task's storage, or read the
 * clock (what one such helper costs). */
const volatile __u32 work = MINIMAL_PROBE_COUNT;

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} task_values SEC(".maps");

__u64 sink = 0;

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct minimal_probe_key);
	__type(value, __u8);
} verdicts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct minimal_probe_key);
	__type(value, __u64);
} bytes_by_inode SEC(".maps");

static __always_inline int count_bytes(struct file *file, long ret)
{
	struct minimal_probe_key key;
	struct inode *inode;
	__u64 *bytes;
	__u8 *verdict;

	if (work == MINIMAL_PROBE_EMPTY)
		return 0;
	if (work == MINIMAL_PROBE_TASK_STORAGE) {
		__u64 *v = bpf_task_storage_get(&task_values, bpf_get_current_task_btf(), 0,
						BPF_LOCAL_STORAGE_GET_F_CREATE);

		if (v)
			*v += 1;
		return 0;
	}
	if (work == MINIMAL_PROBE_CLOCK) {
		sink += bpf_ktime_get_ns();
		return 0;
	}
	if (ret <= 0 || !file)
		return 0;
	inode = file->f_inode;
	if (!inode)
		return 0;
	key.dev = inode->i_sb->s_dev;
	key.ino = inode->i_ino;
	verdict = bpf_map_lookup_elem(&verdicts, &key);
	if (verdict && *verdict == MINIMAL_PROBE_OTHER)
		return 0;
	bytes = bpf_map_lookup_elem(&bytes_by_inode, &key);
	if (bytes) {
		__sync_fetch_and_add(bytes, ret);
		return 0;
	}
	bpf_map_update_elem(&bytes_by_inode, &key, &(__u64){(__u64)ret}, BPF_NOEXIST);
	return 0;
}

SEC("fexit/vfs_write")
int BPF_PROG(minimal_write, struct file *file, const char *buf, size_t count, loff_t *pos, long ret)
{
	return count_bytes(file, ret);
}

SEC("fexit/vfs_read")
int BPF_PROG(minimal_read, struct file *file, char *buf, size_t count, loff_t *pos, long ret)
{
	return count_bytes(file, ret);
}

/* --fentry: an empty fentry program beside each fexit (what a second program
 * on the same trampoline costs). Loaded only with the flag. */
SEC("fentry/vfs_write")
int BPF_PROG(minimal_write_entry)
{
	return 0;
}

SEC("fentry/vfs_read")
int BPF_PROG(minimal_read_entry)
{
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
