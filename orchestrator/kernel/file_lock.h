// An exclusive flock(2) on a lock file, held for the object's lifetime. Used so that several
// isolab processes can share one kernel cache (the second waits, then finds the entry).
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>

namespace isolab {

class FileLock {
 public:
  // Creates the lock file (and its directory) if needed and blocks until the lock is held.
  // If the lock is busy, calls on_wait (when set) once before blocking. Throws isolab::Error
  // naming the path if the file cannot be opened or locked, or when a signal arrives while
  // waiting after install_interrupt_handlers() (sys/process.h).
  explicit FileLock(const std::filesystem::path& path,
                    const std::function<void(const std::string&)>& on_wait = {});
  enum class Mode { exclusive, shared };
  // As above in the given mode: shared locks coexist (kernel entries in use by runs), an
  // exclusive one excludes every other lock on the file.
  FileLock(const std::filesystem::path& path, Mode mode,
           const std::function<void(const std::string&)>& on_wait = {});
  // Takes the lock only if it is free right now: nullptr when another process (or another
  // open file description) holds a conflicting lock. Throws like the constructor otherwise.
  static std::unique_ptr<FileLock> try_lock(const std::filesystem::path& path,
                                            Mode mode = Mode::exclusive);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  FileLock() = default;
  // Opens the lock file; then flock(LOCK_NB); true when held.
  bool open_and_try(const std::filesystem::path& path, Mode mode);
  int fd_ = -1;
};

}  // namespace isolab
