// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The TCP transport toward storage servers. Storage sockets usually belong to
 * the kernel (the NFS client's transport), not to the job, so they are
 * selected by remote endpoint, not by process.
 *
 * Bytes come from the connection's own cumulative counters (tcp_sock
 * bytes_acked/bytes_received/bytes_sent), so sampling never loses bytes; the
 * per-segment tcp_probe tracepoint is thinned to one sample per socket per
 * `sample_interval_ns` in the kernel so a busy link does not flood user space.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "core_fixes.bpf.h"
#include "tcp.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define CKPT_AF_INET 2
#define CKPT_AF_INET6 10
#define CKPT_IPPROTO_TCP 6

const volatile __u64 sample_interval_ns = 10 * 1000 * 1000ULL;
const volatile __u64 retransmit_interval_ns = 1000 * 1000ULL;
const volatile __u64 wakeup_bytes = 256 << 10;

/* Keeps the record type in the object's BTF (see jobio.bpf.c). */
const struct ckpt_tcp_record *unused_tcp_record __attribute__((unused));

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} tcp_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, struct ckpt_endpoint_key);
	__type(value, __u8);
} storage_endpoints SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64); /* struct sock address */
	__type(value, struct ckpt_tcp_sock_state);
} sock_states SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CKPT_TCP_DROP_MAX);
	__type(key, __u32);
	__type(value, __u64);
} tcp_drops SEC(".maps");

static __always_inline void count_drop(__u32 cause)
{
	__u64 *count = bpf_map_lookup_elem(&tcp_drops, &cause);

	if (count)
		*count += 1;
}

/* Fills family, ports and addresses; true when the remote end is a storage
 * server we were asked to watch. */
static __always_inline bool sock_to_storage(const struct sock *sk, struct ckpt_tcp_record *rec)
{
	struct ckpt_endpoint_key key = {};

	if (ckpt_sk_protocol(sk) != CKPT_IPPROTO_TCP)
		return false;
	key.family = BPF_CORE_READ(sk, __sk_common.skc_family);
	key.port = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
	rec->family = key.family;
	rec->rport = key.port;
	rec->lport = BPF_CORE_READ(sk, __sk_common.skc_num);
	if (key.family == CKPT_AF_INET) {
		/* 4 bytes into a 16-byte field: BPF_CORE_READ_INTO(&rec->raddr, ...)
		 * would read sizeof(raddr) and pick up the fields after daddr. */
		__u32 raddr4 = BPF_CORE_READ(sk, __sk_common.skc_daddr);
		__u32 laddr4 = BPF_CORE_READ(sk, __sk_common.skc_rcv_saddr);

		__builtin_memcpy(rec->raddr, &raddr4, sizeof(raddr4));
		__builtin_memcpy(rec->laddr, &laddr4, sizeof(laddr4));
	} else if (key.family == CKPT_AF_INET6) {
		BPF_CORE_READ_INTO(&rec->raddr, sk, __sk_common.skc_v6_daddr.in6_u.u6_addr8);
		BPF_CORE_READ_INTO(&rec->laddr, sk, __sk_common.skc_v6_rcv_saddr.in6_u.u6_addr8);
	} else {
		return false;
	}
	__builtin_memcpy(key.addr, rec->raddr, sizeof(key.addr));
	if (bpf_map_lookup_elem(&storage_endpoints, &key))
		return true;
	__builtin_memset(key.addr, 0, sizeof(key.addr));
	return bpf_map_lookup_elem(&storage_endpoints, &key) != NULL;
}

static __always_inline void fill_counters(const struct sock *sk, struct ckpt_tcp_record *rec,
					  struct ckpt_tcp_sock_state *st, bool from_probe)
{
	const struct tcp_sock *tp = (const struct tcp_sock *)sk;

	rec->sock_cookie = bpf_get_socket_cookie((void *)sk);
	if (from_probe && st) {
		/* As of the segment being processed (see update_latest). */
		rec->bytes_acked = st->latest.bytes_acked;
		rec->bytes_received = st->latest.bytes_received;
		rec->bytes_sent = st->latest.bytes_sent;
		rec->total_retrans = st->latest.total_retrans;
		rec->zero_window_ns = st->latest.zero_window_ns;
	} else {
		/* State changes, retransmits and resets come after the segments
		 * that led to them: the socket's own counters are current. */
		rec->bytes_acked = BPF_CORE_READ(tp, bytes_acked);
		rec->bytes_received = BPF_CORE_READ(tp, bytes_received);
		rec->bytes_sent = ckpt_tcp_bytes_sent(tp);
		rec->total_retrans = BPF_CORE_READ(tp, total_retrans);
		rec->zero_window_ns = st ? st->zero_window_ns : 0;
		if (st && rec->bytes_acked >= st->latest.bytes_acked &&
		    rec->bytes_received >= st->latest.bytes_received) {
			st->latest.bytes_acked = rec->bytes_acked;
			st->latest.bytes_received = rec->bytes_received;
			st->latest.bytes_sent = rec->bytes_sent;
			st->latest.total_retrans = rec->total_retrans;
			st->latest.in_flight =
			    BPF_CORE_READ(tp, snd_nxt) - BPF_CORE_READ(tp, snd_una);
			st->latest.backlog =
			    BPF_CORE_READ(tp, write_seq) - BPF_CORE_READ(tp, snd_una);
			st->latest.time_ns = bpf_ktime_get_ns();
		}
	}
	rec->snd_nxt = BPF_CORE_READ(tp, snd_nxt);
	rec->snd_una = BPF_CORE_READ(tp, snd_una);
	rec->write_seq = BPF_CORE_READ(tp, write_seq);
	rec->snd_cwnd = ckpt_tcp_snd_cwnd(tp);
	rec->srtt_us = BPF_CORE_READ(tp, srtt_us) >> 3; /* stored << 3 */
	rec->snd_wnd = BPF_CORE_READ(tp, snd_wnd);
}

/*
 * The connection's counters as they will be once this segment is processed:
 * tcp_probe fires at the start of tcp_rcv_established, before the ACK it
 * carries moves snd_una and before its data moves rcv_nxt.
 */
static __always_inline void update_latest(const struct sock *sk, const struct sk_buff *skb,
					  struct ckpt_tcp_sock_state *st, __u64 now)
{
	const struct tcp_sock *tp = (const struct tcp_sock *)sk;
	const struct tcp_skb_cb *cb =
	    (const struct tcp_skb_cb *)((const char *)skb +
					bpf_core_field_offset(struct sk_buff, cb));
	__u32 snd_una = BPF_CORE_READ(tp, snd_una);
	__u32 snd_nxt = BPF_CORE_READ(tp, snd_nxt);
	__u32 rcv_nxt = BPF_CORE_READ(tp, rcv_nxt);
	__u32 ack_seq = BPF_CORE_READ(cb, ack_seq);
	__u32 seq = BPF_CORE_READ(cb, seq);
	__u32 end_seq = BPF_CORE_READ(cb, end_seq);
	__u64 acked = BPF_CORE_READ(tp, bytes_acked);
	__u64 received = BPF_CORE_READ(tp, bytes_received);
	__s32 newly_acked = (__s32)(ack_seq - snd_una);

	if (newly_acked > 0 && (__u32)newly_acked <= snd_nxt - snd_una) {
		acked += (__u32)newly_acked;
		snd_una = ack_seq;
	}
	if (seq == rcv_nxt && (__s32)(end_seq - seq) > 0)
		received += end_seq - seq;
	st->latest.time_ns = now;
	st->latest.bytes_acked = acked;
	st->latest.bytes_received = received;
	st->latest.bytes_sent = ckpt_tcp_bytes_sent(tp);
	st->latest.total_retrans = BPF_CORE_READ(tp, total_retrans);
	st->latest.in_flight = snd_nxt - snd_una;
	st->latest.backlog = BPF_CORE_READ(tp, write_seq) - snd_una;
	st->latest.zero_window_ns =
	    st->zero_window_ns + (st->zero_window_since_ns ? now - st->zero_window_since_ns : 0);
}

static __always_inline struct ckpt_tcp_sock_state *sock_state_get(const struct sock *sk)
{
	__u64 key = (__u64)sk;
	struct ckpt_tcp_sock_state *st = bpf_map_lookup_elem(&sock_states, &key);
	struct ckpt_tcp_sock_state fresh = {};

	if (st)
		return st;
	fresh.latest.sock_cookie = bpf_get_socket_cookie((void *)sk);
	if (bpf_map_update_elem(&sock_states, &key, &fresh, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&sock_states, &key)) {
		count_drop(CKPT_TCP_DROP_SOCK_FULL);
		return NULL;
	}
	return bpf_map_lookup_elem(&sock_states, &key);
}

static __always_inline void emit(const struct sock *sk, __u32 event, int old_state, int new_state,
				 struct ckpt_tcp_sock_state *st, __u64 now)
{
	struct ckpt_tcp_record *rec = bpf_ringbuf_reserve(&tcp_events, sizeof(*rec), 0);

	if (!rec) {
		count_drop(CKPT_TCP_DROP_RINGBUF_FULL);
		return;
	}
	__builtin_memset(rec, 0, sizeof(*rec));
	if (!sock_to_storage(sk, rec)) {
		bpf_ringbuf_discard(rec, 0);
		return;
	}
	rec->event = event;
	rec->old_state = old_state;
	rec->new_state = new_state;
	rec->time_ns = now;
	fill_counters(sk, rec, st, event == CKPT_TCP_SAMPLE);
	bpf_ringbuf_submit(rec, ckpt_wakeup_flags(&tcp_events, wakeup_bytes));
}

static __always_inline bool is_storage(const struct sock *sk)
{
	struct ckpt_tcp_record scratch = {};

	return sock_to_storage(sk, &scratch);
}

SEC("tp_btf/tcp_probe")
int BPF_PROG(on_tcp_probe, struct sock *sk, const struct sk_buff *skb)
{
	__u64 now = bpf_ktime_get_ns();
	struct ckpt_tcp_sock_state *st;
	__u32 snd_wnd;

	if (!is_storage(sk))
		return 0;
	st = sock_state_get(sk);
	if (!st)
		return 0;
	/* Zero-window time: the server advertised no room to send. */
	snd_wnd = BPF_CORE_READ((struct tcp_sock *)sk, snd_wnd);
	if (snd_wnd == 0 && !st->zero_window_since_ns) {
		st->zero_window_since_ns = now;
	} else if (snd_wnd != 0 && st->zero_window_since_ns) {
		st->zero_window_ns += now - st->zero_window_since_ns;
		st->zero_window_since_ns = 0;
	}
	update_latest(sk, skb, st, now);
	if (now - st->last_sample_ns < sample_interval_ns)
		return 0;
	st->last_sample_ns = now;
	emit(sk, CKPT_TCP_SAMPLE, 0, 0, st, now);
	return 0;
}

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(on_inet_sock_set_state, struct sock *sk, int old_state, int new_state)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 key = (__u64)sk;
	struct ckpt_tcp_sock_state *st;

	if (!is_storage(sk))
		return 0;
	st = bpf_map_lookup_elem(&sock_states, &key);
	emit(sk, CKPT_TCP_STATE, old_state, new_state, st, now);
	if (new_state == 7 /* TCP_CLOSE */)
		bpf_map_delete_elem(&sock_states, &key);
	return 0;
}

SEC("tp_btf/tcp_retransmit_skb")
int BPF_PROG(on_tcp_retransmit_skb, struct sock *sk)
{
	__u64 now = bpf_ktime_get_ns();
	struct ckpt_tcp_sock_state *st;

	if (!is_storage(sk))
		return 0;
	st = sock_state_get(sk);
	if (!st)
		return 0;
	/* total_retrans in every record stays exact; thin the events. */
	if (now - st->last_retransmit_ns < retransmit_interval_ns)
		return 0;
	st->last_retransmit_ns = now;
	emit(sk, CKPT_TCP_RETRANSMIT, 0, 0, st, now);
	return 0;
}

SEC("tp_btf/tcp_send_reset")
int BPF_PROG(on_tcp_send_reset, struct sock *sk)
{
	__u64 key = (__u64)sk;

	/* sk may be NULL for resets sent in reply to a packet with no socket. */
	if (!sk || !is_storage(sk))
		return 0;
	emit(sk, CKPT_TCP_RESET_SENT, 0, 0, bpf_map_lookup_elem(&sock_states, &key),
	     bpf_ktime_get_ns());
	return 0;
}

SEC("tp_btf/tcp_receive_reset")
int BPF_PROG(on_tcp_receive_reset, struct sock *sk)
{
	__u64 key = (__u64)sk;

	if (!is_storage(sk))
		return 0;
	emit(sk, CKPT_TCP_RESET_RECV, 0, 0, bpf_map_lookup_elem(&sock_states, &key),
	     bpf_ktime_get_ns());
	return 0;
}
