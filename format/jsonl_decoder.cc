// JSONL (format/jsonl.h): position resolution. Lines parsed by jsonl_line.cc are checked
// for proper nesting per thread, missing ends are inferred and written positions moved up
// where inferred ends need room (see "Inferring missing ends" in jsonl.h); JsonlDecoder,
// ParseJsonl and JsonlReader.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <functional>
#include <iterator>
#include <limits>
#include <memory>
#include <queue>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "format/jsonl.h"
#include "format/jsonl_internal.h"
#include "format/status_macros.h"

namespace cltrace::format {

using jsonl_internal::EndKind;
using jsonl_internal::kMaxJsonInt;
using jsonl_internal::LineRecord;
using jsonl_internal::ParseLine;
using jsonl_internal::Point;

class JsonlDecoder::Impl {
 public:
  Impl() = default;

  absl::Status AddLine(absl::string_view text) {
    if (!status_.ok()) return status_;
    if (finished_) return absl::FailedPreconditionError("AddLine after Finish");
    ++lines_;
    absl::ConsumeSuffix(&text, "\r");
    if (absl::StripAsciiWhitespace(text).empty()) return absl::OkStatus();
    LineRecord rec;
    rec.line = lines_;
    absl::Status st = ParseLine(text, &handles_, &strings_, &contents_, &rec);
    if (st.ok() && rec.event.seq <= last_seq_)
      st = absl::InvalidArgumentError(absl::StrCat(
          "seq ", rec.event.seq, " is not greater than the previous line's seq ", last_seq_));
    if (!st.ok()) {
      state_intact_ = true;
      return Fail(st);
    }
    return Fail(Accept(std::move(rec)));
  }

  bool FinishBeforeError() {
    if (status_.ok() || !state_intact_ || finished_) return false;
    absl::Status error = status_;
    status_ = absl::OkStatus();
    absl::Status st = Finish();
    status_ = error;
    return st.ok();
  }

  absl::Status Finish() {
    if (!status_.ok()) return status_;
    if (finished_) return absl::OkStatus();
    if (last_seq_ == 0) {
      // Like an empty .cltrace: a trace without calls is no trace (a replay of it would be
      // "identical" and a check "clean", both meaningless).
      status_ = absl::InvalidArgumentError(
          lines_ == 0 ? std::string("empty file: no call (a JSONL trace holds at least one call)")
                      : absl::StrCat("no call in ", lines_,
                                     " blank lines (a JSONL trace holds at least one call)"));
      return status_;
    }
    absl::Status st = Advance(std::numeric_limits<uint64_t>::max(), nullptr);
    if (st.ok()) {
      // Only calls with inferred or null ends are left in flight. Those below a call that
      // never returned never returned either; the rest return now, innermost first.
      for (auto& [tid, stack] : stacks_) {
        bool below_null = false;
        while (!stack.empty()) {
          Frame& top = stack.back();
          if (top.kind == EndKind::kNull) {
            below_null = true;
          } else if (below_null) {
            top.rec->end_kind = EndKind::kNull;
            unresolved_.erase(top.seq);
          } else {
            Close(stack);
            continue;  // Close popped it
          }
          stack.pop_back();
        }
      }
      finished_ = true;
      st = Drain();
    }
    return Fail(st, /*at_end=*/true);
  }

  bool Next(Event* event) {
    if (ready_.empty()) return false;
    *event = std::move(ready_.front());
    ready_.pop_front();
    return true;
  }

  const TokenTable& handles() const { return handles_; }
  const TokenTable& strings() const { return strings_; }
  const TokenTable& contents() const { return contents_; }
  int64_t lines() const { return lines_; }

 private:
  struct Frame {
    uint64_t seq;
    EndKind kind;
    uint64_t end;  // kGiven
    int64_t line;
    LineRecord* rec;  // valid while the frame is on the stack for kInferred
  };
  struct Given {
    uint64_t end;
    uint64_t seq;
    uint32_t tid;
    int64_t line;
    bool operator>(const Given& o) const { return end > o.end; }
  };

  // Records the first error, prefixed with where it was found.
  absl::Status Fail(absl::Status st, bool at_end = false) {
    if (!st.ok()) {
      status_ = absl::Status(
          st.code(), at_end ? absl::StrCat("end of input (after line ", lines_, "): ", st.message())
                            : absl::StrCat("line ", lines_, ": ", st.message()));
      return status_;
    }
    return st;
  }

  absl::Status Accept(LineRecord rec) {
    const uint64_t seq = rec.event.seq;
    const uint32_t tid = rec.event.tid;
    const uint64_t parent = rec.event.parent;
    CLTRACE_RETURN_IF_ERROR(Advance(seq, &rec));
    last_seq_ = seq;
    timeline_.push_back(seq);
    std::vector<Frame>& stack = stacks_[tid];
    if (parent != 0) {
      size_t i = stack.size();
      while (i > 0 && stack[i - 1].seq != parent) --i;
      if (i == 0) {
        std::string innermost = stack.empty() ? std::string("none")
                                              : absl::StrCat("seq ", stack.back().seq, " (line ",
                                                             stack.back().line, ")");
        return absl::InvalidArgumentError(
            absl::StrCat("parent ", parent, " is not a call in flight on thread ", tid,
                         " (innermost call in flight there: ", innermost, ")"));
      }
      while (stack.size() > i) CLTRACE_RETURN_IF_ERROR(PopReturned(stack, rec.event));
      // Checked here too (not only when the parent's end passes) so that the message
      // points at this line.
      const Frame& p = stack.back();
      if (p.kind == EndKind::kGiven && rec.end_kind == EndKind::kNull)
        return absl::InvalidArgumentError(
            absl::StrCat("this call never returns (end null) but its parent, seq ", p.seq,
                         " (line ", p.line, "), returns at ", p.end));
      if (p.kind == EndKind::kGiven && rec.end_kind == EndKind::kGiven && rec.event.end > p.end)
        return absl::InvalidArgumentError(absl::StrCat("end ", rec.event.end,
                                                       " is after the end of its parent, seq ",
                                                       p.seq, " (line ", p.line, "): ", p.end));
    } else {
      while (!stack.empty()) CLTRACE_RETURN_IF_ERROR(PopReturned(stack, rec.event));
    }
    pending_.push_back(std::move(rec));
    const LineRecord& stored = pending_.back();
    stack.push_back(Frame{seq, stored.end_kind, stored.event.end, stored.line, &pending_.back()});
    if (stored.end_kind == EndKind::kGiven) {
      ends_.push(Given{stored.event.end, seq, tid, stored.line});
    } else if (stored.end_kind == EndKind::kInferred) {
      unresolved_.insert(seq);
    }
    return Drain();
  }

  // The innermost call of `stack` must have returned before `next` was entered on its thread.
  absl::Status PopReturned(std::vector<Frame>& stack, const Event& next) {
    const Frame& top = stack.back();
    if (top.kind == EndKind::kGiven)
      return absl::InvalidArgumentError(
          absl::StrCat("seq ", next.seq, " is entered on thread ", next.tid, " while seq ", top.seq,
                       " (line ", top.line, ") is in flight there until ", top.end,
                       "; a call made inside it must name it (or a call inside it) as \"parent\""));
    if (top.kind == EndKind::kNull)
      return absl::InvalidArgumentError(
          absl::StrCat("seq ", next.seq, " is entered on thread ", next.tid, " outside seq ",
                       top.seq, " (line ", top.line, "), which never returned (end null)"));
    Close(stack);
    return absl::OkStatus();
  }

  // Resolves the inferred end of the innermost frame and pops it.
  void Close(std::vector<Frame>& stack) {
    Frame top = stack.back();
    stack.pop_back();
    LineRecord& rec = *top.rec;
    Point base{top.seq, 0};
    if (rec.latest_child > base) base = rec.latest_child;
    rec.inferred_end = Point{base.pos, base.rank + 1};
    uint32_t& chain = chain_len_[base.pos];
    chain = std::max(chain, rec.inferred_end.rank);
    unresolved_.erase(top.seq);
    ReportToParent(stack, rec.inferred_end);
  }

  void ReportToParent(std::vector<Frame>& stack, Point end) {
    if (stack.empty() || stack.back().kind != EndKind::kInferred) return;
    LineRecord& parent = *stack.back().rec;
    if (end > parent.latest_child) parent.latest_child = end;
  }

  // Passes every given end before `limit`: those calls return, in order.
  absl::Status Advance(uint64_t limit, const LineRecord* next) {
    while (!ends_.empty() && ends_.top().end <= limit) {
      Given g = ends_.top();
      ends_.pop();
      if (next != nullptr && g.end == limit)
        return absl::InvalidArgumentError(
            absl::StrCat("seq ", limit, " is also the end of seq ", g.seq, " (line ", g.line, ")"));
      if (!ends_.empty() && ends_.top().end == g.end)
        return absl::InvalidArgumentError(
            absl::StrCat("end ", g.end, " is used twice (seq ", g.seq, " on line ", g.line,
                         " and seq ", ends_.top().seq, " on line ", ends_.top().line, ")"));
      std::vector<Frame>& stack = stacks_[g.tid];
      while (!stack.empty() && stack.back().seq != g.seq) {
        const Frame& top = stack.back();
        if (top.kind == EndKind::kInferred) {
          Close(stack);
          continue;
        }
        if (top.kind == EndKind::kNull)
          return absl::InvalidArgumentError(absl::StrCat(
              "seq ", top.seq, " (line ", top.line, ") never returned (end null) but seq ", g.seq,
              " (line ", g.line, "), which it was made inside, returns at ", g.end));
        return absl::InvalidArgumentError(absl::StrCat(
            "seq ", top.seq, " (line ", top.line, ") returns at ", top.end, ", after seq ", g.seq,
            " (line ", g.line, "), which it was made inside, returns at ", g.end));
      }
      if (!stack.empty()) {
        stack.pop_back();
        ReportToParent(stack, Point{g.end, 0});
      }
      timeline_.push_back(g.end);
    }
    return absl::OkStatus();
  }

  // Fixes the offsets of finished gaps and moves events whose positions are final to ready_.
  absl::Status Drain() {
    while (!timeline_.empty()) {
      uint64_t u = timeline_.front();
      // An unresolved inferred end with seq <= u may still join the chain after u.
      if (!unresolved_.empty() && *unresolved_.begin() <= u) break;
      if (timeline_.size() < 2 && !finished_) break;
      uint32_t k = 0;
      if (auto it = chain_len_.find(u); it != chain_len_.end()) {
        k = it->second;
        chain_len_.erase(it);
      }
      if (timeline_.size() >= 2) {
        // The next written position moves up just far enough to clear the gap's ends; a
        // move is absorbed again by later gaps with spare room.
        uint64_t next = timeline_[1];
        uint64_t lowest = u + offset_ + k + 1;
        uint64_t offset = lowest > next ? lowest - next : 0;
        if (offset != offset_) {
          offset_ = offset;
          breaks_.push_back({next, offset_});
        }
      }
      timeline_.pop_front();
    }
    uint64_t known = timeline_.empty() ? std::numeric_limits<uint64_t>::max() : timeline_.front();
    if (!finished_ && timeline_.empty()) known = 0;
    while (!pending_.empty()) {
      LineRecord& rec = pending_.front();
      Event& e = rec.event;
      if (e.seq > known) break;
      uint64_t end = 0;
      switch (rec.end_kind) {
        case EndKind::kGiven:
          if (e.end > known) return absl::OkStatus();
          end = Final(e.end);
          break;
        case EndKind::kNull:
          break;
        case EndKind::kInferred:
          if (rec.inferred_end.rank == 0 || rec.inferred_end.pos > known) return absl::OkStatus();
          end = Final(rec.inferred_end.pos) + rec.inferred_end.rank;
          break;
      }
      e.seq = Final(e.seq);
      e.end = end;
      if (e.parent != 0) e.parent = Final(e.parent);
      if (std::max(e.seq, e.end) > kMaxJsonInt)
        return absl::InvalidArgumentError(
            "positions pass 2^53 after making room for inferred ends; give \"end\" values");
      ready_.push_back(std::move(e));
      pending_.pop_front();
    }
    return absl::OkStatus();
  }

  uint64_t Final(uint64_t pos) const {
    auto it = std::upper_bound(
        breaks_.begin(), breaks_.end(), pos,
        [](uint64_t p, const std::pair<uint64_t, uint64_t>& b) { return p < b.first; });
    return it == breaks_.begin() ? pos : pos + std::prev(it)->second;
  }

  TokenTable handles_;
  TokenTable strings_;
  TokenTable contents_;
  absl::Status status_;
  bool state_intact_ = false;  // the error came before the bad line changed any state
  bool finished_ = false;
  int64_t lines_ = 0;
  uint64_t last_seq_ = 0;

  // Not yet emitted, seq order. A deque: frames point at records, and pointers into a deque
  // stay valid while only its ends change.
  std::deque<LineRecord> pending_;
  std::deque<Event> ready_;
  absl::flat_hash_map<uint32_t, std::vector<Frame>> stacks_;  // calls in flight per thread
  std::priority_queue<Given, std::vector<Given>, std::greater<Given>> ends_;  // given ends ahead
  std::set<uint64_t> unresolved_;  // seqs of inferred ends not yet placed
  std::deque<uint64_t> timeline_;  // written positions whose gap is not settled yet
  absl::flat_hash_map<uint64_t, uint32_t> chain_len_;  // inferred ends per gap
  uint64_t offset_ = 0;  // how far the last settled written position moved up
  std::vector<std::pair<uint64_t, uint64_t>> breaks_;  // (first position, offset from there)
};

JsonlDecoder::JsonlDecoder() : impl_(std::make_unique<Impl>()) {}
JsonlDecoder::~JsonlDecoder() = default;
absl::Status JsonlDecoder::AddLine(absl::string_view line) { return impl_->AddLine(line); }
absl::Status JsonlDecoder::Finish() { return impl_->Finish(); }
bool JsonlDecoder::Next(Event* event) { return impl_->Next(event); }
bool JsonlDecoder::FinishBeforeError() { return impl_->FinishBeforeError(); }
const TokenTable& JsonlDecoder::handles() const { return impl_->handles(); }
const TokenTable& JsonlDecoder::strings() const { return impl_->strings(); }
const TokenTable& JsonlDecoder::contents() const { return impl_->contents(); }
int64_t JsonlDecoder::lines() const { return impl_->lines(); }

absl::StatusOr<JsonlTrace> ParseJsonl(absl::string_view text) {
  JsonlDecoder decoder;
  JsonlTrace trace;
  Event e;
  // A final '\n' ends the last line rather than starting an empty one.
  absl::ConsumeSuffix(&text, "\n");
  if (!text.empty()) {
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      CLTRACE_RETURN_IF_ERROR(decoder.AddLine(line));
      while (decoder.Next(&e)) trace.events.push_back(std::move(e));
    }
  }
  CLTRACE_RETURN_IF_ERROR(decoder.Finish());
  while (decoder.Next(&e)) trace.events.push_back(std::move(e));
  trace.handles = decoder.handles();
  trace.strings = decoder.strings();
  trace.contents = decoder.contents();
  trace.lines = decoder.lines();
  return trace;
}

absl::StatusOr<std::unique_ptr<JsonlReader>> JsonlReader::Open(const std::string& path) {
  std::unique_ptr<JsonlReader> r(new JsonlReader());
  r->in_.open(path, std::ios::binary);
  if (!r->in_) return absl::NotFoundError(absl::StrCat("cannot open: ", std::strerror(errno)));
  return r;
}

bool JsonlReader::Next(Event* event) {
  while (true) {
    if (decoder_.Next(event)) return true;
    if (done_ || !status_.ok()) return false;
    std::string line;
    if (std::getline(in_, line)) {
      bytes_ += line.size() + (in_.eof() ? 0 : 1);
      status_ = decoder_.AddLine(line);
      if (!status_.ok()) decoder_.FinishBeforeError();
    } else {
      done_ = true;
      status_ = in_.bad() ? absl::DataLossError("read error") : decoder_.Finish();
    }
  }
}

}  // namespace cltrace::format
