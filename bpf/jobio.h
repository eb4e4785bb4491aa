/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Records shared by bpf/jobio.bpf.c and the C++ collector: the job's file I/O,
 * its on-CPU time outside I/O calls, and its process tree.
 *
 * Plain C, fixed-width fields, explicit padding, no pointers: the layout is
 * the contract between kernel and user space (checked by static asserts in
 * userspace/probes/record_layout_test.cpp).
 */
#ifndef CKPTSCOPE_BPF_JOBIO_H
#define CKPTSCOPE_BPF_JOBIO_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define CKPT_PATH_MAX 256

enum ckpt_record_kind {
	CKPT_REC_IO = 1,   /* struct ckpt_io_record */
	CKPT_REC_PATH = 2, /* struct ckpt_path_record */
	CKPT_REC_CPU = 3,  /* struct ckpt_cpu_record */
	CKPT_REC_PROC = 4, /* struct ckpt_proc_record */
	/* A call on one file that is, or may be, a checkpoint's is in flight:
	 * struct ckpt_io_record with end_ns 0, ret 0. Sent once a call, as a
	 * flush (fsync, close, ftruncate) or a data call of at least
	 * `announce_min_bytes` starts, or when any other such call first
	 * leaves the CPU inside it (bpf/jobio_state.bpf.h, "calls in
	 * flight"). Its own record, when it returns, or any later record of
	 * the thread but an mmap one, ends it. */
	CKPT_REC_IO_START = 5,
	/* A traced process died by a signal: one per regular file it still had
	 * open for writing (struct ckpt_open_file_record), before its exit. */
	CKPT_REC_OPEN_FILE = 6,
	/* A copy between two files in the kernel (copy_file_range, sendfile,
	 * splice between files): struct ckpt_copy_record. */
	CKPT_REC_COPY = 7,
	/* Pages of a mapped file faulted into the job's page tables to be
	 * read (op CKPT_OP_READ), or dirtied by its stores (CKPT_OP_WRITE):
	 * struct ckpt_mmap_record, contiguous ones folded into one range. */
	CKPT_REC_MMAP = 8,
	/* What one thread moved through one file user space ruled out
	 * (CKPT_VERDICT_OTHER), summed in the kernel: struct
	 * ckpt_other_io_record. Those calls have no record of their own, and
	 * bulk data through files no pattern recognised must not go unsaid. */
	CKPT_REC_OTHER_IO = 9,
	/* A copy between two files is in flight, as CKPT_REC_IO_START says of
	 * a call on one: struct ckpt_copy_record with end_ns 0, ret 0. */
	CKPT_REC_COPY_START = 10,
	/* A path call that changes the tree or opens for writing (not a stat,
	 * not a read-only open) is in flight: struct ckpt_path_record with
	 * end_ns 0, ret 0, no file identity yet. */
	CKPT_REC_PATH_START = 11,
	/* The thread's call announced in flight returned without a record of
	 * its own to end it: a Linux AIO submission or wait (bpf/jobio_aio.bpf.h)
	 * that timed out, or reaped nothing user space is told of. Just a
	 * struct ckpt_record_header, start_ns = end_ns = the return. */
	CKPT_REC_CALL_END = 12,
	/* A block device had the job's bios in flight, from the first one
	 * queued while it was idle to the completion that left none:
	 * struct ckpt_storage_busy_record (bpf/jobio_storage.bpf.h). */
	CKPT_REC_STORAGE_BUSY = 13,
};

/* Calls on an open file descriptor. */
enum ckpt_io_op {
	CKPT_OP_READ = 1,      /* read, pread64, readv, preadv */
	CKPT_OP_WRITE = 2,     /* write, pwrite64, writev, pwritev */
	CKPT_OP_FSYNC = 3,     /* fsync, fdatasync */
	CKPT_OP_CLOSE = 4,     /* close: flushes on NFS (close-to-open) */
	CKPT_OP_FTRUNCATE = 5, /* ftruncate */
};

/* Calls that name a path. */
enum ckpt_path_op {
	CKPT_OP_OPEN = 16,   /* openat, openat2, creat */
	CKPT_OP_RENAME = 17, /* rename, renameat, renameat2 */
	CKPT_OP_MKDIR = 18,  /* mkdir, mkdirat */
	CKPT_OP_UNLINK = 19, /* unlink, unlinkat, rmdir */
	CKPT_OP_STAT = 20,   /* newfstatat, statx, newstat, newlstat */
	/* chdir (path, dirfd AT_FDCWD), fchdir (dirfd: its fd, no path): the
	 * process' working directory, for the relative names that follow
	 * (rsync's receiver chdir()s into the destination). Never in flight. */
	CKPT_OP_CHDIR = 21,
};

/*
 * How a data call reached the file. Every call is a read or a write of the
 * file it names, whichever interface carried it: an io_uring request is a read
 * or write like read(2), a Linux AIO request (io_submit) too, from its
 * submission to its reaping, a copy is a read of its source and a write of its
 * destination (struct ckpt_copy_record), a mapping's page faults a read and
 * its stores a write (struct ckpt_mmap_record).
 */
enum ckpt_io_via {
	CKPT_VIA_SYSCALL = 0,	      /* the read/write/fsync/close/ftruncate family */
	CKPT_VIA_IO_URING = 1,	      /* IORING_OP_READ*, IORING_OP_WRITE* */
	CKPT_VIA_COPY_FILE_RANGE = 2, /* copy_file_range(2) */
	CKPT_VIA_SENDFILE = 3,	      /* sendfile(2), splice(2) between files */
	CKPT_VIA_MMAP = 4,	      /* page faults on a shared or private file mapping */
	CKPT_VIA_AIO = 5,	      /* io_submit(2), reaped by io_getevents(2): libaio */
	/* A copy the storage made without the bytes crossing the client: NFS
	 * 4.2 COPY or CLONE (a copy_file_range the server served; ret: the
	 * bytes it copied). */
	CKPT_VIA_SERVER_COPY = 6,
	/* ioctl(FICLONE/FICLONERANGE): the file system shared the source's
	 * extents with the destination (xfs, btrfs; on NFS 4.2 a CLONE);
	 * ret: the bytes cloned, the source's size for a whole-file clone. */
	CKPT_VIA_REFLINK = 7,
	CKPT_VIA_MAX = 8,
};

/* How the job's file I/O is traced, chosen once by the feature probe
 * (userspace/probes/kernel_features.h) and named in the trace (probe_mode). */
enum ckpt_probe_mode {
	/* raw_syscalls sys_enter/sys_exit (tp_btf): every syscall of a traced
	 * process enters the program; the fallback where fentry is refused. */
	CKPT_MODE_SYSCALL = 0,
	/* fentry/fexit on the VFS functions every path funnels through, plus
	 * the file-layer tracepoints: only file I/O pays. */
	CKPT_MODE_FILE_LAYER = 1,
};

/*
 * The verdict on a file, set by user space (the config's globs) in the
 * `file_verdicts` map keyed by struct ckpt_file_key. The kernel clears it at
 * every open of the inode (an inode number can be reused), so a file whose
 * verdict is absent is a candidate: its calls are recorded (folded) until user
 * space decides. A call on a CKPT_VERDICT_OTHER file that succeeded costs the
 * lookup and returns; a failed one is still recorded (job failures).
 */
enum ckpt_file_verdict {
	CKPT_VERDICT_UNKNOWN = 0, /* not in the map */
	CKPT_VERDICT_CHECKPOINT = 1,
	CKPT_VERDICT_OTHER = 2,
};

struct ckpt_file_key {
	__u64 dev; /* inode->i_sb->s_dev, the kernel's encoding (major << 20 | minor) */
	__u64 ino;
};

/* File type of the file a call touched, from inode->i_mode. */
enum ckpt_file_type {
	CKPT_FT_UNKNOWN = 0,
	CKPT_FT_REGULAR = 1,
	CKPT_FT_DIRECTORY = 2,
};

/*
 * Header of every record on the ring buffer. `cpu_ns` is the thread's on-CPU
 * time outside traced I/O calls between `cpu_window_start_ns` and this
 * record's start: the serialize stage is built from it without a record per
 * context switch.
 */
struct ckpt_record_header {
	__u32 kind;
	__u32 op;
	__u32 tgid;
	__u32 tid;
	__u64 start_ns; /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	__u64 end_ns;
	__u64 cpu_window_start_ns;
	__u64 cpu_ns;
};

/*
 * One data call, or several folded into one record: small reads or writes
 * (at most `fold_max_bytes` each) by one thread on one file, with one op and
 * one `via`, that start within `fold_window_ns` of the first. hdr.start_ns is
 * the first call's start, hdr.end_ns the last one's end; the CPU window of
 * the header ends at last_start_ns (the last call's start), not at start_ns.
 */
struct ckpt_io_record {
	struct ckpt_record_header hdr;
	__s64 ret;	 /* bytes moved (summed when folded), 0, or -errno */
	__u64 requested; /* count argument (0 for fsync/close), summed when folded */
	__u64 dev;	 /* kernel dev_t of the file's super block */
	__u64 ino;
	__s32 fd;	 /* -1 when the call named no fd (io_uring fixed files, exit-time close) */
	__u32 file_type; /* enum ckpt_file_type */
	__u32 calls;	 /* calls in this record: 1, or how many were folded */
	__u32 via;	 /* enum ckpt_io_via */
	__u64 busy_ns;	 /* the calls' durations summed (end - start for one) */
	__u64 last_start_ns;
	/* What the storage did inside these calls for this file (summed when
	 * folded). storage_bytes: bytes the calling thread sent to the file's
	 * own block device or read from it (block_bio_queue: read misses and
	 * the readahead they start, an fsync's writeback, O_SYNC writes), or,
	 * on a file opened O_DIRECT, the bytes moved; 0 on a file with no
	 * block device of its own (NFS: its RPCs say it; tmpfs). */
	__u64 storage_bytes;
	/* Page-cache bytes the calls turned dirty (writeback_dirty_folio): what
	 * writeback still owes the storage once they return. */
	__u64 dirtied_bytes;
	/* Time the calls were held in balance_dirty_pages for dirty pages the
	 * storage had not yet taken (its `pause`, in ns). */
	__u64 throttle_ns;
};

/*
 * One interval a block device was busy with the job's bios (those counted in
 * some call's storage_bytes): hdr.start_ns when the first was queued on the
 * idle device, hdr.end_ns when the last completed; hdr.tgid/tid the thread
 * that queued the first. Async readahead and writeback run on after the call
 * that started them: this is the storage's own time.
 */
struct ckpt_storage_busy_record {
	struct ckpt_record_header hdr;
	__u64 dev;   /* the device's dev_t, the kernel's encoding (= the super block's s_dev) */
	__u64 bytes; /* the bytes of the bios (as queued) that completed in the interval */
	__u32 bios;
	__u32 pad;
};

/* A copy from one file to another inside the kernel. */
struct ckpt_copy_record {
	struct ckpt_record_header hdr;
	__s64 ret;	 /* bytes copied, or -errno */
	__u64 requested; /* the len argument */
	__u64 src_dev;
	__u64 src_ino;
	__u64 dst_dev;
	__u64 dst_ino;
	__s32 src_fd; /* -1 where the program saw no fds (file layer) */
	__s32 dst_fd;
	__u32 src_type; /* enum ckpt_file_type */
	__u32 dst_type;
	__u32 via; /* CKPT_VIA_COPY_FILE_RANGE or CKPT_VIA_SENDFILE */
	__u32 pad;
};

/*
 * Page faults of one thread on one mapped file, folded while the pages they
 * map stay contiguous: [first_page, last_page] (page indexes in the file,
 * inclusive) were mapped into the job's page tables, by a fault or by the
 * kernel's fault-around around it (mm/memory.c do_fault_around), whether the
 * pages were cached or not. storage_pages of them (at most) had to be read
 * from storage into the page cache first (mm_filemap_add_to_page_cache in the
 * faulting thread). User space counts each page of a file once per load.
 * hdr.op says which: CKPT_OP_READ for pages mapped by faults that read;
 * CKPT_OP_WRITE for folios a store through a shared mapping turned from clean
 * to dirty (writeback_dirty_folio), [first_page, last_page] the folios'
 * pages, no storage_pages or busy_ns. Each turn is reported; user space
 * counts each page once per save.
 */
struct ckpt_mmap_record {
	struct ckpt_record_header hdr; /* start: first fault, end: the last one's end */
	__u64 dev;
	__u64 ino;
	__u64 first_page;
	__u64 last_page;
	__u64 file_size;     /* i_size at the last fault: a range never counts past it */
	__u64 storage_pages; /* pages added to the page cache for this file in these faults */
	__u64 busy_ns;	     /* time in the faults (0 where only tracepoints see them) */
	__u32 faults;	     /* faults folded in */
	__u32 page_shift;    /* PAGE_SHIFT of the kernel */
	/* Syscall mode where the kernel's file-page counter can be read
	 * (bpf/jobio_mappings.bpf.h): the pages these faults installed in the
	 * job's page tables, counted, not placed: [first_page, last_page] then only
	 * spans the faulting pages, and user space counts installed_pages,
	 * at most the file's size per load. 0: the range is the pages. */
	__u64 installed_pages;
};

/*
 * The successful reads and writes of one thread on one regular file that user
 * space ruled out (CKPT_VERDICT_OTHER), summed: those calls cost a lookup and
 * an addition each, no record. Reported when the thread turns to a third such
 * file (two are summed at once: a loop reading one and writing another costs
 * no record per call), closes the file, is switched out with sums older than
 * `other_io_flush_ns`, or exits. A copy adds a read of its source and a write
 * of its destination, an io_uring completion a read or write; page faults on
 * a mapping are not counted. hdr.start_ns: when the first call summed here
 * returned (the first of a new file); hdr.end_ns: the report. No CPU window
 * (cpu_ns 0): the calls' time stayed the thread's CPU time, as it always did.
 */
struct ckpt_other_io_record {
	struct ckpt_record_header hdr;
	__u64 dev; /* inode->i_sb->s_dev, the kernel's encoding */
	__u64 ino;
	__u64 bytes_read;
	__u64 bytes_written;
	__u32 read_calls; /* saturate at 2^32 - 1 */
	__u32 write_calls;
};

struct ckpt_path_record {
	struct ckpt_record_header hdr;
	__s64 ret; /* fd for open, 0, or -errno */
	__u64 dev; /* file identity after a successful open, else 0 */
	__u64 ino;
	__s32 dirfd;	 /* AT_FDCWD (-100) or a directory fd */
	__s32 dirfd2;	 /* rename: the new name's directory fd */
	__u32 flags;	 /* open flags, or AT_/RENAME_ flags */
	__u32 file_type; /* enum ckpt_file_type, after a successful open */
	__u16 path_len;	 /* bytes copied into path, with the NUL; 0 if unreadable */
	__u16 path2_len; /* rename: the new name */
	__u32 pad;
	char path[CKPT_PATH_MAX];
	char path2[CKPT_PATH_MAX];
};

/* On-CPU time outside I/O, flushed when a traced thread leaves the CPU. */
struct ckpt_cpu_record {
	struct ckpt_record_header hdr;
};

enum ckpt_proc_op {
	CKPT_PROC_FORK = 1, /* a traced process forked: child_tgid joins */
	CKPT_PROC_EXIT = 2, /* a traced process' last thread exited */
	CKPT_PROC_THREAD_EXIT = 3,
	/* A traced process exec'd a program that changed its credentials
	 * (setuid, setgid, file capabilities, an LSM transition): the exporter
	 * takes it out of an unprivileged client's trace. */
	CKPT_PROC_EXEC_PRIVILEGED = 4,
};

struct ckpt_proc_record {
	struct ckpt_record_header hdr;
	__u32 child_tgid;
	__s32 exit_code; /* task->exit_code: wait status encoding */
	char comm[16];
	/* The process' credentials when the record was made (task->cred). */
	__u32 uid;
	__u32 euid;
	__u32 gid;
	__u32 egid;
	/* CKPT_PROC_EXEC_PRIVILEGED: bprm->secureexec (the kernel's AT_SECURE). */
	__u32 secure_exec;
	/* CKPT_PROC_EXIT, CKPT_PROC_THREAD_EXIT: io_accounting says the three
	 * counters below are the exiting thread's own (task->ioac, its whole
	 * life; CONFIG_TASK_IO_ACCOUNTING): the bytes it read from storage,
	 * the page-cache bytes it dirtied (and O_DIRECT bytes it wrote), and
	 * the dirty bytes a truncate or unlink dropped before writeback. User
	 * space sums them over the job's threads against what the trace
	 * attributed (docs/stitching.md, "End-of-run accounting"). */
	__u32 io_accounting;
	__u64 io_read_bytes;
	__u64 io_write_bytes;
	__u64 io_cancelled_write_bytes;
};

/* Files open for writing at a signalled death; fd -1 (dev and ino 0) says the
 * fd table was larger than the kernel could scan (see ckpt_for_each_fd): the
 * list is incomplete. */
struct ckpt_open_file_record {
	struct ckpt_record_header hdr;
	__u64 dev; /* inode->i_sb->s_dev, the kernel's encoding */
	__u64 ino;
	__s32 fd;
	__u32 pad;
};

/*
 * The syscalls we trace, as user space maps them from this architecture's
 * numbers (<sys/syscall.h>) into the `syscall_kinds` table before load. The
 * kind tells the BPF side where the fd, path and count arguments are.
 */
enum ckpt_syscall_kind {
	CKPT_SC_NONE = 0,
	CKPT_SC_READ,		 /* read(fd, buf, count), pread64(fd, buf, count, pos) */
	CKPT_SC_READV,		 /* readv, preadv, preadv2: (fd, iov, iovcnt, ...) */
	CKPT_SC_WRITE,		 /* write, pwrite64 */
	CKPT_SC_WRITEV,		 /* writev, pwritev, pwritev2 */
	CKPT_SC_FSYNC,		 /* fsync(fd), fdatasync(fd) */
	CKPT_SC_CLOSE,		 /* close(fd) */
	CKPT_SC_FTRUNCATE,	 /* ftruncate(fd, length) */
	CKPT_SC_OPENAT,		 /* openat(dfd, path, flags, mode) */
	CKPT_SC_OPENAT2,	 /* openat2(dfd, path, how, size) */
	CKPT_SC_OPEN,		 /* open(path, flags, mode) */
	CKPT_SC_CREAT,		 /* creat(path, mode) */
	CKPT_SC_RENAME,		 /* rename(old, new) */
	CKPT_SC_RENAMEAT,	 /* renameat(olddfd, old, newdfd, new), renameat2(..., flags) */
	CKPT_SC_MKDIR,		 /* mkdir(path, mode) */
	CKPT_SC_MKDIRAT,	 /* mkdirat(dfd, path, mode) */
	CKPT_SC_UNLINK,		 /* unlink(path), rmdir(path) */
	CKPT_SC_UNLINKAT,	 /* unlinkat(dfd, path, flags) */
	CKPT_SC_FSTATAT,	 /* newfstatat(dfd, path, buf, flags) */
	CKPT_SC_STATX,		 /* statx(dfd, path, flags, mask, buf) */
	CKPT_SC_STAT,		 /* newstat(path, buf) */
	CKPT_SC_LSTAT,		 /* newlstat(path, buf) */
	CKPT_SC_COPY_FILE_RANGE, /* copy_file_range(fd_in, off_in, fd_out, off_out, len, flags) */
	CKPT_SC_SENDFILE,	 /* sendfile(out_fd, in_fd, offset, count) */
	CKPT_SC_SPLICE,		 /* splice(fd_in, off_in, fd_out, off_out, len, flags) */
	CKPT_SC_IO_SUBMIT,	 /* io_submit(ctx_id, nr, iocbpp) */
	CKPT_SC_IO_GETEVENTS, /* io_getevents, io_pgetevents: (ctx_id, min_nr, nr, events, ...) */
	CKPT_SC_CHDIR,	      /* chdir(path) */
	CKPT_SC_FCHDIR,	      /* fchdir(fd) */
	CKPT_SC_IOCTL,	      /* ioctl(fd, cmd, arg): FICLONE and FICLONERANGE only */
	CKPT_SC_KIND_MAX,
};

#define CKPT_MAX_SYSCALLS 512

/* The prefix of a syscall's own function, which takes the user registers
 * (arch/x86/include/asm/syscall_wrapper.h, arch/arm64's likewise): the file
 * layer hooks chdir there, no VFS function names the new directory. The BPF
 * side knows the target by __TARGET_ARCH_*, user space by the compiler's. */
#if defined(__TARGET_ARCH_x86) || (!defined(__bpf__) && defined(__x86_64__))
#define CKPT_SYSCALL_FN_PREFIX "__x64_sys_"
#elif defined(__TARGET_ARCH_arm64) || (!defined(__bpf__) && defined(__aarch64__))
#define CKPT_SYSCALL_FN_PREFIX "__arm64_sys_"
#else
#error "ckptscope: add this architecture's syscall function prefix"
#endif

/*
 * The head of each CPU's `hot_slots` element (bpf/jobio_state.bpf.h): which
 * thread's state is there now. User space reads only this part (diagnostics,
 * tests); the state after it is the programs' own.
 */
struct ckpt_hot_slot_head {
	__u32 owner; /* tid; 0: none */
	__u32 used;  /* the owner's programs used the slot since it moved in */
};

/* Why an event was lost; indexes the per-CPU `jobio_drops` array. */
enum ckpt_jobio_drop {
	CKPT_DROP_RINGBUF_FULL = 0,
	CKPT_DROP_INFLIGHT_FULL = 1, /* no room to remember a path call's names */
	CKPT_DROP_THREAD_FULL = 2,   /* no per-thread storage for a traced thread */
	CKPT_DROP_TGID_FULL = 3,     /* a forked child could not be followed */
	/* an io_uring request's submit time could not be kept: its record has
	 * no duration (start = end) */
	CKPT_DROP_URING_INFLIGHT_FULL = 4,
	/* a file-layer call whose exit never ran (another tool changed the
	 * function's trampoline while the call slept in it): what it moved is
	 * not known (bpf/jobio_file_layer.bpf.h fl_abandon_call) */
	CKPT_DROP_EXIT_MISSED = 5,
	/* Linux AIO (bpf/jobio_aio.bpf.h). No room to remember a submitted
	 * request: its completion is not reported (and counts again as
	 * unmatched when reaped). */
	CKPT_DROP_AIO_INFLIGHT_FULL = 6,
	/* an iocb or io_event the program could not read from the job's
	 * memory, or one past the CKPT_AIO_BATCH_MAX of a call */
	CKPT_DROP_AIO_UNREADABLE = 7,
	/* a completion reaped with no submission on record (submitted before
	 * tracing began, or lost at submission) */
	CKPT_DROP_AIO_UNMATCHED = 8,
	/* a request still on record when its process exited: reaped without
	 * io_getevents (from the ring, in user space) or never */
	CKPT_DROP_AIO_UNREAPED = 9,
	/* syscall mode: pages a traced thread's fault mapped from a file that
	 * could not be told apart from another thread's (the fault moved to
	 * another CPU while it slept; bpf/jobio_mappings.bpf.h) */
	CKPT_DROP_MMAP_UNATTRIBUTED = 10,
	/* a bio counted in a call's storage_bytes that could not be remembered
	 * until it completed: the storage's busy time misses it */
	CKPT_DROP_STORAGE_BIOS_FULL = 11,
	CKPT_JOBIO_DROP_MAX = 12,
};

/* Which processes are traced; set before load (rodata). */
enum ckpt_filter_mode {
	CKPT_FILTER_TGIDS = 0,	/* the tgid set in `traced_tgids`, following fork */
	CKPT_FILTER_CGROUP = 1, /* tasks under the cgroup in `target_cgroup`, plus the set */
	CKPT_FILTER_ALL = 2,	/* every process but the collector itself */
};

#endif /* CKPTSCOPE_BPF_JOBIO_H */
