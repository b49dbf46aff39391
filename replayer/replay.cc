#include "replayer/replay.h"

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "ddi/catalog.h"
#include "format/jsonl.h"
#include "replayer/internal/call_meta.h"
#include "replayer/internal/driver.h"
#include "replayer/internal/dx6_replay.h"
#include "replayer/internal/kernel_model.h"
#include "replayer/internal/plan.h"
#include "replayer/internal/session.h"

namespace cltrace::replay {
namespace {

using format::Event;

// The DDIs the reference driver can fail on request (refdriver/refdriver.h "oom:" items).
constexpr const char* kOomFunctions[] = {"RecycleCreateCommandList", "RecycleCreateDeferredContext",
                                         "CreateCommandList"};

std::string CallName(format::CallId call) {
  const format::CallInfo* ci = format::GetCall(call);
  return ci == nullptr ? "?" : ci->name;
}

// The reference driver's configuration items for the injections.
std::string InjectionItems(const std::vector<Injection>& injections) {
  std::map<std::string, std::vector<std::string>> oom;
  std::vector<std::string> items;
  for (const Injection& i : injections) {
    if (i.kind == "oom") {
      oom[i.function].push_back(absl::StrCat(i.n));
    } else {
      items.push_back(absl::StrCat("removed=", i.n));
    }
  }
  for (const auto& [fn, ns] : oom)
    items.push_back(absl::StrCat("oom:", fn, "=", absl::StrJoin(ns, ",")));
  return absl::StrJoin(items, ";");
}

// One recorded call as a history line.
std::string EventLine(const Event& e, const format::TokenTable& handles,
                      const format::TokenTable& strings) {
  std::string args = format::ArgsToText(e, handles, strings);
  constexpr size_t kMaxArgs = 240;
  if (args.size() > kMaxArgs) args = absl::StrCat(args.substr(0, kMaxArgs), "...");
  std::string line = absl::StrFormat("seq %d tid %d %s(%s)", e.seq, e.tid, CallName(e.call), args);
  if (e.end == 0) {
    absl::StrAppend(&line, " never returned");
  } else if (std::string ret = format::RetToText(e); !ret.empty()) {
    absl::StrAppend(&line, " -> ", ret);
  }
  return line;
}

bool Touches(const Event& e, uint64_t handle) {
  const format::CallInfo* ci = format::GetCall(e.call);
  if (ci == nullptr) return false;
  bool found = false;
  internal::ForEachField(*ci, e.args, [&](const format::FieldInfo& f, size_t index, int) {
    if (f.kind == format::FieldKind::kHandle && e.args[index] == handle) found = true;
  });
  return found;
}

// The recent recorded history of the divergence's handles among `n` events in seq order
// (`at(i)`: the i-th).
void AppendHistory(const Divergence& d, size_t n, absl::FunctionRef<const Event&(size_t)> at,
                   const format::TokenTable& handles, const format::TokenTable& strings,
                   size_t per_handle, std::string* out) {
  if (per_handle == 0) return;
  size_t lo = 0, hi = n;  // the first event with seq >= d.seq
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (at(mid).seq < d.seq) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  const size_t end = lo;
  constexpr size_t kMaxHandles = 4;
  constexpr size_t kMaxScan = size_t{1} << 20;
  for (size_t h = 0; h < d.handles.size() && h < kMaxHandles; ++h) {
    const uint64_t id = d.handles[h];
    std::vector<size_t> found;
    for (size_t i = end, scanned = 0; i > 0 && found.size() < per_handle && scanned < kMaxScan;
         --i, ++scanned) {
      if (Touches(at(i - 1), id)) found.push_back(i - 1);
    }
    absl::StrAppend(out, "  recent calls on ", handles.Token(id), ":");
    if (found.empty()) {
      absl::StrAppend(out, " none before this one\n");
      continue;
    }
    absl::StrAppend(out, "\n");
    for (auto it = found.rbegin(); it != found.rend(); ++it) {
      absl::StrAppend(out, "    ", EventLine(at(*it), handles, strings), "\n");
    }
  }
}

std::string DivergenceLine(const Divergence& d) {
  return absl::StrFormat("replay: divergence at seq %d (fn %s, tid %d): expected %s, actual %s",
                         d.seq, CallName(d.call), d.tid, d.expected, d.actual);
}

}  // namespace

absl::StatusOr<Injection> ParseInjection(absl::string_view spec) {
  std::vector<absl::string_view> parts = absl::StrSplit(spec, ':');
  Injection in;
  absl::string_view count;
  if (parts.size() == 3 && parts[0] == "oom") {
    in.kind = "oom";
    in.function = std::string(parts[1]);
    count = parts[2];
    if (std::none_of(std::begin(kOomFunctions), std::end(kOomFunctions),
                     [&](const char* f) { return in.function == f; })) {
      return absl::InvalidArgumentError(
          absl::StrCat("--inject ", spec,
                       ": oom can fail RecycleCreateCommandList, "
                       "RecycleCreateDeferredContext or CreateCommandList, not ",
                       in.function));
    }
  } else if (parts.size() == 2 && parts[0] == "removed") {
    in.kind = "removed";
    count = parts[1];
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--inject ", spec, ": expected oom:FUNCTION:N or removed:N"));
  }
  if (!absl::SimpleAtoi(count, &in.n) || in.n == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--inject ", spec, ": N must be a call number >= 1"));
  }
  return in;
}

absl::StatusOr<ReplayResult> Replay(const ReplayOptions& options, absl::Span<const Event> events,
                                    const format::TokenTable& handles,
                                    const format::TokenTable& strings) {
  const format::TokenTable no_contents;
  return Replay(options, events, handles, strings, no_contents);
}

namespace {

// The refusal of --threads single --kernel model for a recording whose kernel took calls in an
// order one replay thread cannot make: one replay thread issues the calls one after another,
// so the model sees kernel calls in that order. A recording whose kernel took them in another
// order (several threads inside the kernel at once) cannot replay identically that way: a
// divergence on a clean trace would be a false alarm, so such traces are refused up front.
bool RefuseSingleThreadKernelOrder(const internal::Plan& plan, const ReplayOptions& options,
                                   ReplayResult* result) {
  if (options.kernel != KernelMode::kModel || options.threads != ThreadMode::kSingle ||
      plan.tids.size() <= 1) {
    return false;
  }
  std::optional<std::pair<uint32_t, uint32_t>> c = internal::SingleThreadKernelOrderConflict(plan);
  if (!c) return false;
  const Event& first = plan.events[c->first];
  const Event& later = plan.events[c->second];
  result->outcome = Outcome::kBadInput;
  result->bad_seq = later.seq;
  result->bad_tid = later.tid;
  result->bad_call = later.call;
  result->bad_message = absl::StrFormat(
      "--threads single --kernel model cannot replay this recording: its kernel took this "
      "call (tid %d) before %s seq %d (tid %d), which one replay thread must make first "
      "(several threads were inside the kernel at once); replay it with --threads recorded",
      later.tid, CallName(first.call), first.seq, first.tid);
  result->calls = plan.covered;
  return true;
}

// Configures the driver for this replay: --inject faults and the reference driver's
// configuration from CLTRACE_REFDRIVER_CONFIG, whose DX6 planted bugs go to the DX6 driver
// (*dx6_bug) and the rest to the D3D11 driver.
absl::Status ConfigureDriver(internal::Driver& d, const ReplayOptions& options,
                             gpu::PlantedBug* dx6_bug) {
  std::string d3d11_config;
  bool dx6_items = false;
  const char* env_config = std::getenv("CLTRACE_REFDRIVER_CONFIG");
  *dx6_bug = internal::Dx6BugFromConfig(env_config == nullptr ? "" : env_config, &d3d11_config,
                                        &dx6_items);
  const std::string* base_config = dx6_items ? &d3d11_config : nullptr;
  if (!options.injections.empty()) {
    if (!d.configurable()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "--inject needs a driver with the reference driver's configuration interface "
          "(CltraceRefDriverConfigure); ",
          d.path(), " does not export it, and the replayer never fakes a driver's answer"));
    }
    return d.Configure(InjectionItems(options.injections), base_config);
  }
  if (dx6_items && d.configurable()) return d.Configure("", base_config);
  d.ResetConfiguration();
  return absl::OkStatus();
}

using KernelOrder = absl::flat_hash_map<uint32_t, uint64_t>;
using RunOnce = absl::FunctionRef<absl::Status(const KernelOrder&, ReplayResult*)>;

// The seq of the first divergence if it is a departure from the recorded kernel layer, else 0.
uint64_t KernelDeparture(const ReplayResult& r) {
  if (r.outcome != Outcome::kDivergent || r.divergences.empty()) return 0;
  const Divergence& first = r.divergences.front();
  const bool kernel = absl::StartsWith(first.expected, "kernel layer: ") ||
                      absl::StartsWith(first.expected, "the kernel answers ");
  return kernel ? first.seq : 0;
}

// --kernel model, recorded threads: a kernel thunk that made no kernel-layer call of its own
// is placed in the kernel's order at its exit, and where the recording's kernel really took
// it is not in the trace. When the replay departs from the recorded kernel layer inside the
// span of such a thunk, the thunk is tried at its entry and right before the departure
// instead; a placement is kept when the replay then gets further. Deterministic: the
// candidates are tried in a fixed order and each replay of a placement gives one result.
absl::Status RepairKernelOrder(const internal::Plan& plan, const ReplayResult& fresh, RunOnce run,
                               ReplayResult* result) {
  const std::vector<uint32_t> ambiguous = internal::AmbiguousKernelThunks(plan);
  KernelOrder order;
  constexpr int kMaxRepairs = 32;
  for (int repair = 0; repair < kMaxRepairs; ++repair) {
    const uint64_t at = KernelDeparture(*result);
    if (at == 0) break;
    bool improved = false;
    for (uint32_t i : ambiguous) {
      const Event& e = plan.events[i];
      if (e.seq >= at || e.end <= at || order.contains(i)) continue;
      for (uint64_t key : {e.seq, at - 1}) {
        KernelOrder tried = order;
        tried[i] = key;
        ReplayResult r = fresh;
        if (absl::Status s = run(tried, &r); !s.ok()) return s;
        const uint64_t next = KernelDeparture(r);
        const bool further = r.outcome == Outcome::kIdentical ||
                             (r.outcome == Outcome::kDivergent && !r.divergences.empty() &&
                              r.divergences.front().seq > at);
        if (further && (next == 0 || next > at)) {
          order = std::move(tried);
          *result = std::move(r);
          improved = true;
          break;
        }
      }
      if (improved) break;
    }
    if (!improved) break;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ReplayResult> Replay(const ReplayOptions& options, absl::Span<const Event> events,
                                    const format::TokenTable& handles,
                                    const format::TokenTable& strings,
                                    const format::TokenTable& contents) {
  if (options.kernel != KernelMode::kModel) {
    // The segmented replay; the trace in memory is one source of events among others.
    size_t at = 0;
    return ReplayStream(
        options,
        [&](Event* e) {
          if (at == events.size()) return false;
          *e = events[at++];
          return true;
        },
        handles, strings, contents);
  }
  // The driver's callbacks find the replay through a process-wide pointer: one at a time.
  static std::mutex* replay_mu = new std::mutex();
  std::lock_guard<std::mutex> lock(*replay_mu);

  ReplayResult result;
  result.until_seq = options.until_seq;
  internal::Plan plan;
  internal::BadInput bad;
  if (!internal::BuildPlan(events, handles, contents, options.until_seq, &plan, &bad)) {
    result.outcome = Outcome::kBadInput;
    result.bad_seq = bad.seq;
    result.bad_tid = bad.tid;
    result.bad_call = bad.call;
    result.bad_message = bad.message;
    result.calls = plan.covered;
    return result;
  }
  if (RefuseSingleThreadKernelOrder(plan, options, &result)) return result;
  absl::StatusOr<std::unique_ptr<internal::Driver>> driver =
      internal::Driver::Load(options.driver_path);
  if (!driver.ok()) return driver.status();
  internal::Driver& d = **driver;
  gpu::PlantedBug dx6_bug = gpu::PlantedBug::kNone;
  if (absl::Status s = ConfigureDriver(d, options, &dx6_bug); !s.ok()) return s;
  auto run = [&](const KernelOrder& order, ReplayResult* out) -> absl::Status {
    d.ClearViolations();
    internal::Session session(plan, options, &d);
    session.SetKernelOrderOverride(order);
    std::string error;
    if (!session.Init(&error)) return absl::ResourceExhaustedError(error);
    session.Run(out);
    return absl::OkStatus();
  };
  const ReplayResult fresh = result;
  absl::Status status = run(KernelOrder(), &result);
  if (status.ok() && options.kernel == KernelMode::kModel &&
      options.threads == ThreadMode::kRecorded && plan.tids.size() > 1) {
    status = RepairKernelOrder(plan, fresh, run, &result);
  }
  d.ResetConfiguration();
  if (!status.ok()) return status;
  if (absl::Status s = internal::ReplayDx6(plan, options, dx6_bug, &result); !s.ok()) return s;
  return result;
}

namespace {

// ReplayStream's state: the plan builder, the session (started at the first segment that
// issues a call), the segment being collected and the earlier segments kept for divergence
// histories.
class StreamReplayer {
 public:
  StreamReplayer(const ReplayOptions& options, const format::TokenTable& handles,
                 const format::TokenTable& strings, const format::TokenTable& contents,
                 StreamReplayStats* stats)
      : options_(options),
        handles_(handles),
        strings_(strings),
        builder_(handles, contents, options.until_seq, /*collect_dx6=*/true),
        st_(*stats) {
    result_.until_seq = options.until_seq;
  }

  // Reads `next` to its end (or to what --until needs), replaying segment by segment.
  void Read(const std::function<bool(Event*)>& next);
  // The verdict once Read returned.
  absl::StatusOr<ReplayResult> Finish();

 private:
  // The replay of the segments stops at the first problem with the input; the rest is read
  // for the checks only.
  bool Replaying() const { return !structural_ && !handle_problem_ && failure_.ok(); }
  bool StartSession();
  void PlanSegment();
  void RecordFootprint();
  // Keeps the segment for divergence histories (the oldest dropped once the others hold
  // history_events) and leaves segment_ empty with its capacity.
  void RetireSegment();
  const Event& HistoryAt(size_t k) const {
    for (const std::vector<Event>& p : past_) {
      if (k < p.size()) return p[k];
      k -= p.size();
    }
    return segment_[k];
  }
  void FillHistory(Divergence* d, size_t n) const {
    AppendHistory(
        *d, n, [this](size_t k) -> const Event& { return HistoryAt(k); }, handles_, strings_,
        options_.history, &d->history);
  }

  const ReplayOptions& options_;
  const format::TokenTable& handles_;
  const format::TokenTable& strings_;
  internal::PlanBuilder builder_;
  StreamReplayStats& st_;
  ReplayResult result_;
  std::optional<internal::BadInput> structural_, handle_problem_;
  std::unique_ptr<internal::Driver> driver_;
  std::unique_ptr<internal::Session> session_;
  gpu::PlantedBug dx6_bug_ = gpu::PlantedBug::kNone;
  absl::Status failure_;  // the replay could not run at all
  std::vector<Event> segment_;
  // The events before the segment, for divergence histories: whole earlier segments.
  std::deque<std::vector<Event>> past_;
  size_t past_events_ = 0;
};

bool StreamReplayer::StartSession() {
  if (session_ != nullptr) return true;
  absl::StatusOr<std::unique_ptr<internal::Driver>> d =
      internal::Driver::Load(options_.driver_path);
  if (!d.ok()) {
    failure_ = d.status();
    return false;
  }
  driver_ = *std::move(d);
  if (absl::Status s = ConfigureDriver(*driver_, options_, &dx6_bug_); !s.ok()) {
    failure_ = s;
    return false;
  }
  driver_->ClearViolations();
  session_ = std::make_unique<internal::Session>(builder_.plan(), options_, driver_.get());
  std::string error;
  constexpr size_t kRuntimeIds = size_t{1} << 26;
  if (!session_->Init(&error, kRuntimeIds)) {
    failure_ = absl::ResourceExhaustedError(error);
    return false;
  }
  return true;
}

void StreamReplayer::RecordFootprint() {
  const internal::Session::Footprint fp = session_->footprint();
  st_.peak_live_handles = std::max<uint64_t>(st_.peak_live_handles, fp.live);
  st_.peak_handle_map = std::max<uint64_t>(st_.peak_handle_map, fp.raw_map);
  st_.peak_quarantined = std::max<uint64_t>(st_.peak_quarantined, fp.quarantined);
  st_.peak_pending_async = std::max<uint64_t>(st_.peak_pending_async, fp.async);
  st_.peak_open_mappings = std::max<uint64_t>(st_.peak_open_mappings, fp.mappings);
}

void StreamReplayer::PlanSegment() {
  if (segment_.empty() || structural_) return;
  ++st_.segments;
  st_.peak_segment_events = std::max<uint64_t>(st_.peak_segment_events, segment_.size());
  internal::BadInput bad;
  const internal::PlanBuilder::Check c = builder_.AddSegment(segment_, &bad);
  st_.peak_parent_tail = std::max<uint64_t>(st_.peak_parent_tail, builder_.parent_tail_size());
  if (c == internal::PlanBuilder::Check::kStructural) {
    structural_ = bad;
  } else if (c == internal::PlanBuilder::Check::kHandles) {
    handle_problem_ = bad;
  } else if (Replaying() && (!builder_.plan().top.empty() ||
                             !builder_.plan().async_callbacks.empty() || session_ != nullptr)) {
    if (StartSession() && session_->BeginSegment()) session_->RunSegment();
    if (session_ != nullptr) {
      const size_t n = past_events_ + segment_.size();
      session_->ForEachNewDivergence([&](Divergence* d) { FillHistory(d, n); });
      RecordFootprint();
    }
  }
  RetireSegment();
}

void StreamReplayer::RetireSegment() {
  std::vector<Event> spare;
  if (options_.history_events > 0 && options_.history > 0) {
    past_events_ += segment_.size();
    past_.push_back(std::move(segment_));
    while (past_events_ - past_.front().size() >= options_.history_events) {
      past_events_ -= past_.front().size();
      spare = std::move(past_.front());
      past_.pop_front();
    }
    st_.peak_history_events = std::max<uint64_t>(st_.peak_history_events, past_events_);
  } else {
    spare = std::move(segment_);
  }
  segment_ = std::move(spare);  // its capacity, for the next segment
  segment_.clear();
}

void StreamReplayer::Read(const std::function<bool(Event*)>& next) {
  // A segment may end before event e when no recorded call is in flight at e (every earlier
  // call returned before it), or, once no later top-level call is replayed, when the calls
  // the replay covers have all returned.
  uint64_t open_until = 0;      // the last exit of the events so far (UINT64_MAX: never)
  uint64_t covered_until = 0;   // the last exit of the top-level calls replayed so far
  uint64_t until_last_end = 0;  // --until: the last exit of a call entered at or before it
  const size_t target = std::max<size_t>(options_.segment_events, 1);
  Event e;
  while (next(&e)) {
    if (options_.until_seq != 0) {
      if (e.seq > options_.until_seq && e.seq > until_last_end) {
        st_.stopped_early = true;
        break;
      }
      if (e.seq <= options_.until_seq) {
        until_last_end = std::max(until_last_end, e.end == 0 ? UINT64_MAX : e.end);
      }
    }
    ++st_.events_read;
    if (segment_.size() >= target &&
        (e.seq > open_until || (!builder_.Issuing(e.seq) && e.seq > covered_until))) {
      PlanSegment();
    }
    const uint64_t end = e.end == 0 ? UINT64_MAX : e.end;
    open_until = std::max(open_until, end);
    if (e.parent == 0 && builder_.Issuing(e.seq)) covered_until = std::max(covered_until, end);
    segment_.push_back(std::move(e));
  }
  PlanSegment();
}

absl::StatusOr<ReplayResult> StreamReplayer::Finish() {
  internal::BadInput dx6_bad;
  std::optional<internal::BadInput> bad = structural_ ? structural_ : handle_problem_;
  if (!bad && !builder_.FinishDx6(&dx6_bad)) bad = dx6_bad;
  if (bad) {
    // As Replay: bad input found by the checks is the verdict, whatever the replay did.
    if (driver_ != nullptr) driver_->ResetConfiguration();
    result_.outcome = Outcome::kBadInput;
    result_.bad_seq = bad->seq;
    result_.bad_tid = bad->tid;
    result_.bad_call = bad->call;
    result_.bad_message = bad->message;
    result_.calls = structural_ ? 0 : builder_.plan().covered;
    return result_;
  }
  if (!failure_.ok()) return failure_;
  if (session_ == nullptr && !StartSession()) return failure_;
  const std::function<void(Divergence*)> fill = [this](Divergence* d) {
    FillHistory(d, past_events_);
  };
  session_->Finish(&result_, &fill);
  session_.reset();
  driver_->ResetConfiguration();
  if (absl::Status s = internal::ReplayDx6(builder_.dx6_plan(), options_, dx6_bug_, &result_);
      !s.ok()) {
    return s;
  }
  for (Divergence& d : result_.divergences) {
    if (internal::CallMetaFor(d.call).role != internal::Role::kDx6) continue;
    FillHistory(&d, past_events_);
  }
  return result_;
}

}  // namespace

absl::StatusOr<ReplayResult> ReplayStream(const ReplayOptions& options,
                                          const std::function<bool(Event*)>& next,
                                          const format::TokenTable& handles,
                                          const format::TokenTable& strings,
                                          const format::TokenTable& contents,
                                          StreamReplayStats* stats) {
  if (options.kernel == KernelMode::kModel) {
    return absl::InvalidArgumentError(
        "--kernel model compares the kernel layer of the whole trace: use Replay");
  }
  static std::mutex* replay_mu = new std::mutex();
  std::lock_guard<std::mutex> lock(*replay_mu);
  StreamReplayStats local_stats;
  StreamReplayStats& st = stats != nullptr ? *stats : local_stats;
  st = StreamReplayStats();
  StreamReplayer replayer(options, handles, strings, contents, &st);
  replayer.Read(next);
  return replayer.Finish();
}

std::string FormatReport(const ReplayResult& r, absl::Span<const Event> events,
                         const format::TokenTable& handles, const format::TokenTable& strings,
                         const ReplayOptions& options) {
  std::string out;
  switch (r.outcome) {
    case Outcome::kBadInput:
      absl::StrAppendFormat(&out, "replay: bad input at seq %d (fn %s, tid %d): %s\n", r.bad_seq,
                            CallName(r.bad_call), r.bad_tid, r.bad_message);
      break;
    case Outcome::kIdentical:
      absl::StrAppendFormat(&out, "replay: identical (%d calls)\n", r.calls);
      break;
    case Outcome::kDivergent:
      for (size_t i = 0; i < r.divergences.size(); ++i) {
        absl::StrAppend(&out, DivergenceLine(r.divergences[i]), "\n");
        if (events.empty()) {
          absl::StrAppend(&out, r.divergences[i].history);
        } else {
          AppendHistory(
              r.divergences[i], events.size(), [&](size_t k) -> const Event& { return events[k]; },
              handles, strings, options.history, &out);
        }
      }
      if (options.keep_going) {
        absl::StrAppendFormat(&out, "replay: %d divergence%s in %d calls\n", r.divergences.size(),
                              r.divergences.size() == 1 ? "" : "s", r.calls);
      }
      break;
  }
  if (r.outcome == Outcome::kBadInput) {
    for (const std::string& line : r.driver_violations)
      absl::StrAppend(&out, "driver: ", line, "\n");
    return out;
  }
  if (r.never_returned_seq != 0) {
    absl::StrAppendFormat(&out,
                          "note: the recording ends inside seq %d (it never returned); the "
                          "replay stopped before it\n",
                          r.never_returned_seq);
  }
  if (r.until_seq != 0) {
    absl::StrAppendFormat(&out, "note: replayed top-level calls up to seq %d (--until)\n",
                          r.until_seq);
  }
  absl::StrAppendFormat(&out, "kernel: %d submissions, %d command bytes", r.kernel.submissions,
                        r.kernel.command_bytes);
  if (options.digest) absl::StrAppendFormat(&out, ", digest 0x%016x", r.kernel.digest);
  absl::StrAppend(&out, "\n");
  if (r.kernel.model) {
    absl::StrAppendFormat(&out,
                          "kernel model: %d kernel-layer calls compared, %d DMA buffers, %d GPU "
                          "fences, GPU content digest 0x%016x, fence digests: ",
                          r.kernel.kernel_calls_compared, r.kernel.dma_buffers, r.kernel.fences,
                          r.kernel.gpu_digest);
    if (r.kernel.fence_digests_recorded) {
      absl::StrAppendFormat(&out, "%d compared\n", r.kernel.fence_digests_compared);
    } else {
      absl::StrAppend(&out, "not recorded\n");
    }
    if (r.kernel.turn_timeouts != 0) {
      absl::StrAppendFormat(&out,
                            "kernel model: %d kernel turn%s given up after waiting %d ms "
                            "(kernel turn timeout)\n",
                            r.kernel.turn_timeouts, r.kernel.turn_timeouts == 1 ? "" : "s",
                            options.kernel_turn_timeout.count());
    }
    if (options.digest) {
      for (const KernelSummary::Checkpoint& c : r.kernel.checkpoints) {
        absl::StrAppendFormat(&out, "kernel model: after %s seq %d: GPU content digest 0x%016x\n",
                              format::GetCall(c.call)->name, c.seq, c.digest);
      }
    }
  }
  if (r.dx6_calls != 0) {
    absl::StrAppendFormat(&out, "dx6: %d calls replayed into the DX6 model driver\n", r.dx6_calls);
  }
  const ContentSummary& c = r.content;
  if (c.dx6_draws != 0) {
    absl::StrAppendFormat(&out,
                          "content: %d DrawPrimitives2 command streams (with their vertices) "
                          "handed to the DX6 driver (%d bytes)\n",
                          c.dx6_draws, c.dx6_bytes);
  }
  if (c.uploads != 0 || c.unmaps != 0 || (!c.notes.empty() && r.dx6_calls == 0)) {
    absl::StrAppendFormat(&out,
                          "content: %d UpdateSubresourceUP sources and %d mapped subresources "
                          "handed to the driver (%d bytes)\n",
                          c.uploads, c.unmaps, c.bytes);
  }
  if (c.initial_data != 0) {
    absl::StrAppendFormat(&out,
                          "content: %d resources created with their recorded initial data (%d "
                          "bytes)\n",
                          c.initial_data, c.initial_data_bytes);
  }
  for (const std::string& note : c.notes) absl::StrAppend(&out, "content: ", note, "\n");
  for (const std::string& line : r.driver_violations) {
    absl::StrAppend(&out, "driver: ", line, "\n");
  }
  return out;
}

int RunReplay(const ReplayOptions& options, absl::Span<const Event> events,
              const format::TokenTable& handles, const format::TokenTable& strings,
              std::ostream& out, std::ostream& err) {
  const format::TokenTable no_contents;
  return RunReplay(options, events, handles, strings, no_contents, out, err);
}

int RunReplay(const ReplayOptions& options, absl::Span<const Event> events,
              const format::TokenTable& handles, const format::TokenTable& strings,
              const format::TokenTable& contents, std::ostream& out, std::ostream& err) {
  absl::StatusOr<ReplayResult> r = Replay(options, events, handles, strings, contents);
  if (!r.ok()) {
    err << "cltrace replay: " << r.status().message() << "\n";
    return kExitBadInput;
  }
  out << FormatReport(*r, events, handles, strings, options);
  switch (r->outcome) {
    case Outcome::kIdentical:
      return kExitIdentical;
    case Outcome::kDivergent:
      return kExitDivergent;
    case Outcome::kBadInput:
      return kExitBadInput;
  }
  return kExitBadInput;
}

}  // namespace cltrace::replay
