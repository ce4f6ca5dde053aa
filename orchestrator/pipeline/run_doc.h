// The run's document (RUN_DIR/result.json) as a run changes it: saved atomically after every
// change; the slots' threads add their cells at once. Header-only.
#pragma once

#include <filesystem>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "base/files.h"
#include "base/json_text.h"
#include "results/result.h"

namespace isolab {

// The run's document, saved atomically after every change.
class RunDoc {
  using json = nlohmann::json;
  using path = std::filesystem::path;

 public:
  RunDoc(path dir, json doc) : dir_(std::move(dir)), doc_(std::move(doc)) {}
  json& doc() { return doc_; }
  // Through the one result.json writer (results/result.h), which also checks the document.
  void save() { results::write_result(dir_ / "result.json", results::result_from_json(doc_), 2); }
  const path& dir() const { return dir_; }
  bool cell_done(const std::string& id) const {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& c : doc_["cells"])
      if (c.value("id", "") == id) return true;
    return false;
  }
  // cell_done, except for a cell recorded as failed for want of a host (host_lost): a --resume
  // runs it again.
  bool cell_measured(const std::string& id) const {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& c : doc_["cells"])
      if (c.value("id", "") == id) return c.value("failure_class", json()) != "host_lost";
    return false;
  }
  // Removes the cell with this id from "cells" and returns it (null when absent); not saved.
  json take_cell(const std::string& id) {
    std::lock_guard<std::mutex> lock(mu_);
    auto& cells = doc_["cells"];
    for (auto it = cells.begin(); it != cells.end(); ++it)
      if (it->value("id", "") == id) {
        json c = *it;
        cells.erase(it);
        return c;
      }
    return nullptr;
  }
  // Thread-safe: changes the document with f and saves it.
  void edit(const std::function<void(json&)>& f) {
    std::lock_guard<std::mutex> lock(mu_);
    f(doc_);
    save();
  }
  // Thread-safe: slots add their cells concurrently.
  void add_cell(json cell) {
    std::lock_guard<std::mutex> lock(mu_);
    auto& cells = doc_["cells"];
    for (auto& c : cells)
      if (c.value("id", "") == cell.value("id", "")) {
        c = std::move(cell);
        save();
        return;
      }
    cells.push_back(std::move(cell));
    save();
  }

 private:
  path dir_;
  json doc_;
  mutable std::mutex mu_;
};

}  // namespace isolab
