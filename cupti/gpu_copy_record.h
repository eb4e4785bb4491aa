/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Messages from libckptscope_cupti.so (injected into the job) to the
 * collector (`ckptscope run`), over a SOCK_SEQPACKET Unix socket whose path
 * `run` passes in CKPTSCOPE_CUPTI_SOCKET. Each datagram holds one or more
 * messages back to back, each starting with a ckpt_gpu_msg_header whose
 * `size` is the whole message's size.
 *
 * Plain C, fixed-width fields, explicit padding, no pointers, and our own
 * enums rather than CUPTI's: the collector builds and decodes these without
 * the CUDA toolkit (CPU-only builds). Layouts are checked by static asserts
 * in both the library and the collector's tests.
 */
#ifndef CKPTSCOPE_CUPTI_GPU_COPY_RECORD_H
#define CKPTSCOPE_CUPTI_GPU_COPY_RECORD_H

#include <stdint.h>

#define CKPT_GPU_PROTOCOL_VERSION 1
/* The largest datagram either side sends or accepts. */
#define CKPT_GPU_MAX_DATAGRAM 65536

enum ckpt_gpu_msg_kind {
  CKPT_GPU_MSG_HELLO = 1,  /* struct ckpt_gpu_hello: once, at injection */
  CKPT_GPU_MSG_COPY = 2,   /* struct ckpt_gpu_copy_record */
  CKPT_GPU_MSG_DEVICE = 3, /* struct ckpt_gpu_device_record */
  CKPT_GPU_MSG_DROPS = 4,  /* struct ckpt_gpu_drops: cumulative, at each flush and at exit */
};

struct ckpt_gpu_msg_header {
  uint32_t kind;    /* enum ckpt_gpu_msg_kind */
  uint32_t size;    /* bytes of the whole message, header included */
  uint32_t pid;     /* the process the library runs in (its tgid) */
  uint32_t version; /* CKPT_GPU_PROTOCOL_VERSION */
};

/* What the library could do in this process. */
enum ckpt_gpu_status {
  CKPT_GPU_OK = 0,               /* activity records enabled */
  CKPT_GPU_NO_GPU = 1,           /* CUPTI could not enable (no driver or device) */
  CKPT_GPU_SUBSCRIBER_TAKEN = 2, /* another CUPTI tool holds the subscriber */
  CKPT_GPU_CUPTI_ERROR = 3,      /* another CUPTI failure: `message` says which call */
};

/* How timestamps were put on CLOCK_MONOTONIC. */
enum ckpt_gpu_clock {
  CKPT_GPU_CLOCK_CALLBACK = 1, /* cuptiActivityRegisterTimestampCallback */
  CKPT_GPU_CLOCK_OFFSET = 2,   /* CUPTI's own clock, shifted by a measured offset */
};

struct ckpt_gpu_hello {
  struct ckpt_gpu_msg_header hdr;
  uint32_t status;        /* enum ckpt_gpu_status */
  uint32_t clock;         /* enum ckpt_gpu_clock */
  uint32_t cupti_version; /* cuptiGetVersion() */
  uint32_t pad;
  int64_t clock_offset_ns; /* CKPT_GPU_CLOCK_OFFSET: added to CUPTI's timestamps */
  char message[256];       /* NUL-terminated: why, for anything but CKPT_GPU_OK */
};

/* enum ckpt_gpu_copy_kind: the direction of a copy. */
enum ckpt_gpu_copy_kind {
  CKPT_GPU_COPY_UNKNOWN = 0,
  CKPT_GPU_COPY_HTOD = 1, /* host to device: a load's last stage */
  CKPT_GPU_COPY_DTOH = 2, /* device to host: a save's first stage */
  CKPT_GPU_COPY_DTOD = 3,
  CKPT_GPU_COPY_HTOH = 4,
  CKPT_GPU_COPY_PTOP = 5,  /* device to another device (MEMCPY2) */
  CKPT_GPU_COPY_OTHER = 6, /* CUDA arrays */
};

/* enum ckpt_gpu_memory_kind: where a copy's source or destination lives. */
enum ckpt_gpu_memory_kind {
  CKPT_GPU_MEM_UNKNOWN = 0,
  CKPT_GPU_MEM_PAGEABLE = 1, /* torch.save, safetensors: staged by the driver */
  CKPT_GPU_MEM_PINNED = 2,   /* PyTorch's async DCP: page-locked host memory */
  CKPT_GPU_MEM_DEVICE = 3,
  CKPT_GPU_MEM_MANAGED = 4,
  CKPT_GPU_MEM_ARRAY = 5,
};

#define CKPT_GPU_COPY_ASYNC 0x1 /* flags: cudaMemcpyAsync and friends */

struct ckpt_gpu_copy_record {
  struct ckpt_gpu_msg_header hdr;
  uint64_t start_ns; /* CLOCK_MONOTONIC */
  uint64_t end_ns;
  uint64_t bytes;
  uint64_t copy_count; /* copies batched into this record (cudaMemcpyBatchAsync); 1 otherwise */
  uint32_t copy_kind;  /* enum ckpt_gpu_copy_kind */
  uint32_t src_kind;   /* enum ckpt_gpu_memory_kind */
  uint32_t dst_kind;
  uint32_t flags;      /* CKPT_GPU_COPY_* */
  uint32_t device_id;  /* the device that did the copy */
  uint32_t src_device; /* PTOP: the source device; else device_id */
  uint32_t dst_device; /* PTOP: the destination device; else device_id */
  uint32_t context_id;
  uint32_t stream_id;
  uint32_t correlation_id; /* ties the copy to its API call */
};

struct ckpt_gpu_device_record {
  struct ckpt_gpu_msg_header hdr;
  uint32_t device_id;
  uint32_t pci_domain; /* the GPU's PCI address: /sys/bus/pci/devices/DDDD:BB:DD.0 */
  uint32_t pci_bus;
  uint32_t pci_device;
  uint64_t global_memory_bytes;
  char name[64]; /* NUL-terminated */
  uint8_t uuid[16];
};

struct ckpt_gpu_drops {
  struct ckpt_gpu_msg_header hdr;
  uint64_t cupti_dropped;   /* cuptiActivityGetNumDroppedRecords, summed */
  uint64_t buffers_refused; /* CUPTI asked for a buffer past the cap: it drops records */
  uint64_t send_dropped;    /* records that could not be sent (collector busy or gone) */
  uint64_t unknown_records; /* activity records of kinds we do not decode, skipped */
  uint64_t records_sent;    /* copy records sent so far */
};

#endif /* CKPTSCOPE_CUPTI_GPU_COPY_RECORD_H */
