#include "runtime/internal/lifecycle.h"

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "runtime/runtime.h"

namespace cltrace::runtime {
namespace internal {
namespace {

constexpr size_t kMachines = 3;
constexpr size_t kMaxNonEdges = 64;

// Process-wide, static storage only (no allocation on the DDI path).
struct StepLog {
  std::atomic<uint64_t> edges[kMachines] = {};
  std::atomic<size_t> non_edges{0};  // how many happened (the first kMaxNonEdges are kept)
  LifecycleNonEdge kept[kMaxNonEdges] = {};
};

StepLog& Log() {
  static StepLog log;
  return log;
}

}  // namespace

bool CheckStep(rules::Machine m, rules::State from, rules::State to, const char* call,
               rules::Rule rule) {
  StepLog& log = Log();
  if (rules::FindEdge(m, from, to, call) != nullptr) {
    log.edges[static_cast<size_t>(m)].fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  size_t i = log.non_edges.fetch_add(1, std::memory_order_acq_rel);
  if (i < kMaxNonEdges) log.kept[i] = LifecycleNonEdge{m, from, to, call, rule};
  return false;
}

bool Step(rules::Machine m, rules::State* state, rules::State to, const char* call,
          rules::Rule rule) {
  bool edge = CheckStep(m, *state, to, call, rule);
  *state = to;
  return edge;
}

}  // namespace internal

LifecycleSteps ProcessLifecycleSteps() {
  internal::StepLog& log = internal::Log();
  LifecycleSteps out;
  for (size_t i = 0; i < internal::kMachines; ++i) out.edges[i] = log.edges[i].load();
  size_t n = log.non_edges.load(std::memory_order_acquire);
  out.non_edge_count = n;
  for (size_t i = 0; i < n && i < internal::kMaxNonEdges; ++i) out.non_edges.push_back(log.kept[i]);
  return out;
}

void ClearProcessLifecycleSteps() {
  internal::StepLog& log = internal::Log();
  for (auto& e : log.edges) e.store(0);
  log.non_edges.store(0);
}

}  // namespace cltrace::runtime
