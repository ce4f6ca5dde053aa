#include "pipeline/multi_host.h"

#include <algorithm>
#include <mutex>

#include "base/error.h"
#include "base/random_token.h"
#include "base/utc_time.h"
#include "pipeline/placement.h"
#include "results/result.h"
#include "results/run_facts.h"
#include "sys/process.h"

namespace isolab {

using nlohmann::json;

namespace {

// Connects one host; one that cannot be reached is recorded with its error, not thrown.
HostConn connect_host(const HostSpec& hs, const RunOptions& opt) {
  HostConn h;
  h.spec = hs;
  try {
    h.host = std::make_unique<LibvirtHost>(LibvirtHostSpec{hs.uri, hs.pool_dir});
    h.backend = std::make_unique<LibvirtHostBackend>(*h.host);
    const HostFingerprint& fp = h.host->fingerprint();
    h.info = to_json(fp);
    h.info["pool_dir"] = h.host->pool_dir();
    h.usable = true;
    if (opt.progress)
      opt.progress("host " + hs.uri + ": " + fp.hostname + ", " + fp.cpu_model + ", libvirt " +
                   fp.libvirt_version + ", " + fp.hypervisor + " " + fp.hypervisor_version);
  } catch (const Error& e) {
    h.info = {{"uri", hs.uri}, {"error", e.what()}};
    if (opt.progress) opt.progress("host " + hs.uri + ": unusable: " + e.what());
  }
  return h;
}

// Every host, connected; throws isolab::Error when none can be reached.
std::vector<HostConn> connect_hosts(const std::vector<HostSpec>& specs, const RunOptions& opt) {
  std::vector<HostConn> hosts;
  for (const auto& hs : specs) hosts.push_back(connect_host(hs, opt));
  if (std::none_of(hosts.begin(), hosts.end(), [](const HostConn& h) { return h.usable; }))
    throw Error("no libvirt host is reachable: " + hosts.front().info.value("error", ""));
  return hosts;
}

// The blocks of a multi-host run and where they go; shared by the hosts' threads, guarded by
// mu (run_on_slots calls the pick under its own lock, lose_host takes mu).
struct BlockPlan {
  std::vector<CellBlock> blocks;
  std::vector<std::size_t> where;  // host index per block, or kNoHost
  std::vector<bool> done;
  std::vector<bool> usable;  // per host
  std::string last_loss;     // what the last lost host said
  std::mutex mu;
};

json placement_json(const BlockPlan& bp, const std::vector<HostConn>& hosts) {
  json p = json::array();
  for (std::size_t b = 0; b < bp.blocks.size(); ++b)
    p.push_back(
        {{"block", bp.blocks[b].key},
         {"host", bp.where[b] == kNoHost ? json(nullptr) : json(hosts[bp.where[b]].spec.uri)}});
  return p;
}

// --resume: a block with cells recorded on a host that is usable now stays on that host, so
// that a block is never split across hosts.
void keep_resumed_blocks_on_their_host(RunDoc& doc, const std::vector<HostConn>& hosts,
                                       BlockPlan& bp) {
  for (const results::CellLabel& c : results::cell_labels(doc.doc())) {
    for (std::size_t b = 0; b < bp.blocks.size(); ++b)
      for (std::size_t h = 0; h < hosts.size(); ++h)
        if (bp.blocks[b].key == c.block && hosts[h].usable && hosts[h].spec.uri == c.host_uri)
          bp.where[b] = h;
  }
}

// The first placement: round robin over the usable hosts, resumed blocks kept in place.
void place(BlockPlan& bp, const Spec& spec, RunDoc& doc, const std::vector<HostConn>& hosts) {
  bp.blocks = group_blocks(plan_cells(spec, spec.boot_order_seed));
  bp.done.assign(bp.blocks.size(), false);
  for (const auto& h : hosts) bp.usable.push_back(h.usable);
  bp.where = place_blocks(bp.blocks.size(), bp.usable);
  keep_resumed_blocks_on_their_host(doc, hosts, bp);
  doc.edit([&](json& d) { d["placement"] = placement_json(bp, hosts); });
}

// Runs one block's cells not yet measured on the host's slot; throws LibvirtHostLost.
void run_block(RunDoc& doc, const HostCells& cells, const Slot& slot, const HostConn& host,
               const CellBlock& block) {
  for (const auto& cell : block.cells) {
    if (doc.cell_measured(cell.id)) continue;
    json cj = cells.measure(slot, cell);
    cj["host"] = host.info;
    cj["block"] = block.key;
    cells.report(cj);
    doc.add_cell(cj);
    cells.show();
  }
}

// The host h of block b was lost: the host is marked, the block's finished cells move to
// "superseded_cells", and the unfinished blocks are re-planned onto the remaining hosts.
void lose_host(RunDoc& doc, BlockPlan& bp, std::vector<HostConn>& hosts, std::size_t h,
               std::size_t b, const LibvirtHostLost& e, const RunOptions& opt) {
  std::lock_guard<std::mutex> lock(bp.mu);
  HostConn& host = hosts[h];
  bp.last_loss = e.what();
  host.usable = false;
  host.info["lost"] = e.what();
  host.info["lost_at"] = utc_now();
  bp.usable[h] = false;
  bp.where = replan_blocks(bp.where, bp.done, bp.usable);
  std::vector<json> superseded;
  for (const auto& cell : bp.blocks[b].cells)
    if (json c = doc.take_cell(cell.id); !c.is_null()) {
      c["superseded_reason"] = e.what();
      superseded.push_back(std::move(c));
    }
  doc.edit([&](json& d) {
    d["hosts"][h] = host.info;
    for (auto& c : superseded) d["superseded_cells"].push_back(std::move(c));
    d["placement"] = placement_json(bp, hosts);
  });
  if (opt.progress)
    opt.progress(std::string(e.what()) + "; block " + bp.blocks[b].key + " moves to " +
                 (bp.where[b] == kNoHost ? "no host" : hosts[bp.where[b]].spec.uri));
}

// One slot per usable host: the host's backend, no CPUs of this machine (no pinning).
std::vector<Slot> host_slots(const std::vector<HostConn>& hosts) {
  std::vector<Slot> slots;
  for (std::size_t h = 0; h < hosts.size(); ++h)
    if (hosts[h].usable)
      slots.push_back(
          {static_cast<int>(h), hosts[h].spec.uri, SlotPlan{}, false, hosts[h].backend.get()});
  return slots;
}

// All hosts at once, each host's slot taking only the blocks placed on it (block affinity),
// until no block is left for a usable host's slot. A lost host's block is re-planned (its new
// host runs it in the next round).
void run_blocks_round(RunDoc& doc, const RunOptions& opt, const HostCells& cells,
                      std::vector<HostConn>& hosts, BlockPlan& bp) {
  std::vector<Slot> slots = host_slots(hosts);
  auto pick = [&](const std::vector<std::size_t>& pending, const Slot& slot) {
    std::lock_guard<std::mutex> lock(bp.mu);
    for (std::size_t k = 0; k < pending.size(); ++k)
      if (!bp.done[pending[k]] && bp.where[pending[k]] == static_cast<std::size_t>(slot.index))
        return static_cast<int>(k);
    return -1;
  };
  auto work = [&](Slot& slot, std::size_t b) {
    const auto h = static_cast<std::size_t>(slot.index);
    try {
      run_block(doc, cells, slot, hosts[h], bp.blocks[b]);
      std::lock_guard<std::mutex> lock(bp.mu);
      bp.done[b] = true;
    } catch (const LibvirtHostLost& e) {
      lose_host(doc, bp, hosts, h, b, e, opt);
    }
  };
  run_on_slots(bp.blocks.size(), slots, pick, work, [] { return interrupt_requested(); });
}

// True while a block that is not done sits on a (usable) host.
bool blocks_left(const BlockPlan& bp) {
  for (std::size_t b = 0; b < bp.blocks.size(); ++b)
    if (!bp.done[b] && bp.where[b] != kNoHost) return true;
  return false;
}

// Every cell of the blocks no host can run any more: failed, host_lost.
void fail_unplaceable(RunDoc& doc, const BlockPlan& bp) {
  for (std::size_t b = 0; b < bp.blocks.size(); ++b) {
    if (bp.done[b] || bp.where[b] != kNoHost) continue;
    for (const auto& cell : bp.blocks[b].cells)
      if (!doc.cell_done(cell.id)) {
        results::CellRecord c = results::unbooted_cell(
            cell.id, cell.variant, cell.repetition, cell.warmup, results::FailureClass::host_lost,
            "no usable host left (" + bp.last_loss + ")");
        c.block = bp.blocks[b].key;
        doc.add_cell(results::to_json(c));
      }
  }
}

}  // namespace

std::vector<HostSpec> run_hosts(const Spec& spec, const RunOptions& opt) {
  if (opt.hosts.empty()) return spec.hosts;
  parse_hosts(json(opt.hosts), "--host");  // the same checks as the spec's list
  std::vector<HostSpec> out;
  for (const auto& uri : opt.hosts) {
    HostSpec h{uri, ""};
    for (const auto& s : spec.hosts)
      if (s.uri == uri) h.pool_dir = s.pool_dir;
    out.push_back(h);
  }
  return out;
}

std::vector<HostConn> record_hosts(const std::vector<HostSpec>& host_specs, const RunOptions& opt,
                                   RunDoc& doc) {
  std::vector<HostConn> hosts;
  if (host_specs.empty()) return hosts;
  hosts = connect_hosts(host_specs, opt);
  json& d = doc.doc();
  d["hosts"] = json::array();
  for (const auto& h : hosts) d["hosts"].push_back(h.info);
  return hosts;
}

AccelChoice hosts_accelerator(const std::vector<HostConn>& hosts, AccelRequest req) {
  std::string without;
  for (const auto& h : hosts)
    if (h.usable && !h.host->fingerprint().kvm) without = h.spec.uri;
  if (req == AccelRequest::kvm && !without.empty())
    throw Error("--accel kvm: host " + without + " offers no KVM domains");
  AccelChoice a;
  a.accel = req == AccelRequest::tcg || !without.empty() ? Accel::tcg : Accel::kvm;
  a.reason = req == AccelRequest::automatic
                 ? (without.empty() ? "every libvirt host offers KVM"
                                    : "libvirt host " + without + " offers no KVM domains")
                 : "requested";
  return a;
}

std::string hosts_fingerprint_sha256(const std::vector<HostConn>& hosts, Accel accel) {
  std::vector<std::string> prints;
  for (const auto& h : hosts)
    if (h.usable) prints.push_back(fingerprint_sha256(h.host->fingerprint()));
  std::sort(prints.begin(), prints.end());
  std::string s;
  for (const auto& p : prints) s += p + "\n";
  return sha256_hex(s + "accelerator=" + accel_name(accel) + "\n");
}

void run_on_hosts(const Spec& spec, const RunOptions& opt, std::vector<HostConn>& hosts,
                  RunDoc& doc, const HostCells& cells) {
  BlockPlan bp;
  place(bp, spec, doc, hosts);
  cells.show();
  while (blocks_left(bp)) {
    run_blocks_round(doc, opt, cells, hosts, bp);
    if (interrupt_requested()) return;
  }
  fail_unplaceable(doc, bp);
  if (opt.meter) opt.meter->finish("cells");
}

}  // namespace isolab
