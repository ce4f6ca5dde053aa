#include "machine/irqs.h"

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/files.h"
#include "base/text.h"
#include "machine/decimal.h"

namespace isolab {

namespace {

// "49153-edge", "1-fasteoi": the hardware IRQ and its trigger.
bool is_hwirq(std::string_view w) {
  const size_t dash = w.find('-');
  return dash != std::string_view::npos && small_decimal(w.substr(0, dash)).has_value();
}

}  // namespace

std::map<unsigned, std::string> parse_interrupt_names(std::string_view text,
                                                      const std::string& file) {
  const auto lines = text_lines(text);
  std::map<unsigned, std::string> names;
  if (lines.empty()) return names;
  const size_t ncpu = split_space(lines.front()).size();
  for (size_t i = 1; i < lines.size(); ++i) {
    const auto w = split_space(lines[i]);
    if (w.empty() || w[0].back() != ':' || !small_decimal(w[0].substr(0, w[0].size() - 1)))
      continue;  // NMI:, LOC:, ERR: and the other per-CPU rows have no affinity
    if (w.size() < 1 + ncpu)
      throw Error(file + ":" + std::to_string(i + 1) + ": IRQ " + std::string(w[0]) + " has " +
                  std::to_string(w.size() - 1) + " columns, fewer than the " +
                  std::to_string(ncpu) + " CPUs of the header");
    size_t k = 1 + ncpu + 1;  // past the counts and the chip name
    if (k < w.size() && is_hwirq(w[k])) ++k;
    std::string name;
    for (; k < w.size(); ++k) name += (name.empty() ? "" : " ") + std::string(w[k]);
    names[*small_decimal(w[0].substr(0, w[0].size() - 1))] = name;
  }
  return names;
}

std::vector<IsolationEvidence::Irq> parse_irq_affinities_json(std::string_view text,
                                                              const std::string& file) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(file + ": not JSON: " + e.what());
  }
  if (!j.is_array()) throw Error(file + ": expected a JSON array of IRQs");
  std::vector<IsolationEvidence::Irq> out;
  for (size_t i = 0; i < j.size(); ++i) {
    const nlohmann::json& e = j[i];
    const std::string at = file + ": element " + std::to_string(i);
    if (!e.is_object() || !e.contains("irq") || !e["irq"].is_number_unsigned() ||
        !e.contains("affinity") || !e["affinity"].is_array())
      throw Error(at + ": expected {\"irq\": N, \"source\": NAME, \"affinity\": [CPU, ...]}");
    IsolationEvidence::Irq irq{e["irq"].get<unsigned>(), "", CpuSet(kMaxCpus), std::nullopt};
    if (e.contains("source") && e["source"].is_string()) irq.name = e["source"];
    for (const auto& c : e["affinity"]) {
      if (!c.is_number_unsigned() || c.get<unsigned long>() >= kMaxCpus)
        throw Error(at + ": affinity holds " + sanitize_excerpt(c.dump(), 40) + ", not a CPU");
      irq.affinity.set(c.get<unsigned>());
    }
    out.push_back(std::move(irq));
  }
  return out;
}

}  // namespace isolab
