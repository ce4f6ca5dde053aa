#include "pipeline/host_cpu_plan.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "base/error.h"
#include "base/files.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace isolab {

CpuSet HostTopology::housekeeping() const {
  CpuSet hk = online - isolated - nohz_full;
  return hk.empty() ? online : hk;
}

namespace {

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

// The file's CPU list, or nullopt when the file does not exist.
std::optional<CpuSet> read_list(const fs::path& p, unsigned nbits) {
  std::error_code ec;
  if (!fs::exists(p, ec)) return std::nullopt;
  const std::string text = trimmed(read_file(p, 1 << 16));
  try {
    return parse_cpulist(text, nbits);
  } catch (const CpuListError& e) {
    throw Error(p.string() + ": " + e.what());
  }
}

// Widens every set to nbits (the topology's width).
HostTopology finish(HostTopology t) {
  t.nbits = t.online.nbits();
  for (CpuSet* s : {&t.online, &t.isolated, &t.nohz_full}) *s = s->resized(t.nbits);
  std::vector<CpuSet> cores;
  CpuSet covered(t.nbits);
  for (const CpuSet& c : t.cores) {
    CpuSet cc = c.resized(t.nbits) & t.online;
    if (cc.empty() || cc.intersects(covered)) continue;
    covered = covered | cc;
    cores.push_back(cc);
  }
  for (unsigned cpu : (t.online - covered).cpus()) cores.push_back(CpuSet::of(t.nbits, {cpu}));
  std::sort(cores.begin(), cores.end(),
            [](const CpuSet& a, const CpuSet& b) { return *a.first() < *b.first(); });
  t.cores = cores;
  std::vector<CpuSet> nodes;
  for (const CpuSet& n : t.nodes)
    if (CpuSet nn = n.resized(t.nbits) & t.online; !nn.empty()) nodes.push_back(nn);
  if (nodes.empty()) nodes.push_back(t.online);
  t.nodes = nodes;
  return t;
}

}  // namespace

HostTopology read_host_topology(const fs::path& root) {
  const fs::path cpu = root / "devices/system/cpu";
  HostTopology t;
  std::optional<CpuSet> online = read_list(cpu / "online", kMaxCpus);
  if (!online) throw Error((cpu / "online").string() + ": missing");
  const unsigned nbits = online->last() ? *online->last() + 1 : 1;
  t.online = online->resized(nbits);
  t.isolated = read_list(cpu / "isolated", nbits).value_or(CpuSet(nbits));
  t.nohz_full = read_list(cpu / "nohz_full", nbits).value_or(CpuSet(nbits));
  for (unsigned c : t.online.cpus())
    if (auto s =
            read_list(cpu / ("cpu" + std::to_string(c)) / "topology/thread_siblings_list", nbits))
      t.cores.push_back(*s);
  std::error_code ec;
  for (unsigned n = 0; n < 1024; ++n) {
    const fs::path f = root / "devices/system/node" / ("node" + std::to_string(n)) / "cpulist";
    if (!fs::exists(f, ec)) {
      if (n > 0 && !fs::exists(f.parent_path(), ec)) break;
      continue;
    }
    t.nodes.push_back(read_list(f, nbits).value_or(CpuSet(nbits)));
  }
  return finish(std::move(t));
}

HostTopology make_host_topology(const std::string& online, const std::vector<std::string>& cores,
                                const std::vector<std::string>& nodes, const std::string& isolated,
                                const std::string& nohz_full) {
  HostTopology t;
  CpuSet on = parse_cpulist(online, kMaxCpus);
  const unsigned nbits = on.last() ? *on.last() + 1 : 1;
  t.online = on.resized(nbits);
  t.isolated = parse_cpulist(isolated, nbits);
  t.nohz_full = parse_cpulist(nohz_full, nbits);
  for (const auto& c : cores) t.cores.push_back(parse_cpulist(c, nbits));
  for (const auto& n : nodes) t.nodes.push_back(parse_cpulist(n, nbits));
  return finish(std::move(t));
}

GuestCpuNeeds guest_cpu_needs(const Spec& spec, const GuestDerivation& guest, int parallel) {
  GuestCpuNeeds n;
  n.vcpus = guest.vcpus;
  n.isolated_vcpus = guest.partition.isolated.resized(static_cast<unsigned>(guest.vcpus));
  n.overcommit = spec.overcommit;
  n.parallel = parallel >= 0 ? parallel : spec.parallel;
  return n;
}

namespace {

// Allocation state over the whole host while slots are planned one after another.
struct Planner {
  const HostTopology& host;
  const GuestCpuNeeds& needs;
  CpuSet hk, iso;         // host housekeeping / isolated CPUs
  std::vector<int> core;  // cpu -> index into host.cores
  CpuSet free;            // not yet given to any slot

  Planner(const HostTopology& h, const GuestCpuNeeds& n)
      : host(h),
        needs(n),
        hk(h.housekeeping()),
        iso(h.online - h.housekeeping()),
        core(h.nbits, -1),
        free(h.online) {
    for (std::size_t i = 0; i < h.cores.size(); ++i)
      for (unsigned c : h.cores[i].cpus()) core[c] = static_cast<int>(i);
  }

  // An isolated vCPU's CPU: the first CPU of `pool` whose whole core is in `avail`, cores
  // entirely inside `pool` first.
  std::optional<unsigned> whole_core(const CpuSet& pool, const CpuSet& avail) const {
    for (bool inside : {true, false})
      for (unsigned c : pool.cpus()) {
        const CpuSet& k = host.cores[core[c]];
        if (k.subset_of(avail) && (!inside || k.subset_of(pool))) return c;
      }
    return std::nullopt;
  }

  // One slot's vCPUs within `within`, keeping `reserve` housekeeping CPUs of the whole host
  // free of vCPUs.
  std::optional<SlotPlan> fit(const CpuSet& within, unsigned reserve) const {
    CpuSet taken(host.nbits);  // this slot's vCPU CPUs and idle siblings
    SlotPlan s;
    s.vcpu_cpus.assign(needs.vcpus, CpuSet(host.nbits));
    s.reserved = CpuSet(host.nbits);
    auto avail = [&] { return (free & within) - taken; };
    auto hk_left = [&] { return ((free - taken) & hk).count(); };
    // Isolated vCPUs: host isolated CPUs when the host has any, else housekeeping ones.
    for (int v = 0; v < needs.vcpus; ++v) {
      if (!needs.isolated_vcpus.test(static_cast<unsigned>(v))) continue;
      const CpuSet a = avail();
      auto c = whole_core(iso.empty() ? a & hk : a & iso, a);
      if (!c) return std::nullopt;
      const CpuSet& k = host.cores[core[*c]];
      if (iso.empty() && hk_left() < reserve + k.count()) return std::nullopt;
      s.vcpu_cpus[v].set(*c);
      s.reserved = s.reserved | (k - CpuSet::of(host.nbits, {*c}));
      taken = taken | k;
    }
    // The other vCPUs: remaining isolated CPUs first, then housekeeping ones from the top
    // (CPU 0 and its neighbours stay with the host).
    for (int v = 0; v < needs.vcpus; ++v) {
      if (needs.isolated_vcpus.test(static_cast<unsigned>(v))) continue;
      std::optional<unsigned> c = (avail() & iso).first();
      if (!c && hk_left() > reserve) c = (avail() & hk).last();
      if (!c) return std::nullopt;
      s.vcpu_cpus[v].set(*c);
      taken.set(*c);
    }
    return s;
  }

  // Up to `want` slots (0: as many as fit), each within one NUMA node when possible.
  std::vector<SlotPlan> fill(int want, unsigned reserve) {
    std::vector<SlotPlan> out;
    while (want == 0 || static_cast<int>(out.size()) < want) {
      std::optional<SlotPlan> s;
      for (std::size_t n = 0; n < host.nodes.size() && !s; ++n)
        if ((s = fit(host.nodes[n], reserve))) s->node = static_cast<int>(n);
      if (!s && host.nodes.size() > 1) s = fit(host.online, reserve);
      if (!s) break;
      for (const CpuSet& c : s->vcpu_cpus) free = free - c;
      free = free - s->reserved;
      s->index = static_cast<int>(out.size());
      out.push_back(std::move(*s));
    }
    return out;
  }

  // Emulator CPUs: the housekeeping CPUs no vCPU holds, on the slot's node when it has some.
  bool place_emulators(std::vector<SlotPlan>& slots) const {
    const CpuSet left = free & hk;
    for (SlotPlan& s : slots) {
      CpuSet on_node = s.node >= 0 ? left & host.nodes[s.node] : CpuSet(host.nbits);
      s.emulator_cpus = !on_node.empty() ? on_node : !left.empty() ? left : hk;
    }
    return left.empty();
  }
};

std::string counts(const HostTopology& h) {
  const CpuSet hk = h.housekeeping();
  return std::to_string(h.online.count()) + " online CPUs (" +
         std::to_string((h.online - hk).count()) + " isolated, " + std::to_string(hk.count()) +
         " housekeeping, " + std::to_string(h.cores.size()) + " cores, " +
         std::to_string(h.nodes.size()) + " NUMA nodes)";
}

std::string needs_text(const GuestCpuNeeds& n) {
  return std::to_string(n.vcpus) + " vCPUs (" + std::to_string(n.isolated_vcpus.count()) +
         " isolated)";
}

}  // namespace

HostPlan plan_host(const HostTopology& host, const GuestCpuNeeds& needs) {
  HostPlan p;
  const unsigned strict_reserve = host.housekeeping().count() > 1 ? 1 : 0;
  const int strict = static_cast<int>(Planner(host, needs).fill(0, strict_reserve).size());
  const int loose = static_cast<int>(Planner(host, needs).fill(0, 0).size());
  p.fits_dedicated = loose;
  const int want = needs.parallel > 0 ? needs.parallel : std::max(1, strict);
  if (want <= loose) {
    Planner pl(host, needs);
    p.slots = pl.fill(want, want <= strict ? strict_reserve : 0);
    p.emulator_shared = pl.place_emulators(p.slots);
    if (p.emulator_shared)
      p.notes.emplace_back(
          "no housekeeping CPU is left free of vCPUs: QEMU's main loop and I/O "
          "threads share the vCPUs' CPUs");
    p.ok = true;
    return p;
  }
  if (!needs.overcommit) {
    p.error =
        "the guest needs " + needs_text(needs) + " on dedicated host CPUs; this host has " +
        counts(host) + ": " + std::to_string(loose) + " such guest" + (loose == 1 ? "" : "s") +
        " fit at once" +
        (needs.parallel > 0 ? ", " + std::to_string(needs.parallel) + " asked (parallel)" : "") +
        "; set \"overcommit\": true in the spec to run with shared CPUs" +
        (loose > 0 ? " or ask for at most " + std::to_string(loose) + " in parallel" : "");
    return p;
  }
  p.ok = p.overcommitted = true;
  for (int i = 0; i < want; ++i) {
    SlotPlan s;
    s.index = i;
    s.vcpu_cpus.assign(needs.vcpus, host.online);
    s.emulator_cpus = host.online;
    s.reserved = CpuSet(host.nbits);
    p.slots.push_back(std::move(s));
  }
  p.emulator_shared = true;
  p.notes.push_back("overcommitted: " + std::to_string(want) + " guest(s) of " + needs_text(needs) +
                    " share " + counts(host) + "; " + std::to_string(loose) +
                    " would fit with dedicated CPUs");
  return p;
}

json to_json(const HostPlan& p) {
  json slots = json::array();
  for (const SlotPlan& s : p.slots) {
    json v = json::array();
    for (const CpuSet& c : s.vcpu_cpus) v.push_back(c.to_list());
    slots.push_back({{"index", s.index},
                     {"vcpus", v},
                     {"emulator", s.emulator_cpus.to_list()},
                     {"reserved", s.reserved.to_list()},
                     {"node", s.node}});
  }
  json j = {{"ok", p.ok},
            {"overcommitted", p.overcommitted},
            {"emulator_shared", p.emulator_shared},
            {"fits_dedicated", p.fits_dedicated},
            {"slots", slots},
            {"notes", p.notes}};
  if (!p.ok) j["error"] = p.error;
  return j;
}

json to_json(const HostTopology& t) {
  json cores = json::array(), nodes = json::array();
  for (const CpuSet& c : t.cores) cores.push_back(c.to_list());
  for (const CpuSet& n : t.nodes) nodes.push_back(n.to_list());
  return {{"online", t.online.to_list()},
          {"isolated", t.isolated.to_list()},
          {"nohz_full", t.nohz_full.to_list()},
          {"housekeeping", t.housekeeping().to_list()},
          {"cores", cores},
          {"nodes", nodes}};
}

std::string host_plan_text(const HostTopology& t, const GuestCpuNeeds& n, const HostPlan& p) {
  std::ostringstream o;
  o << "host: " << counts(t) << ": online " << t.online.to_list() << ", isolated '"
    << (t.online - t.housekeeping()).to_list() << "', housekeeping " << t.housekeeping().to_list()
    << "\n";
  o << "guest: " << needs_text(n) << ", overcommit " << (n.overcommit ? "allowed" : "refused")
    << ", parallel " << (n.parallel > 0 ? std::to_string(n.parallel) : "auto") << "\n";
  if (!p.ok) {
    o << "REFUSED  " << p.error << "\n";
    return o.str();
  }
  o << "plan: " << p.slots.size() << " guest(s) at once"
    << (p.overcommitted ? ", OVERCOMMITTED" : "") << "; " << p.fits_dedicated
    << " fit with dedicated CPUs\n";
  for (const SlotPlan& s : p.slots) {
    o << "  slot " << s.index << ": vCPU->host CPU";
    for (std::size_t v = 0; v < s.vcpu_cpus.size(); ++v)
      o << " " << v << ":" << s.vcpu_cpus[v].to_list();
    o << "; emulator " << s.emulator_cpus.to_list();
    if (!s.reserved.empty()) o << "; idle siblings " << s.reserved.to_list();
    if (s.node >= 0) o << "; node " << s.node;
    o << "\n";
  }
  for (const auto& note : p.notes) o << "  note: " << note << "\n";
  return o.str();
}

}  // namespace isolab
