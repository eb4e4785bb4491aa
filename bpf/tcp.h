/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Records shared by bpf/tcp.bpf.c and the C++ collector: the TCP transport
 * toward storage servers (NFS on port 2049 by default).
 */
#ifndef CKPTSCOPE_BPF_TCP_H
#define CKPTSCOPE_BPF_TCP_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* A storage server: the remote end of a connection. An all-zero address
 * matches every server on that port. */
struct ckpt_endpoint_key {
	__u16 family; /* AF_INET or AF_INET6 */
	__u16 port;   /* host byte order */
	__u32 pad;
	__u8 addr[16]; /* IPv4 in the first 4 bytes */
};

enum ckpt_tcp_event {
	CKPT_TCP_SAMPLE = 1,	 /* periodic, from tcp:tcp_probe */
	CKPT_TCP_STATE = 2,	 /* sock:inet_sock_set_state */
	CKPT_TCP_RETRANSMIT = 3, /* tcp:tcp_retransmit_skb */
	CKPT_TCP_RESET_SENT = 4, /* tcp:tcp_send_reset */
	CKPT_TCP_RESET_RECV = 5, /* tcp:tcp_receive_reset */
};

struct ckpt_tcp_record {
	__u32 event; /* enum ckpt_tcp_event */
	__u16 family;
	__u16 lport;
	__u16 rport;
	__u16 pad0;
	__s32 old_state; /* for CKPT_TCP_STATE */
	__s32 new_state;
	__u32 pad1;
	__u64 time_ns; /* CLOCK_MONOTONIC */
	__u64 sock_cookie;
	__u8 laddr[16];
	__u8 raddr[16];
	/* Cumulative counters of the connection (tcp_sock), exact. */
	__u64 bytes_acked;
	__u64 bytes_received;
	__u64 bytes_sent;
	__u32 total_retrans;
	/* Instantaneous state. */
	__u32 snd_nxt;
	__u32 snd_una;
	__u32 snd_cwnd;
	__u32 srtt_us;
	__u32 snd_wnd;
	__u64 zero_window_ns; /* cumulative time with a zero send window */
	__u32 write_seq;      /* the next byte the socket's owner will queue */
	__u32 pad2;
};

/*
 * A storage socket's newest counters, updated in the kernel at every
 * incoming segment (samples on the ring are thinned): user space reads them
 * from the `sock_states` map, so bytes moved after the last sample are not
 * left for the next segment, maybe in the next checkpoint, to reveal.
 */
struct ckpt_tcp_latest {
	__u64 time_ns;
	__u64 sock_cookie;
	__u64 bytes_acked;    /* including the ACK of the segment being processed */
	__u64 bytes_received; /* including the in-order data of that segment */
	__u64 bytes_sent;
	__u64 zero_window_ns; /* including a zero window still open */
	__u32 total_retrans;
	__u32 in_flight; /* bytes sent and not yet acknowledged */
	__u32 backlog;	 /* bytes queued or in flight, not yet acknowledged (write_seq - snd_una) */
	__u32 pad;
};

/* Value of the `sock_states` map, keyed by the struct sock address. */
struct ckpt_tcp_sock_state {
	__u64 last_sample_ns;
	__u64 last_retransmit_ns;
	__u64 zero_window_since_ns;
	__u64 zero_window_ns;
	struct ckpt_tcp_latest latest;
};

enum ckpt_tcp_drop {
	CKPT_TCP_DROP_RINGBUF_FULL = 0,
	CKPT_TCP_DROP_SOCK_FULL = 1, /* no room to track a connection's state */
	CKPT_TCP_DROP_MAX = 2,
};

#endif /* CKPTSCOPE_BPF_TCP_H */
