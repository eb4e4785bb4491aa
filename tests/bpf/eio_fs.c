/*
 * A FUSE file system whose checkpoint fails with EIO, for the real-kernel
 * tests: /checkpoint-1/shard-0.pt is 1 MiB; reads of its first 64 KiB
 * succeed, reads past that and every write return EIO, as a dying disk or a
 * lost NFS server would. (This kernel has no device-mapper or fault
 * injection to make a block device fail.)
 */
#define FUSE_USE_VERSION 31
#include <errno.h>
#include <fuse.h>
#include <string.h>
#include <sys/stat.h>

static const char* kDir = "/checkpoint-1";
static const char* kFile = "/checkpoint-1/shard-0.pt";
static const off_t kSize = 1 << 20;
static const off_t kGood = 64 << 10;

static int eio_getattr(const char* path, struct stat* st, struct fuse_file_info* fi) {
  (void)fi;
  memset(st, 0, sizeof(*st));
  if (strcmp(path, "/") == 0 || strcmp(path, kDir) == 0) {
    st->st_mode = S_IFDIR | 0755;
    st->st_nlink = 2;
    return 0;
  }
  if (strcmp(path, kFile) == 0) {
    st->st_mode = S_IFREG | 0644;
    st->st_nlink = 1;
    st->st_size = kSize;
    return 0;
  }
  return -ENOENT;
}

static int eio_readdir(const char* path, void* buf, fuse_fill_dir_t fill, off_t off,
                       struct fuse_file_info* fi, enum fuse_readdir_flags flags) {
  (void)off;
  (void)fi;
  (void)flags;
  fill(buf, ".", NULL, 0, 0);
  fill(buf, "..", NULL, 0, 0);
  if (strcmp(path, "/") == 0)
    fill(buf, "checkpoint-1", NULL, 0, 0);
  else if (strcmp(path, kDir) == 0)
    fill(buf, "shard-0.pt", NULL, 0, 0);
  else
    return -ENOENT;
  return 0;
}

static int eio_open(const char* path, struct fuse_file_info* fi) {
  if (strcmp(path, kFile) != 0) return -ENOENT;
  fi->direct_io = 1; /* every read reaches us: no page cache hides the error */
  return 0;
}

static int eio_read(const char* path, char* buf, size_t size, off_t off,
                    struct fuse_file_info* fi) {
  (void)fi;
  if (strcmp(path, kFile) != 0) return -ENOENT;
  if (off >= kGood) return -EIO;
  if (off + (off_t)size > kGood) size = (size_t)(kGood - off);
  memset(buf, 'c', size);
  return (int)size;
}

static int eio_write(const char* path, const char* buf, size_t size, off_t off,
                     struct fuse_file_info* fi) {
  (void)path;
  (void)buf;
  (void)size;
  (void)off;
  (void)fi;
  return -EIO;
}

static const struct fuse_operations kOps = {
    .getattr = eio_getattr,
    .readdir = eio_readdir,
    .open = eio_open,
    .read = eio_read,
    .write = eio_write,
};

int main(int argc, char* argv[]) { return fuse_main(argc, argv, &kOps, NULL); }
