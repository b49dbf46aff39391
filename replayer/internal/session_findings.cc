// Session: matching the driver's callbacks against the recording, comparing what the driver
// answered, and the findings (divergences, bad input) with the final result (see session.h).
#include <algorithm>
#include <cctype>
#include <string>

#include "absl/strings/str_cat.h"
#include "ddi/catalog.h"
#include "format/jsonl.h"
#include "replayer/internal/compare.h"
#include "replayer/internal/session.h"

namespace cltrace::replay::internal {

using format::CallId;
using format::Event;
using format::FieldDir;
using format::FieldInfo;
using format::FieldKind;

// ---- Comparing ------------------------------------------------------------------------------

std::string Session::CallText(CallId call, absl::Span<const uint64_t> args,
                              bool from_driver) const {
  Event e;
  e.call = call;
  e.end = 1;
  e.args.assign(args.begin(), args.end());
  bool unknown = false;
  const format::CallInfo* ci = format::GetCall(call);
  if (ci == nullptr) return "?";
  ForEachField(*ci, e.args, [&](const FieldInfo& f, size_t index, int) {
    if (f.kind == FieldKind::kHandle && e.args[index] >= slot_count_) {
      e.args[index] = 0;
      unknown = true;
    }
    // What the driver passed: its pointer values are replay addresses, never shown.
    if (from_driver && f.kind == FieldKind::kPtr) e.args[index] = 0;
  });
  std::string text = absl::StrCat(ci->name, "(", format::ArgsToText(e, *plan_.handles, {}), ")");
  if (unknown) absl::StrAppend(&text, " [handles the recording does not know shown as NULL]");
  return text;
}

void Session::CompareOutputs(ThreadState* t, const Event& e, const format::ArgVec& actual,
                             absl::string_view expected_prefix, absl::string_view actual_prefix) {
  const format::CallInfo& ci = *format::GetCall(e.call);
  auto same_handle = [&](uint64_t rec, uint64_t act, const FieldInfo&) {
    if (rec == act) return true;
    const size_t n = act - kUnknownHandleBase;
    if (act >= kUnknownHandleBase && n < t->unknown.size() && rec != 0 && rec < slot_count_ &&
        slots_[rec].raw.load(std::memory_order_acquire) == 0) {
      // A handle the driver produced that the recording names: from now on that id is it.
      std::lock_guard<std::mutex> lock(memory_mu_);
      id_of_raw_[t->unknown[n]] = rec;
      slots_[rec].raw.store(t->unknown[n], std::memory_order_release);
      return true;
    }
    return false;
  };
  std::optional<FieldDiff> d = FirstDifference(ci, e.args, actual, FieldDir::kOut, same_handle);
  if (!d.has_value()) return;
  auto value = [&](uint64_t v) -> std::string {
    if (d->field->kind != FieldKind::kHandle) return OutputValueText(*d->field, v);
    return v == 0            ? "NULL"
           : v < slot_count_ ? std::string(plan_.handles->Token(v))
                             : "a handle the recording does not know";
  };
  Diverge(e, absl::StrCat(expected_prefix, d->name, "=", value(d->expected)),
          absl::StrCat(actual_prefix, d->name, "=", value(d->actual)));
}

void Session::CompareKernelOutputs(ThreadState* t, const Event& e, const format::ArgVec& actual,
                                   int64_t ret) {
  CompareOutputs(t, e, actual, "the kernel answers ", "kernel model: ");
  if (format::GetCall(e.call)->ret != format::ReturnKind::kVoid && e.ret != ret) {
    Diverge(e, absl::StrCat("the kernel answers ", RetText(e.call, e.ret)),
            absl::StrCat("kernel model: ", RetText(e.call, ret)));
  }
}

const Event* Session::MatchCallback(ThreadState* t, CallId call, const format::ArgVec& actual) {
  if (t == nullptr || t->stack.empty()) return MatchAsync(call, actual);
  Frame& f = t->stack.back();
  const Event& parent = plan_.events[f.event];
  const format::CallInfo& ci = *format::GetCall(call);
  auto same_handle = [](uint64_t rec, uint64_t act, const FieldInfo&) { return rec == act; };
  int32_t c = f.cursor;
  while (c >= 0 && plan_.role[c] != Role::kCallback) c = plan_.next_sibling[c];
  if (c < 0) {
    Diverge(parent,
            absl::StrCat("no further callback inside ", format::GetCall(parent.call)->name,
                         " (it returned at seq ", parent.end, ")"),
            absl::StrCat("the driver called ", CallText(call, actual, /*from_driver=*/true)));
    return nullptr;
  }
  const Event& ce = plan_.events[c];
  if (ce.call == call) {
    // The expected callback: a difference in its arguments is reported, and it is still
    // answered as recorded (a refresh re-sends what the recording re-sent).
    if (FirstDifference(ci, ce.args, actual, FieldDir::kIn, same_handle).has_value()) {
      Diverge(ce, CallText(ce.call, ce.args, /*from_driver=*/false),
              CallText(call, actual, /*from_driver=*/true));
    }
    f.cursor = plan_.next_sibling[c];
    return &ce;
  }
  Diverge(ce, CallText(ce.call, ce.args, /*from_driver=*/false),
          CallText(call, actual, /*from_driver=*/true));
  // Resynchronise on a later recorded callback that matches exactly (the ones skipped belong
  // to this divergence); otherwise the driver's callback is an extra one.
  for (int32_t c2 = plan_.next_sibling[c]; c2 >= 0; c2 = plan_.next_sibling[c2]) {
    if (plan_.role[c2] != Role::kCallback) continue;
    const Event& e2 = plan_.events[c2];
    if (e2.call == call && !FirstDifference(ci, e2.args, actual, FieldDir::kIn, same_handle)) {
      f.cursor = plan_.next_sibling[c2];
      return &e2;
    }
  }
  return nullptr;
}

const Event* Session::MatchAsync(CallId call, const format::ArgVec& actual) {
  std::lock_guard<std::mutex> lock(async_mu_);
  const format::CallInfo& ci = *format::GetCall(call);
  auto same_handle = [](uint64_t rec, uint64_t act, const FieldInfo&) { return rec == act; };
  if (async_cursor_ < async_events_.size()) {
    const Event& ce = async_events_[async_cursor_];
    if (ce.call == call) {
      ++async_cursor_;
      if (FirstDifference(ci, ce.args, actual, FieldDir::kIn, same_handle).has_value()) {
        Diverge(ce, CallText(ce.call, ce.args, /*from_driver=*/false),
                CallText(call, actual, /*from_driver=*/true));
      }
      return &ce;
    }
    Diverge(ce, CallText(ce.call, ce.args, /*from_driver=*/false),
            absl::StrCat("the driver called ", CallText(call, actual, /*from_driver=*/true)));
    return nullptr;
  }
  // Nothing expected outside a DDI call: attribute it to the last recorded call.
  const Event& last = plan_.events.back();
  Diverge(last, "no callback outside a DDI call",
          absl::StrCat("the driver called ", CallText(call, actual, /*from_driver=*/true),
                       " outside any DDI call"));
  return nullptr;
}

void Session::IssueChildren(ThreadState* t, uint32_t callback_event) {
  for (int32_t c = plan_.first_child[callback_event]; c >= 0; c = plan_.next_sibling[c]) {
    if (plan_.role[c] == Role::kIssue) Issue(t, static_cast<uint32_t>(c));
  }
}

// ---- Findings -------------------------------------------------------------------------------

void Session::Diverge(const Event& at, std::string expected, std::string actual) {
  // A call that got a kernel turn out of turn (behind a recorded kernel action that never ran)
  // departs because of that earlier departure, reported where it happened.
  if (ThreadState* t = CurrentThread(); t != nullptr && t->out_of_turn) return;
  Divergence d;
  d.seq = at.seq;
  d.tid = at.tid;
  d.call = at.call;
  d.expected = std::move(expected);
  d.actual = std::move(actual);
  if (const format::CallInfo* ci = format::GetCall(at.call)) {
    ForEachField(*ci, at.args, [&](const FieldInfo& f, size_t index, int) {
      const uint64_t id = at.args[index];
      if (f.kind == FieldKind::kHandle && id != 0 &&
          std::find(d.handles.begin(), d.handles.end(), id) == d.handles.end()) {
        d.handles.push_back(id);
      }
    });
  }
  std::lock_guard<std::mutex> lock(findings_mu_);
  divergences_.push_back(std::move(d));
  uint64_t cur = min_divergence_.load(std::memory_order_acquire);
  while (at.seq < cur && !min_divergence_.compare_exchange_weak(cur, at.seq)) {
  }
}

void Session::FailInput(const Event& e, std::string message) {
  std::lock_guard<std::mutex> lock(findings_mu_);
  if (!bad_.has_value() || e.seq < bad_->seq) {
    bad_ = BadInput{e.seq, e.tid, e.call, std::move(message)};
  }
  fatal_.store(true, std::memory_order_release);
}

void Session::Fatal(const Event& e, std::string expected, std::string actual) {
  Diverge(e, std::move(expected), std::move(actual));
  fatal_.store(true, std::memory_order_release);
}

void Session::Collect(ReplayResult* result) {
  result->calls = plan_.covered;
  result->never_returned_seq = plan_.never_returned_seq;
  result->kernel = kernel_.summary();
  if (model_ != nullptr) {
    const KernelSummary m = model_->summary();
    result->kernel.model = true;
    result->kernel.kernel_calls_compared = m.kernel_calls_compared;
    result->kernel.fence_digests_recorded = m.fence_digests_recorded;
    result->kernel.fence_digests_compared = m.fence_digests_compared;
    result->kernel.dma_buffers = m.dma_buffers;
    result->kernel.fences = m.fences;
    result->kernel.gpu_digest = m.gpu_digest;
    result->kernel.checkpoints = m.checkpoints;
    result->kernel.model_ns = static_cast<uint64_t>(model_->model_time().count());
  }
  {
    std::lock_guard<std::mutex> lock(content_mu_);
    result->content = content_;
    // By recorded position; one Unmap makes at most one note.
    std::stable_sort(content_notes_.begin(), content_notes_.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [seq, note] : content_notes_) {
      result->content.notes.push_back(absl::StrCat("seq ", seq, ": ", note));
    }
  }
  {
    std::lock_guard<std::mutex> lock(findings_mu_);
    // By recorded position; findings at one position come from the one thread that replays
    // that call, in the order they were made.
    std::stable_sort(divergences_.begin(), divergences_.end(),
                     [](const Divergence& a, const Divergence& b) { return a.seq < b.seq; });
    if (bad_.has_value()) {
      result->outcome = Outcome::kBadInput;
      result->bad_seq = bad_->seq;
      result->bad_tid = bad_->tid;
      result->bad_call = bad_->call;
      result->bad_message = bad_->message;
    } else if (!divergences_.empty()) {
      result->outcome = Outcome::kDivergent;
    }
    result->divergences = divergences_;
    if (!options_.keep_going && result->divergences.size() > 1) result->divergences.resize(1);
  }
  // The driver's own findings, with replay addresses replaced by recorded handle tokens and
  // without the driver's call numbers ("seq=N": a process-wide count that depends on what ran
  // before in the process and, in recorded mode, on the interleaving).
  std::vector<std::string> lines = driver_->Violations();
  std::lock_guard<std::mutex> lock(memory_mu_);
  for (std::string& line : lines) {
    std::string out;
    size_t i = 0;
    while (i < line.size()) {
      if (line.compare(i, 5, " seq=") == 0) {
        i += 5;
        while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) ++i;
      } else if (line.compare(i, 2, "0x") == 0) {
        size_t j = i + 2;
        uint64_t v = 0;
        while (j < line.size() && std::isxdigit(static_cast<unsigned char>(line[j])) &&
               j - i < 18) {
          const char c = static_cast<char>(std::tolower(line[j]));
          v = v * 16 + static_cast<uint64_t>(c <= '9' ? c - '0' : c - 'a' + 10);
          ++j;
        }
        uint64_t id = 0;
        if (auto it = id_of_raw_.find(v); it != id_of_raw_.end()) {
          id = it->second;
        } else if (v >= runtime_base_ && v < runtime_base_ + runtime_bytes_) {
          id = (v - runtime_base_) / 16;
        }
        if (id != 0 && id < slot_count_) {
          absl::StrAppend(&out, plan_.handles->Token(id));
        } else if (v > 0xffffffffu) {
          absl::StrAppend(&out, "<address>");
        } else {
          absl::StrAppend(&out, line.substr(i, j - i));
        }
        i = j;
      } else {
        out.push_back(line[i++]);
      }
    }
    result->driver_violations.push_back(std::move(out));
  }
  // The kernel model's own findings (R74-R78): what the driver did to the kernel.
  if (model_ != nullptr) {
    for (std::string& line : model_->Violations()) {
      result->driver_violations.push_back(std::move(line));
    }
  }
  std::sort(result->driver_violations.begin(), result->driver_violations.end());
}

}  // namespace cltrace::replay::internal
