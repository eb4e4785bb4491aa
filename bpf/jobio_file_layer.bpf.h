/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * CKPT_MODE_FILE_LAYER: fentry/fexit on the VFS functions every path to a
 * file funnels through, so a process that does no file I/O never enters a
 * program, and a call on a file user space ruled out costs the thread-state
 * and verdict lookups. Included by jobio.bpf.c; user space loads these only in
 * that mode (userspace/probes/jobio_programs.cpp), each only where the kernel
 * has the function (6.1 has filp_close, 6.7+ filp_flush; the rest since 5.x).
 *
 * Calls nest (a close may flush through fsync, copy_file_range falls back
 * to do_splice_direct): `depth` keeps only the outermost. User space
 * attaches every fexit before any fentry, so our own attach never shows an
 * exit without its entry.
 *
 * A missed exit. A call's fexit programs do not run when the function's
 * trampoline is replaced while the call sleeps inside it: any tool that
 * attaches or detaches a program on the same function (bpftrace, a second
 * ckptscope, a security agent) makes the kernel retire the old image, and
 * kernel/bpf/trampoline.c bpf_tramp_image_put() first patches that image
 * to jump past its fexit programs ("The progs will be freed even if the
 * original function is still executing or sleeping"; commit e21aa341785c,
 * "bpf: Fix fexit trampoline.", 5.13). A read waiting on NFS when that
 * happens returns unseen. Counting depth alone, the thread's state then
 * says "inside a call" forever and every later call looks nested: the
 * trace silently stopped at that moment (tests/vm/scenarios/
 * trampoline-update.sh). So each call is known by its trampoline frame:
 * fentry and fexit of one call get the same `ctx`, the arguments the
 * trampoline saved on the thread's kernel stack, and a call nested in it
 * runs deeper, at a lower address (the stack grows down on every
 * architecture with BPF trampolines). An entry that is not deeper than the
 * call in progress, not in the same system call, or that comes while a call
 * that never nests a hooked function is in progress (all but close and the
 * copies), means that call's exit was missed: it is counted
 * (CKPT_DROP_EXIT_MISSED) and dropped, and the new call is traced.
 *
 * The read/write family reaches vfs_read/vfs_write/vfs_readv/vfs_writev;
 * io_uring and splice do not (they call ->read_iter/->write_iter
 * directly, or vfs_iter_*), so nothing is counted twice. Kernel-internal
 * readers (kernel_read, nfsd's vfs_iter_*) are not hooked at all.
 */
#ifndef CKPTSCOPE_JOBIO_FILE_LAYER_BPF_H
#define CKPTSCOPE_JOBIO_FILE_LAYER_BPF_H

#include "jobio_state.bpf.h"

/* ERR_PTR values (include/linux/err.h): a getname() that failed. */
#define CKPT_MAX_ERRNO 4095
/* AT_REMOVEDIR: what unlinkat(2) passes for rmdir. */
#define CKPT_AT_REMOVEDIR 0x200

/* Where a call's trampoline saved its arguments (the `ctx` of its fentry
 * and fexit programs): the same for both, deeper for a call nested in it.
 * An address, compared and stored, never dereferenced (pointer comparison
 * needs CAP_PERFMON, which loading these programs needs anyway). */
static __always_inline __u64 fl_frame(void *ctx)
{
	return (__u64)ctx;
}

/* The system call the thread is in (a close's flush and the fsync nested
 * in it share one; a later call is another). */
static __always_inline long fl_syscall_nr(struct task_struct *task)
{
	return ckpt_syscall_nr((struct pt_regs *)bpf_task_pt_regs(task));
}

/* The thread's call in progress will never see its exit (see "A missed
 * exit" above): what it moved is not known, so it is counted lost, and the
 * thread is put back outside any call. */
static __always_inline void fl_abandon_call(struct thread_state *st, __u64 now)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	if (st->call == CALL_PATH)
		bpf_map_delete_elem(&path_calls, &tid);
	if (st->call != CALL_NONE)
		count_drop(CKPT_DROP_EXIT_MISSED);
	if (st->in_io) {
		/* cpu_pause stopped the CPU clock at its entry; the thread runs
		 * now, and its window goes on (it is reported with its next
		 * call). */
		st->in_io = 0;
		st->oncpu_since_ns = now;
	}
	st->call = CALL_NONE;
	st->depth = 0;
}

/* The outermost file-layer call of a traced thread begins: its state, or
 * NULL (not traced, or nested in a call already being traced). `nests`:
 * hooked calls can run inside this one (close, the copies). */
static __always_inline struct thread_state *fl_enter(struct task_struct *task, void *ctx,
						     bool nests)
{
	struct thread_state *st = traced_thread_state(task, 0);
	__u64 frame = fl_frame(ctx);

	if (!st)
		return NULL;
	if (st->depth > 0) {
		/* Deeper, in the same system call, inside a call that nests:
		 * nested. Deeper alone is not enough: a read after a close
		 * whose exit was missed may run deeper than that close did. */
		if (st->outer_nests && frame < st->outer_frame &&
		    fl_syscall_nr(task) == st->syscall_nr) {
			st->depth++;
			return NULL;
		}
		st->busy = 1;
		fl_abandon_call(st, bpf_ktime_get_ns());
		st->busy = 0;
	}
	st->depth = 1;
	st->outer_frame = frame;
	st->outer_nests = nests;
	if (nests)
		st->syscall_nr = fl_syscall_nr(task);
	st->call = CALL_NONE;
	return st;
}

/* The matching exit: the state when this was the outermost call. */
static __always_inline struct thread_state *fl_exit(struct task_struct *task, void *ctx)
{
	struct thread_state *st = running_state(task);
	__u64 frame = fl_frame(ctx);

	if (!st || st->depth == 0)
		return NULL;
	if (frame != st->outer_frame) {
		/* A nested call's exit; or, above the call in progress, the
		 * exit of one whose entry was not seen. */
		if (frame < st->outer_frame && st->depth > 1)
			st->depth--;
		return NULL;
	}
	st->depth = 0;
	return st;
}

/* dev, ino and type of `file` into st->cur. */
static __always_inline bool fl_identify(struct thread_state *st, struct file *file)
{
	struct inode *inode;

	if (!file)
		return false;
	inode = file->f_inode;
	if (!inode)
		return false;
	describe_inode(&st->cur, inode);
	st->cur.direct = ckpt_file_is_direct(file);
	return true;
}

static __always_inline int fl_file_enter(void *ctx, struct file *file, __u32 op, __u64 requested)
{
	struct thread_state *st = fl_enter(bpf_get_current_task_btf(), ctx, op == CKPT_OP_CLOSE);

	if (!st || !fl_identify(st, file))
		return 0;
	st->busy = 1;
	begin_file_call(st, 0, op, CKPT_VIA_SYSCALL, -1, requested);
	st->busy = 0;
	return 0;
}

static __always_inline int fl_call_exit(void *ctx, long ret)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct thread_state *st = fl_exit(task, ctx);

	if (!st)
		return 0;
	st->busy = 1;
	switch (st->call) {
	case CALL_FD:
	case CALL_OTHER:
		end_file_call(st, ret);
		break;
	case CALL_COPY:
		end_copy(st, ret);
		break;
	case CALL_OTHER_COPY:
		end_other_copy(st, ret);
		break;
	case CALL_PATH:
		end_path_call(task, st, ret);
		break;
	default:
		break;
	}
	st->busy = 0;
	return 0;
}

/* ---- data and flush calls ------------------------------------------------------ */

SEC("fentry/vfs_read")
int BPF_PROG(fl_read_enter, struct file *file, char *buf, size_t count)
{
	return fl_file_enter(ctx, file, CKPT_OP_READ, count);
}

SEC("fexit/vfs_read")
int BPF_PROG(fl_read_exit, struct file *file, char *buf, size_t count, loff_t *pos, long ret)
{
	return fl_call_exit(ctx, ret);
}

SEC("fentry/vfs_write")
int BPF_PROG(fl_write_enter, struct file *file, const char *buf, size_t count)
{
	return fl_file_enter(ctx, file, CKPT_OP_WRITE, count);
}

SEC("fexit/vfs_write")
int BPF_PROG(fl_write_exit, struct file *file, const char *buf, size_t count, loff_t *pos, long ret)
{
	return fl_call_exit(ctx, ret);
}

SEC("fentry/vfs_readv")
int BPF_PROG(fl_readv_enter, struct file *file)
{
	return fl_file_enter(ctx, file, CKPT_OP_READ, 0);
}

SEC("fexit/vfs_readv")
int BPF_PROG(fl_readv_exit, struct file *file, const struct iovec *vec, unsigned long vlen,
	     loff_t *pos, int flags, long ret)
{
	return fl_call_exit(ctx, ret);
}

SEC("fentry/vfs_writev")
int BPF_PROG(fl_writev_enter, struct file *file)
{
	return fl_file_enter(ctx, file, CKPT_OP_WRITE, 0);
}

SEC("fexit/vfs_writev")
int BPF_PROG(fl_writev_exit, struct file *file, const struct iovec *vec, unsigned long vlen,
	     loff_t *pos, int flags, long ret)
{
	return fl_call_exit(ctx, ret);
}

SEC("fentry/vfs_fsync_range")
int BPF_PROG(fl_fsync_enter, struct file *file)
{
	return fl_file_enter(ctx, file, CKPT_OP_FSYNC, 0);
}

SEC("fexit/vfs_fsync_range")
int BPF_PROG(fl_fsync_exit, struct file *file, loff_t start, loff_t end, int datasync, int ret)
{
	return fl_call_exit(ctx, ret);
}

/* close(2) reaches filp_flush where it exists (6.12's BTF has it, split out
 * of filp_close), filp_close before (6.1): user space loads one pair. */
SEC("fentry/filp_flush")
int BPF_PROG(fl_flush_enter, struct file *file)
{
	return fl_file_enter(ctx, file, CKPT_OP_CLOSE, 0);
}

SEC("fexit/filp_flush")
int BPF_PROG(fl_flush_exit, struct file *file, void *id, int ret)
{
	return fl_call_exit(ctx, ret);
}

SEC("fentry/filp_close")
int BPF_PROG(fl_close_enter, struct file *file)
{
	return fl_file_enter(ctx, file, CKPT_OP_CLOSE, 0);
}

SEC("fexit/filp_close")
int BPF_PROG(fl_close_exit, struct file *file, void *id, int ret)
{
	return fl_call_exit(ctx, ret);
}

SEC("fentry/do_sys_ftruncate")
int BPF_PROG(fl_ftruncate_enter, unsigned int fd, loff_t length)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct thread_state *st = fl_enter(task, ctx, false);

	if (!st || !resolve_fd(task, st, (int)fd))
		return 0;
	st->busy = 1;
	begin_file_call(st, bpf_ktime_get_ns(), CKPT_OP_FTRUNCATE, CKPT_VIA_SYSCALL, (int)fd,
			length);
	st->busy = 0;
	return 0;
}

SEC("fexit/do_sys_ftruncate")
int BPF_PROG(fl_ftruncate_exit, unsigned int fd, loff_t length, int small, long ret)
{
	return fl_call_exit(ctx, ret);
}

/* ---- copies between files ----------------------------------------------------- */

static __always_inline int fl_begin_copy(void *ctx, struct file *in, struct file *out, __u32 via,
					 __u64 len)
{
	struct thread_state *st = fl_enter(bpf_get_current_task_btf(), ctx, true);

	if (!st || !fl_identify(st, out))
		return 0;
	st->dev2 = st->cur.dev;
	st->ino2 = st->cur.ino;
	st->file_type2 = st->cur.file_type;
	st->fd2 = -1;
	if (!fl_identify(st, in))
		return 0;
	st->cur.fd = -1;
	st->busy = 1;
	begin_copy(st, bpf_ktime_get_ns(), via, len);
	st->busy = 0;
	return 0;
}

SEC("fentry/vfs_copy_file_range")
int BPF_PROG(fl_copy_enter, struct file *file_in, loff_t pos_in, struct file *file_out,
	     loff_t pos_out, size_t len)
{
	return fl_begin_copy(ctx, file_in, file_out, CKPT_VIA_COPY_FILE_RANGE, len);
}

SEC("fexit/vfs_copy_file_range")
int BPF_PROG(fl_copy_exit, struct file *file_in, loff_t pos_in, struct file *file_out,
	     loff_t pos_out, size_t len, unsigned int flags, long ret)
{
	return fl_call_exit(ctx, ret);
}

/* A reflink (ioctl FICLONE/FICLONERANGE; overlayfs' and nfsd's clones run
 * in threads no job owns): the bytes it is asked to clone, or to the end
 * of the source. bpf/jobio_storage_copies.bpf.h. */
SEC("fentry/vfs_clone_file_range")
int BPF_PROG(fl_clone_enter, struct file *file_in, loff_t pos_in, struct file *file_out,
	     loff_t pos_out, loff_t len)
{
	return fl_begin_copy(ctx, file_in, file_out, CKPT_VIA_REFLINK,
			     clone_length(file_in, pos_in, len));
}

SEC("fexit/vfs_clone_file_range")
int BPF_PROG(fl_clone_exit, struct file *file_in, loff_t pos_in, struct file *file_out,
	     loff_t pos_out, loff_t len, unsigned int remap_flags, loff_t ret)
{
	return fl_call_exit(ctx, ret);
}

/* sendfile(2), and splice between two files. */
SEC("fentry/do_splice_direct")
int BPF_PROG(fl_splice_enter, struct file *in, loff_t *ppos, struct file *out, loff_t *opos,
	     size_t len)
{
	return fl_begin_copy(ctx, in, out, CKPT_VIA_SENDFILE, len);
}

SEC("fexit/do_splice_direct")
int BPF_PROG(fl_splice_exit, struct file *in, loff_t *ppos, struct file *out, loff_t *opos,
	     size_t len, unsigned int flags, long ret)
{
	return fl_call_exit(ctx, ret);
}

/* ---- calls that name a path ---------------------------------------------------- */

static __always_inline const char *filename_of(struct filename *name)
{
	if (!name || (unsigned long)name >= (unsigned long)-CKPT_MAX_ERRNO)
		return NULL;
	return BPF_CORE_READ(name, name);
}

static __always_inline int fl_path_enter(void *ctx, __u32 op, long dirfd, const char *path,
					 long dirfd2, const char *path2, __u32 flags,
					 enum name_space space)
{
	struct thread_state *st = fl_enter(bpf_get_current_task_btf(), ctx, false);

	if (!st)
		return 0;
	st->busy = 1;
	begin_path_call(st, bpf_ktime_get_ns(), op, dirfd, path, dirfd2, path2, flags, space);
	st->busy = 0;
	return 0;
}

SEC("fentry/do_sys_openat2")
int BPF_PROG(fl_open_enter, int dfd, const char *filename, struct open_how *how)
{
	return fl_path_enter(ctx, CKPT_OP_OPEN, dfd, filename, 0, NULL,
			     (__u32)BPF_CORE_READ(how, flags), NAMES_USER);
}

SEC("fexit/do_sys_openat2")
int BPF_PROG(fl_open_exit, int dfd, const char *filename, struct open_how *how, long ret)
{
	return fl_call_exit(ctx, ret);
}

SEC("fentry/do_renameat2")
int BPF_PROG(fl_rename_enter, int olddfd, struct filename *from, int newdfd, struct filename *to,
	     unsigned int flags)
{
	return fl_path_enter(ctx, CKPT_OP_RENAME, olddfd, filename_of(from), newdfd,
			     filename_of(to), flags, NAMES_KERNEL);
}

SEC("fexit/do_renameat2")
int BPF_PROG(fl_rename_exit, int olddfd, struct filename *from, int newdfd, struct filename *to,
	     unsigned int flags, int ret)
{
	return fl_call_exit(ctx, ret);
}

SEC("fentry/do_mkdirat")
int BPF_PROG(fl_mkdir_enter, int dfd, struct filename *name)
{
	return fl_path_enter(ctx, CKPT_OP_MKDIR, dfd, filename_of(name), 0, NULL, 0, NAMES_KERNEL);
}

SEC("fexit/do_mkdirat")
int BPF_PROG(fl_mkdir_exit, int dfd, struct filename *name, umode_t mode, int ret)
{
	return fl_call_exit(ctx, ret);
}

SEC("fentry/do_unlinkat")
int BPF_PROG(fl_unlink_enter, int dfd, struct filename *name)
{
	return fl_path_enter(ctx, CKPT_OP_UNLINK, dfd, filename_of(name), 0, NULL, 0, NAMES_KERNEL);
}

SEC("fexit/do_unlinkat")
int BPF_PROG(fl_unlink_exit, int dfd, struct filename *name, int ret)
{
	return fl_call_exit(ctx, ret);
}

SEC("fentry/do_rmdir")
int BPF_PROG(fl_rmdir_enter, int dfd, struct filename *name)
{
	return fl_path_enter(ctx, CKPT_OP_UNLINK, dfd, filename_of(name), 0, NULL,
			     CKPT_AT_REMOVEDIR, NAMES_KERNEL);
}

SEC("fexit/do_rmdir")
int BPF_PROG(fl_rmdir_exit, int dfd, struct filename *name, int ret)
{
	return fl_call_exit(ctx, ret);
}

SEC("fentry/vfs_statx")
int BPF_PROG(fl_stat_enter, int dfd, struct filename *filename, int flags)
{
	return fl_path_enter(ctx, CKPT_OP_STAT, dfd, filename_of(filename), 0, NULL, flags,
			     NAMES_KERNEL);
}

SEC("fexit/vfs_statx")
int BPF_PROG(fl_stat_exit, int dfd, struct filename *filename, int flags, struct kstat *stat,
	     __u32 request_mask, int ret)
{
	return fl_call_exit(ctx, ret);
}

/* chdir and fchdir: no file-layer function names the new directory, so the
 * syscalls' own functions, which take the user registers. */
SEC("fentry/" CKPT_SYSCALL_FN_PREFIX "chdir")
int BPF_PROG(fl_chdir_enter, struct pt_regs *regs)
{
	return fl_path_enter(ctx, CKPT_OP_CHDIR, AT_FDCWD_ARG,
			     (const char *)ckpt_syscall_arg(regs, 0), 0, NULL, 0, NAMES_USER);
}

SEC("fexit/" CKPT_SYSCALL_FN_PREFIX "chdir")
int BPF_PROG(fl_chdir_exit, struct pt_regs *regs, long ret)
{
	return fl_call_exit(ctx, ret);
}

SEC("fentry/" CKPT_SYSCALL_FN_PREFIX "fchdir")
int BPF_PROG(fl_fchdir_enter, struct pt_regs *regs)
{
	return fl_path_enter(ctx, CKPT_OP_CHDIR, (int)ckpt_syscall_arg(regs, 0), NULL, 0, NULL, 0,
			     NAMES_USER);
}

SEC("fexit/" CKPT_SYSCALL_FN_PREFIX "fchdir")
int BPF_PROG(fl_fchdir_exit, struct pt_regs *regs, long ret)
{
	return fl_call_exit(ctx, ret);
}

/* ---- page faults on mapped files --------------------------------------------- */

/* A fault on a file mapping that was not in the page tables: filemap_fault
 * finds (or reads) the page and maps it. Faults nest inside calls (a write
 * from a mapped buffer), so they do not use depth. */
SEC("fentry/filemap_fault")
int BPF_PROG(fl_fault_enter, struct vm_fault *vmf)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 now = bpf_ktime_get_ns();
	struct thread_state *st = traced_thread_state(task, now);
	struct file *file;

	if (!st)
		return 0;
	file = vmf->vma->vm_file;
	if (!file || !file->f_inode)
		return 0;
	/* A write fault maps what it is about to store to: the store is
	 * counted when it dirties the folio (jobio_mappings.bpf.h). */
	if (vmf->flags & bpf_core_enum_value(enum fault_flag, FAULT_FLAG_WRITE))
		return 0;
	st->busy = 1;
	if (st->mfold.in_fault) {
		/* The last fault's exit was missed ("A missed exit" above; a
		 * fault never nests in a fault): its pages were counted at its
		 * entry, its time is not known. */
		count_drop(CKPT_DROP_EXIT_MISSED);
		st->mfold.in_fault = 0;
	}
	mmap_touch(st, bpf_get_current_pid_tgid(), file->f_inode, vmf->pgoff, vmf->pgoff, now,
		   CKPT_OP_READ);
	if (st->mfold.faults) {
		st->mfold.in_fault = 1;
		st->mfold.fault_start_ns = now;
	}
	st->busy = 0;
	return 0;
}

SEC("fexit/filemap_fault")
int BPF_PROG(fl_fault_exit, struct vm_fault *vmf, unsigned int ret)
{
	struct thread_state *st = running_state(bpf_get_current_task_btf());
	__u64 now = bpf_ktime_get_ns();

	if (!st || !st->mfold.in_fault)
		return 0;
	st->busy = 1;
	st->mfold.in_fault = 0;
	if (now > st->mfold.fault_start_ns)
		st->mfold.busy_ns += now - st->mfold.fault_start_ns;
	st->mfold.last_ns = now;
	st->busy = 0;
	return 0;
}

/*
 * The pages a fault installs in the job's page tables, as the kernel installs
 * them: a fault maps more than the page it faulted on (fault-around,
 * mm/memory.c do_fault_around, maps the cached pages around it; 6.18 maps a
 * cached large folio whole) and skips what it cannot (a folio still being read
 * in), so the pages filemap_fault and filemap_map_pages are asked about are
 * not the pages mapped. Every installation of a file page goes through
 * set_pte_range() (6.6+; do_set_pte() before, one page a call) or, for a
 * PMD-sized folio, do_set_pmd(). A write fault installs what it is about to
 * store to (counted when the store dirties it), and a private mapping's
 * copy-on-write page is anonymous: neither is a read of the file.
 */
static __always_inline void file_pages_installed(struct vm_fault *vmf, struct folio *folio,
						 __u64 nr, unsigned long addr)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct vm_area_struct *vma;
	struct thread_state *st;
	struct file *file;
	unsigned long mapping;
	__u64 first;

	if (!nr || (vmf->flags & bpf_core_enum_value(enum fault_flag, FAULT_FLAG_WRITE)))
		return;
	st = traced_thread_state(task, 0);
	if (!st)
		return;
	vma = vmf->vma;
	file = vma->vm_file;
	if (!file || !file->f_inode)
		return;
	mapping = (unsigned long)BPF_CORE_READ(folio, mapping);
	if (!mapping || (mapping & CKPT_PAGE_MAPPING_ANON))
		return;
	first = vma->vm_pgoff + ((addr - vma->vm_start) >> page_shift);
	st->busy = 1;
	mmap_touch(st, bpf_get_current_pid_tgid(), file->f_inode, first, first + nr - 1,
		   bpf_ktime_get_ns(), CKPT_OP_READ);
	st->busy = 0;
}

/* 6.6+: `nr` pages of `folio`, from `page`, at user address `addr`. */
SEC("fentry/set_pte_range")
int BPF_PROG(fl_set_pte_range, struct vm_fault *vmf, struct folio *folio, struct page *page,
	     unsigned int nr, unsigned long addr)
{
	file_pages_installed(vmf, folio, nr, addr);
	return 0;
}

/* 6.1: one page at `addr` (a page's folio is the page itself or its head). */
SEC("fentry/do_set_pte")
int BPF_PROG(fl_do_set_pte, struct vm_fault *vmf, struct page *page, unsigned long addr)
{
	file_pages_installed(vmf, (struct folio *)ckpt_compound_head(page), 1, addr);
	return 0;
}

/* A PMD-sized folio mapped by one page-table entry: the result is 0 when it
 * was. Its second argument is the folio's head page on 6.1 and 6.12
 * (do_set_pmd(vmf, page) refuses any other page), the folio itself where it
 * takes (vmf, folio, page): the same pointer either way; the arguments are
 * read by number, so one program fits both. A PMD maps PAGE_SIZE / 8 pages
 * (a page-table page of 8-byte entries). */
SEC("fexit/do_set_pmd")
int BPF_PROG(fl_do_set_pmd_exit, struct vm_fault *vmf)
{
	__u64 ret = 1, head = 0;
	__u64 pages = 1ULL << (page_shift - 3);

	if (bpf_get_func_ret(ctx, &ret) || ret != 0 || bpf_get_func_arg(ctx, 1, &head) || !head)
		return 0;
	file_pages_installed(vmf, (struct folio *)head, pages,
			     vmf->address & ~((pages << page_shift) - 1));
	return 0;
}

#endif /* CKPTSCOPE_JOBIO_FILE_LAYER_BPF_H */
