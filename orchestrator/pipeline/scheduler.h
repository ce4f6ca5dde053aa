// Slots and the scheduler: cells run on slots, one guest at a time per slot, each slot with
// its own host CPUs (pipeline/host_cpu_plan.h) and its own VM backend.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "pipeline/host_cpu_plan.h"
#include "pipeline/run_plan.h"
#include "vm/vm.h"

namespace isolab {

// A place a guest can run: a host ("local" for this one), that host's CPUs for one guest and
// the backend (QEMU, or a libvirt connection) that boots it. The backend is not owned. A remote
// slot (host: a libvirt URI, vm/libvirt_host.h) has empty cpus: its guest runs on that host's
// CPUs, which the host plan does not cover, so it is not pinned.
struct Slot {
  int index = 0;
  std::string host = "local";
  SlotPlan cpus;
  bool overcommitted = false;
  VmBackend* backend = nullptr;
  bool local() const { return host == "local"; }
};

// The slot that should run cells[i] (cells in plan_cells() order, `variants` per round): round
// r = i / variants, variant v = i % variants, slot (v + r) % slots, so that over the rounds
// every variant runs on every slot alike (A on slot 0 and B on slot 1, then the other way).
int preferred_slot(std::size_t i, std::size_t variants, std::size_t slots);

// Which pending cell slot `slot` takes next: the first (lowest index) pending cell it prefers,
// else the first pending cell (a slot never idles while cells wait). pending: indices into the
// plan, ascending. Returns an index into `pending`, or -1 when it is empty. Pure.
int pick_next(const std::vector<std::size_t>& pending, int slot, std::size_t variants,
              std::size_t slots);

// Runs work(slot, cell) for every cell of `cells`: one thread per slot (the caller's own thread
// when there is one slot) over one shared queue, picked with pick_next(). Before each pick a
// slot asks stop(); once it says true no cell starts (cells running finish). When work() throws,
// no further cell starts and the first exception is rethrown after every slot has stopped.
void run_on_slots(const std::vector<CellPlan>& cells, std::size_t variants,
                  std::vector<Slot>& slots, const std::function<void(Slot&, const CellPlan&)>& work,
                  const std::function<bool()>& stop);

// Which item slot takes next: an index into `pending` (item indices, ascending), or -1 when
// nothing is for this slot (its thread then ends).
using PickFn = std::function<int(const std::vector<std::size_t>& pending, const Slot& slot)>;

// The general form: runs work(slot, i) for the items 0..n-1 that pick() hands out, one thread
// per slot (the caller's own when there is one) over one queue; pick() is called under the
// queue's lock, so it may read state that work() changes under a lock of its own. Items no
// slot picks stay undone. stop() and exceptions as above. Used with block affinity by the
// multi-host path (pipeline/run.cc: each host's slot takes only the blocks placed on it).
void run_on_slots(std::size_t n, std::vector<Slot>& slots, const PickFn& pick,
                  const std::function<void(Slot&, std::size_t)>& work,
                  const std::function<bool()>& stop);

}  // namespace isolab
