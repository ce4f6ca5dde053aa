// Reading one JSON object of a spec: typed fields with defaults and ranges, and the unknown
// fields refused. Every error is an isolab::SpecError carrying the RFC 6901 JSON pointer of the
// field ("/workloads/0/duration_s: value 0 out of range [1, 86400]"). Header-only, so that the
// workload tools (workload/tools/*.cc) read their fields with it without linking the spec area.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/json_text.h"

namespace isolab {

// The pointer of member `key` (escaped as RFC 6901 says) or element `i` under `ptr`.
inline std::string json_child(const std::string& ptr, const std::string& key) {
  return ptr + "/" + json_pointer_token(key);
}
inline std::string json_child(const std::string& ptr, std::size_t i) {
  return ptr + "/" + std::to_string(i);
}

// A JSON object reader that remembers which keys were read, so that finish() can refuse the
// others with their pointer. Throws SpecError when `j` is not an object.
class SpecObject {
 public:
  SpecObject(const nlohmann::json& j, std::string ptr) : j_(j), ptr_(std::move(ptr)) {
    if (!j.is_object())
      throw SpecError(ptr_.empty() ? "/" : ptr_,
                      "expected an object, got " + std::string(j.type_name()));
  }
  bool has(const std::string& k) const { return j_.contains(k); }
  // The member `k` (marked read), nullptr when absent.
  const nlohmann::json* get(const std::string& k) {
    seen_.insert(k);
    auto it = j_.find(k);
    return it == j_.end() ? nullptr : &*it;
  }
  std::string ptr(const std::string& k) const { return json_child(ptr_, k); }
  const std::string& ptr() const { return ptr_; }

  // A string member; `def` when absent.
  std::string str(const std::string& k, std::string def = "") {
    const nlohmann::json* v = get(k);
    if (!v) return def;
    if (!v->is_string())
      throw SpecError(ptr(k), "expected a string, got " + std::string(v->type_name()));
    return v->get<std::string>();
  }
  // An integer member in [lo, hi]; `def` when absent.
  long integer(const std::string& k, long def, long lo, long hi) {
    const nlohmann::json* v = get(k);
    if (!v) return def;
    if (!v->is_number_integer())
      throw SpecError(ptr(k), "expected an integer, got " + std::string(v->type_name()));
    long x = v->get<long>();
    if (x < lo || x > hi)
      throw SpecError(ptr(k), "value " + std::to_string(x) + " out of range [" +
                                  std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return x;
  }
  // A true/false member; `def` when absent.
  bool boolean(const std::string& k, bool def) {
    const nlohmann::json* v = get(k);
    if (!v) return def;
    if (!v->is_boolean())
      throw SpecError(ptr(k), "expected true or false, got " + std::string(v->type_name()));
    return v->get<bool>();
  }
  // An array of strings; empty when absent.
  std::vector<std::string> strings(const std::string& k) {
    std::vector<std::string> out;
    const nlohmann::json* v = get(k);
    if (!v) return out;
    if (!v->is_array()) throw SpecError(ptr(k), "expected an array of strings");
    for (std::size_t i = 0; i < v->size(); ++i) {
      if (!(*v)[i].is_string()) throw SpecError(json_child(ptr(k), i), "expected a string");
      out.push_back((*v)[i].get<std::string>());
    }
    return out;
  }
  // Throws "unknown field" for the first member that was not read.
  void finish() const {
    for (auto it = j_.begin(); it != j_.end(); ++it)
      if (!seen_.count(it.key())) throw SpecError(ptr(it.key()), "unknown field");
  }

 private:
  const nlohmann::json& j_;
  std::string ptr_;
  std::set<std::string> seen_;
};

}  // namespace isolab
