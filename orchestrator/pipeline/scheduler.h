// Slots and the scheduler: cells run on slots, one guest at a time per slot, each slot with
// its own host CPUs (pipeline/hostplan.h) and its own VM backend.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "pipeline/hostplan.h"
#include "pipeline/plan.h"
#include "vm/vm.h"

namespace isolab {

// A place a guest can run: a host ("local" for this one), that host's CPUs for one guest and
// the backend (QEMU, or a libvirt connection) that boots it. The backend is not owned.
struct Slot {
  int index = 0;
  std::string host = "local";
  SlotPlan cpus;
  bool overcommitted = false;
  VmBackend* backend = nullptr;
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

}  // namespace isolab
