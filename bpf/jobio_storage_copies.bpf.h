/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Copies the storage makes without the bytes crossing this node
 * (docs/probe-modes.md, "Copies the storage makes"): a reflink (ioctl
 * FICLONE/FICLONERANGE, vfs_clone_file_range) and an NFS 4.2 COPY or CLONE
 * (a copy_file_range the server served). Either is a copy record with its
 * own via; user space charges no host or network stage for its bytes.
 * Included by jobio.bpf.c after jobio_state.bpf.h.
 */
#pragma once

/* ioctl(2) codes (include/uapi/linux/fs.h): _IOW(0x94, 9, int) and
 * _IOW(0x94, 13, struct file_clone_range). */
#define CKPT_FICLONE 0x40049409U
#define CKPT_FICLONERANGE 0x4020940dU

static __always_inline bool is_clone_ioctl(long cmd)
{
	return (unsigned int)cmd == CKPT_FICLONE || (unsigned int)cmd == CKPT_FICLONERANGE;
}

/* struct file_clone_range (include/uapi/linux/fs.h), FICLONERANGE's argument. */
struct ckpt_file_clone_range {
	__s64 src_fd;
	__u64 src_offset;
	__u64 src_length;
	__u64 dest_offset;
};

/* The bytes a clone of `file` from `offset` covers: `length`, or up to the
 * end of the file when it is 0 (what FICLONE and a zero src_length ask). */
static __always_inline __u64 clone_length(struct file *file, __u64 offset, __u64 length)
{
	__s64 size;

	if (length || !file)
		return length;
	size = BPF_CORE_READ(file, f_inode, i_size);
	return size > 0 && (__u64)size > offset ? (__u64)size - offset : 0;
}

/* The thread's copy in progress was served by the NFS server (status 0):
 * its record says so. A COPY the server refused (-EOPNOTSUPP, -EXDEV) is
 * followed by the client's own copy through splice, which stays a copy. */
static __always_inline int note_server_copy(int status)
{
	struct thread_state *st;

	if (status != 0)
		return 0;
	st = running_state(bpf_get_current_task_btf());
	if (!st || st->call != CALL_COPY)
		return 0;
	if (st->cur.via == CKPT_VIA_COPY_FILE_RANGE || st->cur.via == CKPT_VIA_REFLINK)
		st->cur.via = CKPT_VIA_SERVER_COPY;
	return 0;
}

/* fs/nfs/nfs4trace.h (nfsv4 module): nfs4_copy(src_inode, dst_inode, args,
 * res, nss, error) from _nfs42_proc_copy, after the COPY (and, for an
 * asynchronous one, its CB_OFFLOAD); nfs4_clone(src_inode, dst_inode, args,
 * error) from _nfs42_proc_clone. The arguments by number: their structs
 * are the module's. */
SEC("tp_btf/nfs4_copy")
int BPF_PROG(on_nfs4_copy, void *src_inode, void *dst_inode, void *args, void *res, void *nss,
	     int error)
{
	return note_server_copy(error);
}

SEC("tp_btf/nfs4_clone")
int BPF_PROG(on_nfs4_clone, void *src_inode, void *dst_inode, void *args, int error)
{
	return note_server_copy(error);
}
