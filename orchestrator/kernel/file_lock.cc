#include "kernel/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/error.h"

namespace isolab {

FileLock::FileLock(const std::filesystem::path& path,
                   const std::function<void(const std::string&)>& on_wait) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  // O_CLOEXEC: make and git must not inherit (and so extend) our lock.
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error("cannot open lock file " + path.string() + ": " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
  if (errno != EWOULDBLOCK) {
    int e = errno;
    ::close(fd_);
    throw Error("cannot lock " + path.string() + ": " + std::strerror(e));
  }
  if (on_wait) on_wait("waiting for lock " + path.string() + " (another isolab process)");
  while (::flock(fd_, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    int e = errno;
    ::close(fd_);
    throw Error("cannot lock " + path.string() + ": " + std::strerror(e));
  }
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the flock
}

}  // namespace isolab
