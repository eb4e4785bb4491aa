// The BPF and C++ sides share bpf/*.h; this checks that clang -target bpf
// and the host compiler lay the records out identically, by reading the BTF
// of the compiled BPF objects.
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <cstddef>
#include <string>

#include <gtest/gtest.h>

#include "jobio.h"
#include "nfs.h"
#include "tcp.h"

namespace {

struct Field {
  const char* name;
  size_t offset;
};

void expect_layout(const std::string& object, const char* type, size_t size,
                   std::initializer_list<Field> fields) {
  btf* b = btf__parse_elf(object.c_str(), nullptr);
  ASSERT_NE(b, nullptr) << "cannot read BTF from " << object;
  int id = btf__find_by_name_kind(b, type, BTF_KIND_STRUCT);
  ASSERT_GT(id, 0) << type << " not in " << object;
  const btf_type* t = btf__type_by_id(b, static_cast<__u32>(id));
  EXPECT_EQ(t->size, size) << type;
  const btf_member* m = btf_members(t);
  for (const auto& f : fields) {
    bool found = false;
    for (unsigned i = 0; i < btf_vlen(t); ++i) {
      if (std::string(btf__name_by_offset(b, m[i].name_off)) == f.name) {
        found = true;
        EXPECT_EQ(btf_member_bit_offset(t, i) / 8, f.offset) << type << "." << f.name;
      }
    }
    EXPECT_TRUE(found) << type << "." << f.name;
  }
  btf__free(b);
}

const std::string kJobio = std::string(CKPTSCOPE_BPF_DIR) + "/jobio.bpf.o";
const std::string kTcp = std::string(CKPTSCOPE_BPF_DIR) + "/tcp.bpf.o";
const std::string kNfs = std::string(CKPTSCOPE_BPF_DIR) + "/nfs.bpf.o";

TEST(RecordLayoutTest, JobioRecordsMatchTheBpfObject) {
  expect_layout(kJobio, "ckpt_record_header", sizeof(ckpt_record_header),
                {{"kind", offsetof(ckpt_record_header, kind)},
                 {"start_ns", offsetof(ckpt_record_header, start_ns)},
                 {"cpu_ns", offsetof(ckpt_record_header, cpu_ns)}});
  expect_layout(kJobio, "ckpt_io_record", sizeof(ckpt_io_record),
                {{"ret", offsetof(ckpt_io_record, ret)},
                 {"dev", offsetof(ckpt_io_record, dev)},
                 {"ino", offsetof(ckpt_io_record, ino)},
                 {"fd", offsetof(ckpt_io_record, fd)},
                 {"file_type", offsetof(ckpt_io_record, file_type)},
                 {"storage_bytes", offsetof(ckpt_io_record, storage_bytes)},
                 {"dirtied_bytes", offsetof(ckpt_io_record, dirtied_bytes)},
                 {"throttle_ns", offsetof(ckpt_io_record, throttle_ns)}});
  expect_layout(kJobio, "ckpt_storage_busy_record", sizeof(ckpt_storage_busy_record),
                {{"dev", offsetof(ckpt_storage_busy_record, dev)},
                 {"bytes", offsetof(ckpt_storage_busy_record, bytes)},
                 {"bios", offsetof(ckpt_storage_busy_record, bios)}});
  expect_layout(kJobio, "ckpt_path_record", sizeof(ckpt_path_record),
                {{"dirfd2", offsetof(ckpt_path_record, dirfd2)},
                 {"path_len", offsetof(ckpt_path_record, path_len)},
                 {"path", offsetof(ckpt_path_record, path)},
                 {"path2", offsetof(ckpt_path_record, path2)}});
  expect_layout(kJobio, "ckpt_proc_record", sizeof(ckpt_proc_record),
                {{"child_tgid", offsetof(ckpt_proc_record, child_tgid)},
                 {"comm", offsetof(ckpt_proc_record, comm)}});
  expect_layout(kJobio, "ckpt_open_file_record", sizeof(ckpt_open_file_record),
                {{"dev", offsetof(ckpt_open_file_record, dev)},
                 {"ino", offsetof(ckpt_open_file_record, ino)},
                 {"fd", offsetof(ckpt_open_file_record, fd)}});
  expect_layout(kJobio, "ckpt_other_io_record", sizeof(ckpt_other_io_record),
                {{"hdr", offsetof(ckpt_other_io_record, hdr)},
                 {"dev", offsetof(ckpt_other_io_record, dev)},
                 {"ino", offsetof(ckpt_other_io_record, ino)},
                 {"bytes_read", offsetof(ckpt_other_io_record, bytes_read)},
                 {"bytes_written", offsetof(ckpt_other_io_record, bytes_written)},
                 {"read_calls", offsetof(ckpt_other_io_record, read_calls)},
                 {"write_calls", offsetof(ckpt_other_io_record, write_calls)}});
}

TEST(RecordLayoutTest, TcpRecordMatchesTheBpfObject) {
  expect_layout(kTcp, "ckpt_tcp_record", sizeof(ckpt_tcp_record),
                {{"time_ns", offsetof(ckpt_tcp_record, time_ns)},
                 {"raddr", offsetof(ckpt_tcp_record, raddr)},
                 {"bytes_acked", offsetof(ckpt_tcp_record, bytes_acked)},
                 {"total_retrans", offsetof(ckpt_tcp_record, total_retrans)},
                 {"zero_window_ns", offsetof(ckpt_tcp_record, zero_window_ns)},
                 {"write_seq", offsetof(ckpt_tcp_record, write_seq)}});
  expect_layout(kTcp, "ckpt_tcp_sock_state", sizeof(ckpt_tcp_sock_state),
                {{"latest", offsetof(ckpt_tcp_sock_state, latest)}});
  expect_layout(kTcp, "ckpt_tcp_latest", sizeof(ckpt_tcp_latest),
                {{"in_flight", offsetof(ckpt_tcp_latest, in_flight)},
                 {"backlog", offsetof(ckpt_tcp_latest, backlog)}});
  expect_layout(
      kTcp, "ckpt_endpoint_key", sizeof(ckpt_endpoint_key),
      {{"port", offsetof(ckpt_endpoint_key, port)}, {"addr", offsetof(ckpt_endpoint_key, addr)}});
}

TEST(RecordLayoutTest, NfsRecordMatchesTheBpfObject) {
  expect_layout(kNfs, "ckpt_nfs_record", sizeof(ckpt_nfs_record),
                {{"time_ns", offsetof(ckpt_nfs_record, time_ns)},
                 {"task_id", offsetof(ckpt_nfs_record, task_id)},
                 {"dev", offsetof(ckpt_nfs_record, dev)},
                 {"result_count", offsetof(ckpt_nfs_record, result_count)},
                 {"status", offsetof(ckpt_nfs_record, status)},
                 {"xid", offsetof(ckpt_nfs_record, xid)},
                 {"task_pid", offsetof(ckpt_nfs_record, task_pid)},
                 {"ntrans", offsetof(ckpt_nfs_record, ntrans)},
                 {"backlog_ns", offsetof(ckpt_nfs_record, backlog_ns)},
                 {"wait_ns", offsetof(ckpt_nfs_record, wait_ns)},
                 {"family", offsetof(ckpt_nfs_record, family)},
                 {"addr", offsetof(ckpt_nfs_record, addr)},
                 {"proc_name", offsetof(ckpt_nfs_record, proc_name)}});
}

}  // namespace
