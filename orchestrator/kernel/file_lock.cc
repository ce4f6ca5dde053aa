#include "kernel/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/error.h"
#include "sys/process.h"

namespace isolab {

namespace {
int flock_op(FileLock::Mode mode) { return mode == FileLock::Mode::shared ? LOCK_SH : LOCK_EX; }
}  // namespace

bool FileLock::open_and_try(const std::filesystem::path& path, Mode mode) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  // O_CLOEXEC: make and git must not inherit (and so extend) our lock.
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error("cannot open lock file " + path.string() + ": " + std::strerror(errno));
  if (::flock(fd_, flock_op(mode) | LOCK_NB) == 0) return true;
  if (errno != EWOULDBLOCK) {
    int e = errno;
    ::close(fd_);
    fd_ = -1;
    throw Error("cannot lock " + path.string() + ": " + std::strerror(e));
  }
  return false;
}

FileLock::FileLock(const std::filesystem::path& path,
                   const std::function<void(const std::string&)>& on_wait)
    : FileLock(path, Mode::exclusive, on_wait) {}

FileLock::FileLock(const std::filesystem::path& path, Mode mode,
                   const std::function<void(const std::string&)>& on_wait) {
  if (open_and_try(path, mode)) return;
  if (on_wait) on_wait("waiting for lock " + path.string() + " (another isolab process)");
  while (::flock(fd_, flock_op(mode)) != 0) {
    if (errno == EINTR && !interrupt_requested()) continue;
    if (errno == EINTR) {
      ::close(fd_);
      fd_ = -1;
      throw Error("interrupted while waiting for lock " + path.string());
    }
    int e = errno;
    ::close(fd_);
    fd_ = -1;
    throw Error("cannot lock " + path.string() + ": " + std::strerror(e));
  }
}

std::unique_ptr<FileLock> FileLock::try_lock(const std::filesystem::path& path, Mode mode) {
  std::unique_ptr<FileLock> l(new FileLock());
  if (l->open_and_try(path, mode)) return l;
  return nullptr;  // the destructor closes the descriptor
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the flock
}

}  // namespace isolab
