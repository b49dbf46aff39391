// The handle token table (format/event.h TokenTable) against the table it replaced, in the
// same run: a std::vector<std::string> of texts plus an absl::flat_hash_map<std::string,
// uint64_t> reverse index.
//
// BM_TokenTableDefine/ids: a reader's definitions (Define of `ids` distinct "0x..." handle
// tokens spelled like a 64-bit process's heap addresses), then Token() of 4 M random ids.
// Counters: define and token rates (M/s of thread CPU time) of both tables and their ratios
// (new / old, > 1 is faster), and the resident memory each adds per id (VmRSS before and after
// the build; the new table's own accounting, bytes_used(), beside it). The new table's file
// pages are written back by the kernel's threads, outside this thread's CPU time.
// BM_TokenTableInternValue/ids: a writer's InternValue stream (a recording's handles: mostly
// values seen before, `ids` new ones); the old table kept a value -> id map beside its two
// strings per id. Counters: calls/s of both, their ratio, resident bytes per id.
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "benchmark/benchmark.h"
#include "format/event.h"

namespace cltrace::format {
namespace {

// The table before: one std::string per id and one more as the index's key.
class OldTokenTable {
 public:
  OldTokenTable() { tokens_.emplace_back(); }
  bool Define(uint64_t id, absl::string_view token) {
    if (id == 0) return false;
    if (id < tokens_.size()) return tokens_[id] == token;
    if (id != tokens_.size()) return false;
    if (ids_.contains(token)) return false;
    tokens_.emplace_back(token);
    ids_.emplace(std::string(token), id);
    return true;
  }
  absl::string_view Token(uint64_t id) const {
    return id < tokens_.size() ? absl::string_view(tokens_[id]) : absl::string_view();
  }
  uint64_t InternValue(uint64_t value) {
    if (value == 0) return 0;
    auto it = by_value_.find(value);
    if (it != by_value_.end()) return it->second;
    const std::string token = absl::StrFormat("0x%x", value);
    auto [t, added] = ids_.emplace(token, tokens_.size());
    if (added) tokens_.push_back(token);
    by_value_.emplace(value, t->second);
    return t->second;
  }

 private:
  std::vector<std::string> tokens_;
  absl::flat_hash_map<std::string, uint64_t> ids_;
  absl::flat_hash_map<uint64_t, uint64_t> by_value_;
};

double ThreadSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double RssBytes() {
  long pages = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE));
}

// Heap addresses of a 64-bit process, handed out in a few arenas and not in order.
std::vector<std::string> HandleTokens(uint64_t n) {
  std::vector<std::string> out;
  out.reserve(n);
  std::mt19937_64 rng(16);
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t arena = 0x55679a2e0000 + (rng() % 4) * 0x100000000;
    out.push_back(absl::StrFormat("0x%x", arena + i * 0x40 + (rng() % 4) * 0x10));
  }
  return out;
}

struct Run {
  double define_s = 0, token_s = 0, rss = 0, accounted = 0;
};

template <typename Table>
Run Measure(const std::vector<std::string>& tokens, const std::vector<uint64_t>& probes) {
  Run r;
  const double rss0 = RssBytes();
  double t0 = ThreadSeconds();
  {
    Table table;
    for (uint64_t i = 0; i < tokens.size(); ++i) {
      if (!table.Define(i + 1, tokens[i])) std::abort();
    }
    r.define_s = ThreadSeconds() - t0;
    r.rss = RssBytes() - rss0;
    if constexpr (std::is_same_v<Table, TokenTable>) {
      r.accounted = static_cast<double>(table.bytes_used());
    }
    t0 = ThreadSeconds();
    size_t sum = 0;
    for (uint64_t id : probes) sum += table.Token(id).size();
    r.token_s = ThreadSeconds() - t0;
    benchmark::DoNotOptimize(sum);
  }
  return r;
}

void BM_TokenTableDefine(benchmark::State& state) {
  const uint64_t n = static_cast<uint64_t>(state.range(0));
  const std::vector<std::string> tokens = HandleTokens(n);
  std::vector<uint64_t> probes(4 << 20);
  std::mt19937_64 rng(7);
  for (uint64_t& id : probes) id = 1 + rng() % n;
  Run old_run, new_run;
  for (auto _ : state) {
    // The new table first: the old table's freed heap would be reused, hiding its RSS.
    new_run = Measure<TokenTable>(tokens, probes);
    old_run = Measure<OldTokenTable>(tokens, probes);
  }
  const double ids = static_cast<double>(n), lookups = static_cast<double>(probes.size());
  state.counters["old_Mdef/s"] = ids / old_run.define_s * 1e-6;
  state.counters["new_Mdef/s"] = ids / new_run.define_s * 1e-6;
  state.counters["define_ratio"] = old_run.define_s / new_run.define_s;
  state.counters["old_Mtok/s"] = lookups / old_run.token_s * 1e-6;
  state.counters["new_Mtok/s"] = lookups / new_run.token_s * 1e-6;
  state.counters["token_ratio"] = old_run.token_s / new_run.token_s;
  state.counters["old_rss_B/id"] = old_run.rss / ids;
  state.counters["new_rss_B/id"] = new_run.rss / ids;
  state.counters["new_used_B/id"] = new_run.accounted / ids;
}
BENCHMARK(BM_TokenTableDefine)
    ->ArgName("ids")
    ->Arg(430000)
    ->Arg(4300000)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

// The writer's pattern (TraceWriter::InternHandleValue): every call interns a few handle
// values, most of them seen before (a device, a context, a recent resource), and now and then a
// new one: `ids` new values over 23 * `ids` calls, as in a `scene` recording.
template <typename Table>
Run MeasureWriter(uint64_t ids) {
  Run r;
  const double rss0 = RssBytes();
  const double t0 = ThreadSeconds();
  {
    Table table;
    std::mt19937_64 rng(23);
    uint64_t made = 0, sum = 0;
    auto value = [](uint64_t i) { return 0x55679a2e0000 + i * 0x40; };
    for (uint64_t call = 0; made < ids; ++call) {
      if (call % 23 == 0) sum += table.InternValue(value(made++));
      sum += table.InternValue(value(rng() % 16));  // device, context
      sum += table.InternValue(value(made - 1 - rng() % std::min<uint64_t>(made, 4096)));
    }
    r.define_s = ThreadSeconds() - t0;
    r.rss = RssBytes() - rss0;
    benchmark::DoNotOptimize(sum);
  }
  return r;
}

void BM_TokenTableInternValue(benchmark::State& state) {
  const uint64_t n = static_cast<uint64_t>(state.range(0));
  Run old_run, new_run;
  for (auto _ : state) {
    new_run = MeasureWriter<TokenTable>(n);
    old_run = MeasureWriter<OldTokenTable>(n);
  }
  const double calls = static_cast<double>(n) * 23;
  state.counters["old_Mcalls/s"] = calls / old_run.define_s * 1e-6;
  state.counters["new_Mcalls/s"] = calls / new_run.define_s * 1e-6;
  state.counters["ratio"] = old_run.define_s / new_run.define_s;
  state.counters["old_rss_B/id"] = old_run.rss / static_cast<double>(n);
  state.counters["new_rss_B/id"] = new_run.rss / static_cast<double>(n);
}
BENCHMARK(BM_TokenTableInternValue)
    ->ArgName("ids")
    ->Arg(430000)
    ->Arg(4300000)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace cltrace::format
