// Error types shared by every area. Header-only.
//
// Contract: a failure that ends the current command is thrown as isolab::Error (or a subclass)
// with a message that names what was wrong and where; main() catches it and exits with status 2.
// Failures that belong to one cell of a run (a guest that panicked, a workload that crashed) are
// not exceptions: they are recorded as that cell's status so that nothing measured is lost.
#pragma once

#include <stdexcept>
#include <string>

namespace isolab {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A bad field in a spec or other JSON input. pointer() is the RFC 6901 JSON pointer of the
// offending field ("/variants/1/patches/0"); what() is "<pointer>: <message>".
class SpecError : public Error {
 public:
  SpecError(std::string pointer, const std::string& message)
      : Error(pointer + ": " + message), pointer_(std::move(pointer)) {}
  const std::string& pointer() const { return pointer_; }

 private:
  std::string pointer_;
};

}  // namespace isolab
