/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What minimal_probe.bpf.c and its loader share. */
#ifndef CKPTSCOPE_BENCH_MINIMAL_PROBE_H
#define CKPTSCOPE_BENCH_MINIMAL_PROBE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

struct minimal_probe_key {
	__u64 dev;
	__u64 ino;
};

/* A verdict value that makes the probe skip the file (none is ever written:
 * the lookup is what is measured). */
#define MINIMAL_PROBE_OTHER 2

/* What the programs do (minimal_probe's flags). */
enum minimal_probe_work {
	MINIMAL_PROBE_COUNT = 0,	/* the verdict lookup and the byte counter */
	MINIMAL_PROBE_EMPTY = 1,	/* --empty */
	MINIMAL_PROBE_TASK_STORAGE = 2, /* --task-storage */
	MINIMAL_PROBE_CLOCK = 3,	/* --clock */
};

#endif
