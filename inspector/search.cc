#include "inspector/search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace cltrace::inspector {

absl::StatusOr<uint64_t> ParseSeqInput(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  std::string digits;
  for (char c : text) {
    if (c == ',' || c == ' ' || c == '\'' || c == '_') continue;
    digits.push_back(c);
  }
  uint64_t seq = 0;
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), absl::ascii_isdigit) ||
      !absl::SimpleAtoi(digits, &seq))
    return absl::InvalidArgumentError(
        absl::StrCat("\"", text, "\" is not a seq (digits, e.g. 12345 or 12,345)"));
  return seq;
}

absl::StatusOr<int64_t> GoToSeq(const TraceModel& model, absl::string_view text) {
  absl::StatusOr<uint64_t> seq = ParseSeqInput(text);
  if (!seq.ok()) return seq.status();
  if (model.call_count() == 0) return absl::InvalidArgumentError("the trace has no calls");
  if (*seq < model.first_seq() || *seq >= model.end_seq())
    return absl::InvalidArgumentError(absl::StrCat("seq ", *seq, " is outside the trace (seq ",
                                                   model.first_seq(), " .. ", model.end_seq() - 1,
                                                   ")"));
  return model.EventAtOrBefore(*seq);
}

void CallSearch::Start(const TraceModel& model, const CallFilterSpec& spec, int64_t from,
                       bool backwards) {
  filter_.Reset(model, spec);
  n_ = model.call_count();
  backwards_ = backwards;
  wrapped_ = false;
  examined_ = 0;
  result_ = -1;
  done_ = spec.empty() || n_ == 0;
  const int64_t n = static_cast<int64_t>(n_);
  if (from < 0 || from >= n) {
    next_ = backwards ? n - 1 : 0;
    examined_ = 0;
  } else {
    next_ = backwards ? from - 1 : from + 1;
  }
}

bool CallSearch::Step(size_t max_events) {
  const int64_t n = static_cast<int64_t>(n_);
  for (size_t k = 0; k < max_events && !done_; ++k) {
    if (examined_ >= n_) {
      done_ = true;  // every call examined once: none matches
      break;
    }
    if (next_ >= n || next_ < 0) {
      next_ = backwards_ ? n - 1 : 0;
      wrapped_ = true;
    }
    ++examined_;
    if (filter_.Matches(static_cast<size_t>(next_))) {
      result_ = next_;
      done_ = true;
      break;
    }
    next_ += backwards_ ? -1 : 1;
  }
  return done_;
}

int64_t FindCall(const TraceModel& model, const CallFilterSpec& spec, int64_t from,
                 bool backwards) {
  CallSearch s;
  s.Start(model, spec, from, backwards);
  while (!s.Step(std::numeric_limits<size_t>::max())) {
  }
  return s.result();
}

bool CallIsOnRow(const TraceModel& model, int row, size_t event) {
  const Row& r = model.rows()[static_cast<size_t>(row)];
  bool handle = false, context = r.kind != RowKind::kLocal || r.context == 0;
  absl::StatusOr<std::shared_ptr<const format::Event>> e = model.DecodeEvent(event);
  if (!e.ok()) return false;
  ForEachHandle(**e, [&](uint64_t h) {
    handle = handle || h == r.handle;
    context = context || h == r.context;
  });
  return handle && context;
}

int64_t NearestCallOnRow(const TraceModel& model, int row, double seq, size_t max_scan) {
  const int64_t n = static_cast<int64_t>(model.call_count());
  if (n == 0 || row < 0 || row >= static_cast<int>(model.rows().size())) return -1;
  auto seq_of = [&](int64_t i) {
    return static_cast<double>(model.Call(static_cast<size_t>(i)).seq);
  };
  int64_t best = -1;
  double best_d = std::numeric_limits<double>::infinity();
  auto consider = [&](int64_t i) {
    if (i < 0 || i >= n || !CallIsOnRow(model, row, static_cast<size_t>(i))) return;
    const double d = std::abs(seq_of(i) - seq);
    if (d < best_d || (d == best_d && i < best)) {
      best = i;
      best_d = d;
    }
  };
  // The row's state changes are calls on its handle: the ones around `seq` bound the scan.
  const std::vector<Span>& spans = model.rows()[row].spans;
  const uint64_t s = seq <= 0 ? 0 : static_cast<uint64_t>(std::floor(seq));
  auto after = std::upper_bound(spans.begin(), spans.end(), s,
                                [](uint64_t v, const Span& sp) { return v < sp.from; });
  if (after != spans.end()) consider(model.EventAt(after->from));
  if (after != spans.begin()) consider(model.EventAt(std::prev(after)->from));
  // Outward from `seq`, each side until it is farther than the best so far.
  int64_t left = model.EventAtOrBefore(s), right = left + 1;
  const int64_t left_stop = left - static_cast<int64_t>(std::min<size_t>(max_scan, n));
  const int64_t right_stop = right + static_cast<int64_t>(std::min<size_t>(max_scan, n));
  while ((left >= 0 && left > left_stop) || (right < n && right < right_stop)) {
    const double dl = left >= 0 && left > left_stop ? seq - seq_of(left)
                                                    : std::numeric_limits<double>::infinity();
    const double dr = right < n && right < right_stop ? seq_of(right) - seq
                                                      : std::numeric_limits<double>::infinity();
    if (std::min(dl, dr) > best_d) break;
    if (dl <= dr) {
      consider(left--);
    } else {
      consider(right++);
    }
  }
  return best;
}

}  // namespace cltrace::inspector
