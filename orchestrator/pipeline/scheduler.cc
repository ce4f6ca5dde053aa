#include "pipeline/scheduler.h"

#include <exception>
#include <mutex>
#include <thread>

namespace isolab {

int preferred_slot(std::size_t i, std::size_t variants, std::size_t slots) {
  if (slots == 0 || variants == 0) return 0;
  return static_cast<int>((i % variants + i / variants) % slots);
}

int pick_next(const std::vector<std::size_t>& pending, int slot, std::size_t variants,
              std::size_t slots) {
  for (std::size_t k = 0; k < pending.size(); ++k)
    if (preferred_slot(pending[k], variants, slots) == slot) return static_cast<int>(k);
  return pending.empty() ? -1 : 0;
}

void run_on_slots(std::size_t n, std::vector<Slot>& slots, const PickFn& pick,
                  const std::function<void(Slot&, std::size_t)>& work,
                  const std::function<bool()>& stop) {
  std::mutex mu;
  std::vector<std::size_t> pending;
  for (std::size_t i = 0; i < n; ++i) pending.push_back(i);
  std::exception_ptr failure;
  auto worker = [&](Slot& slot) {
    for (;;) {
      std::size_t next;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (failure || stop()) return;
        int k = pick(pending, slot);
        if (k < 0) return;
        next = pending[k];
        pending.erase(pending.begin() + k);
      }
      try {
        work(slot, next);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!failure) failure = std::current_exception();
        return;
      }
    }
  };
  if (slots.size() == 1) {
    worker(slots[0]);
  } else {
    std::vector<std::thread> threads;
    for (Slot& s : slots) threads.emplace_back(worker, std::ref(s));
    for (auto& t : threads) t.join();
  }
  if (failure) std::rethrow_exception(failure);
}

void run_on_slots(const std::vector<CellPlan>& cells, std::size_t variants,
                  std::vector<Slot>& slots, const std::function<void(Slot&, const CellPlan&)>& work,
                  const std::function<bool()>& stop) {
  const std::size_t n_slots = slots.size();
  run_on_slots(
      cells.size(), slots,
      [&](const std::vector<std::size_t>& pending, const Slot& slot) {
        return pick_next(pending, slot.index, variants, n_slots);
      },
      [&](Slot& slot, std::size_t i) { work(slot, cells[i]); }, stop);
}

}  // namespace isolab
