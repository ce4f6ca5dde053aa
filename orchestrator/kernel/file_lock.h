// An exclusive flock(2) on a lock file, held for the object's lifetime. Used so that several
// isolab processes can share one kernel cache (the second waits, then finds the entry).
#pragma once

#include <filesystem>
#include <functional>
#include <string>

namespace isolab {

class FileLock {
 public:
  // Creates the lock file (and its directory) if needed and blocks until the lock is held.
  // If the lock is busy, calls on_wait (when set) once before blocking. Throws isolab::Error
  // naming the path if the file cannot be opened or locked.
  explicit FileLock(const std::filesystem::path& path,
                    const std::function<void(const std::string&)>& on_wait = {});
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace isolab
