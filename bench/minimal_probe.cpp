// minimal_probe [--empty|--task-storage|--clock] [--fentry] -- CMD [ARGS...]: runs CMD with
// minimal_probe.bpf.c attached (one fexit on vfs_write and vfs_read: a verdict
// lookup and a per-inode byte counter, for every process), then prints the
// bytes it counted as JSON on stderr and exits with CMD's status. The
// reference floor of bench/vm/filelayer-overhead.sh: what a file-layer probe
// costs at the least. --empty: the programs do nothing (the trampoline's own
// cost); --task-storage, --clock: they only look up the task's storage or
// read the clock (one helper's cost); --fentry: an empty fentry beside each
// fexit (a second program's).
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "minimal_probe.h"
#include "minimal_probe.skel.h"

namespace {

uint64_t counted_bytes(const minimal_probe_bpf* skel) {
  const int fd = bpf_map__fd(skel->maps.bytes_by_inode);
  minimal_probe_key key{};
  minimal_probe_key next{};
  const void* prev = nullptr;
  uint64_t total = 0;
  while (bpf_map_get_next_key(fd, prev, &next) == 0) {
    uint64_t bytes = 0;
    if (bpf_map_lookup_elem(fd, &next, &bytes) == 0) total += bytes;
    key = next;
    prev = &key;
  }
  return total;
}

int run(char** argv) {
  const pid_t child = fork();
  if (child < 0) {
    std::fprintf(stderr, "minimal_probe: fork: %s\n", std::strerror(errno));
    return 1;
  }
  if (child == 0) {
    execvp(argv[0], argv);
    std::fprintf(stderr, "minimal_probe: %s: %s\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0)
    if (errno != EINTR) return 1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + WTERMSIG(status);
}

}  // namespace

int main(int argc, char** argv) {
  uint32_t work = MINIMAL_PROBE_COUNT;
  bool fentry = false;
  int i = 1;
  for (; i < argc && std::strcmp(argv[i], "--") != 0; ++i) {
    if (std::strcmp(argv[i], "--empty") == 0) {
      work = MINIMAL_PROBE_EMPTY;
    } else if (std::strcmp(argv[i], "--task-storage") == 0) {
      work = MINIMAL_PROBE_TASK_STORAGE;
    } else if (std::strcmp(argv[i], "--clock") == 0) {
      work = MINIMAL_PROBE_CLOCK;
    } else if (std::strcmp(argv[i], "--fentry") == 0) {
      fentry = true;
    } else {
      std::fprintf(stderr, "minimal_probe: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (i + 1 >= argc) {
    std::fprintf(
        stderr,
        "usage: minimal_probe [--empty|--task-storage|--clock] [--fentry] -- CMD [ARGS...]\n");
    return 2;
  }
  minimal_probe_bpf* skel = minimal_probe_bpf__open();
  if (!skel) {
    std::fprintf(stderr, "minimal_probe: opening the programs failed: %s\n", std::strerror(errno));
    return 1;
  }
  skel->rodata->work = work;
  bpf_program__set_autoload(skel->progs.minimal_write_entry, fentry);
  bpf_program__set_autoload(skel->progs.minimal_read_entry, fentry);
  if (const int err = minimal_probe_bpf__load(skel); err != 0) {
    std::fprintf(stderr, "minimal_probe: loading the programs failed: %s\n", std::strerror(-err));
    minimal_probe_bpf__destroy(skel);
    return 1;
  }
  if (const int err = minimal_probe_bpf__attach(skel); err != 0) {
    std::fprintf(stderr, "minimal_probe: attaching fexit programs failed: %s\n",
                 std::strerror(-err));
    minimal_probe_bpf__destroy(skel);
    return 1;
  }
  const int rc = run(argv + i + 1);
  std::fprintf(stderr, "{\"minimal_probe_bytes\": %llu}\n",
               static_cast<unsigned long long>(counted_bytes(skel)));
  minimal_probe_bpf__destroy(skel);
  return rc;
}
