#include "cli/stats_output.h"

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "check/stats.h"
#include "cli/json_out.h"
#include "cli/verb.h"

namespace cltrace::cli {

int RunStats(absl::Span<const format::Event> events, const format::TokenTable& handles,
             std::ostream& out, std::ostream& err) {
  absl::StatusOr<check::TraceStats> s = check::ComputeStats(events, handles);
  if (!s.ok()) {
    err << "cltrace stats: " << s.status().message() << "\n";
    return kExitBadInput;
  }
  return PrintStats(*s, out);
}

int PrintStats(const check::TraceStats& stats, std::ostream& out) {
  const check::TraceStats* s = &stats;
  out << "calls: " << s->calls << "\n";
  out << absl::StrFormat(
      "command lists: %d created, %d recycle-created (%d failed), recycle hit rate %.1f%%\n",
      s->creates, s->recycle_creates, s->recycle_create_failures, 100.0 * s->recycle_hit_rate());
  out << absl::StrFormat("  %d recycle-destroyed, %d destroyed, %d creates failed\n",
                         s->recycle_destroys, s->destroys, s->create_failures);
  out << absl::StrFormat("finishes: %d (%d failed), abandons: %d\n", s->finishes,
                         s->failed_finishes, s->abandons);
  out << absl::StrFormat("command lists recycled per Finish: mean %.2f;",
                         s->recycled_per_finish_mean());
  for (const auto& [k, v] : s->recycled_per_finish) out << " " << k << ":" << v;
  out << "\n";
  uint64_t made = s->creates + s->recycle_creates;
  out << absl::StrFormat(
      "executions: %d on the IC, %d nested; %.2f per command list made\n", s->ic_executes,
      s->nested_executes,
      made ? static_cast<double>(s->ic_executes + s->nested_executes) / static_cast<double>(made)
           : 0.0);
  out << "alive over time:\n";
  out << absl::StrFormat("  %12s %13s %17s %8s %13s\n", "seq", "command lists", "deferred contexts",
                         "objects", "local handles");
  for (const check::AliveSample& a : s->alive) {
    out << absl::StrFormat("  %12d %13d %17d %8d %13d\n", a.seq, a.command_lists,
                           a.deferred_contexts, a.objects, a.locals);
  }
  out << absl::StrFormat(
      "  peak: %d command lists (seq %d), %d deferred contexts, %d objects, "
      "%d local handles\n",
      s->peak.command_lists, s->peak.seq, s->peak.deferred_contexts, s->peak.objects,
      s->peak.locals);
  out << "callbacks per DDI:\n";
  if (s->callbacks.empty()) out << "  (none)\n";
  for (const check::CallbackCount& c : s->callbacks)
    out << absl::StrFormat("  %-40s %-36s %d\n", c.ddi, c.callback, c.count);
  return kExitOk;
}

int PrintStatsJson(const check::TraceStats& s, std::ostream& out) {
  JsonOut j;
  j.Begin();
  j.Field("calls", s.calls);
  j.Key("command_lists");
  j.w().StartObject();
  j.Field("created", s.creates);
  j.Field("recycle_created", s.recycle_creates);
  j.Field("recycle_create_failures", s.recycle_create_failures);
  j.Field("recycle_hit_rate", s.recycle_hit_rate());
  j.Field("recycle_destroyed", s.recycle_destroys);
  j.Field("destroyed", s.destroys);
  j.Field("create_failures", s.create_failures);
  j.w().EndObject();
  j.Field("finishes", s.finishes);
  j.Field("failed_finishes", s.failed_finishes);
  j.Field("abandons", s.abandons);
  j.Key("recycled_per_finish");
  j.w().StartObject();
  j.Field("mean", s.recycled_per_finish_mean());
  j.Key("histogram");  // RecycleCommandList calls per Finish -> finishes
  j.w().StartObject();
  for (const auto& [k, v] : s.recycled_per_finish) j.Field(absl::StrCat(k), v);
  j.w().EndObject();
  j.w().EndObject();
  const uint64_t made = s.creates + s.recycle_creates;
  j.Key("executions");
  j.w().StartObject();
  j.Field("ic", s.ic_executes);
  j.Field("nested", s.nested_executes);
  j.Field("per_command_list",
          made ? static_cast<double>(s.ic_executes + s.nested_executes) / static_cast<double>(made)
               : 0.0);
  j.w().EndObject();
  auto sample = [&](const check::AliveSample& a) {
    j.w().StartObject();
    j.Field("seq", a.seq);
    j.Field("command_lists", a.command_lists);
    j.Field("deferred_contexts", a.deferred_contexts);
    j.Field("objects", a.objects);
    j.Field("local_handles", a.locals);
    j.w().EndObject();
  };
  j.Key("alive");
  j.w().StartArray();
  for (const check::AliveSample& a : s.alive) sample(a);
  j.w().EndArray();
  j.Key("peak");
  sample(s.peak);
  j.Key("callbacks");
  j.w().StartArray();
  for (const check::CallbackCount& c : s.callbacks) {
    j.w().StartObject();
    j.Field("ddi", c.ddi);
    j.Field("callback", c.callback);
    j.Field("count", c.count);
    j.w().EndObject();
  }
  j.w().EndArray();
  j.End(out);
  return kExitOk;
}

}  // namespace cltrace::cli
