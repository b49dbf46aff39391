#include "format/trace_diff.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "ddi/call_traits.h"
#include "ddi/catalog.h"
#include "format/jsonl.h"
#include "format/stable_names.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace cltrace::format {
namespace {

struct Pending {
  Event raw;         // the trace's ids
  Event normalized;  // names of the side's Normalizer, thread number as tid
  uint32_t thread = 0;
  uint64_t index = 0;         // 1-based, per thread
  uint64_t parent_index = 0;  // index of the call it was made in; 0: top level
};

struct Side {
  explicit Side(SeqStream& stream) : s(stream) {}

  // Reads the next event into its thread's queue; false at the end.
  bool Pull(absl::Status* error) {
    if (done) return false;
    Event e;
    if (!s.Next(&e)) {
      done = true;
      return false;
    }
    if (absl::Status st = CheckEventLayout(e); !st.ok()) {
      *error =
          absl::InvalidArgumentError(absl::StrCat(s.path(), ": seq ", e.seq, ": ", st.message()));
      done = true;
      return false;
    }
    ++calls;
    while (!ends.empty() && ends.front().first < e.seq) {
      std::pop_heap(ends.begin(), ends.end(), std::greater<>());
      open.erase(ends.back().second);
      ends.pop_back();
    }
    Pending p;
    p.raw = e;
    p.normalized = e;
    norm.Rewrite(&p.normalized, s.handles());
    p.thread = p.normalized.tid;
    p.index = ++counts[p.thread];
    if (e.parent != 0) {
      auto it = open.find(e.parent);
      p.parent_index = it == open.end() ? 0 : it->second;
    }
    if (e.end != 0) {
      open[e.seq] = p.index;
      ends.emplace_back(e.end, e.seq);
      std::push_heap(ends.begin(), ends.end(), std::greater<>());
    }
    last_thread = p.thread;
    queues[p.thread].push_back(std::move(p));
    return true;
  }

  std::string Text(const Event& normalized) const {
    return EventToJsonl(normalized, norm.names(), s.strings());
  }

  SeqStream& s;
  Normalizer norm;
  bool done = false;
  uint64_t calls = 0;
  uint32_t last_thread = 0;
  std::map<uint32_t, std::deque<Pending>> queues;
  absl::flat_hash_map<uint32_t, uint64_t> counts;
  absl::flat_hash_map<uint64_t, uint64_t> open;     // seq -> index, calls not returned
  std::vector<std::pair<uint64_t, uint64_t>> ends;  // min-heap of (end, seq)
};

std::string CallName(CallId id) {
  const CallInfo* ci = GetCall(id);
  return ci != nullptr ? ci->name : "?";
}

// Calls whose handle arguments (but the first: the device or adapter they go through) may be
// new handles: a value the allocator reused in one run and not in the other pairs anew there.
bool CreatesHandles(CallId id) {
  switch (ddi::TraitsOf(id).role) {
    case ddi::CallRole::kCreate:
    case ddi::CallRole::kOpen:
    case ddi::CallRole::kCreateDevice:
    case ddi::CallRole::kCreateContext:
    case ddi::CallRole::kRecycleCreateContext:
    case ddi::CallRole::kCreateCommandList:
    case ddi::CallRole::kRecycleCreateCommandList:
    case ddi::CallRole::kAllocate:
    case ddi::CallRole::kCreateKernelContext:
      return true;
    default: {
      const CallInfo* ci = GetCall(id);
      if (ci == nullptr) return false;
      const absl::string_view name = ci->name;
      return absl::StartsWith(name, "Create") || absl::StartsWith(name, "DxgkDdiCreate") ||
             absl::StartsWith(name, "DxgkDdiOpen") || absl::StartsWith(name, "OpenAdapter");
    }
  }
}

bool EndsHandles(CallId id) {
  switch (ddi::TraitsOf(id).role) {
    case ddi::CallRole::kDestroy:
    case ddi::CallRole::kDestroyCommandList:
    case ddi::CallRole::kDestroyDevice:
      return true;
    default:
      return false;
  }
}

class Differ {
 public:
  Differ(SeqStream& a, SeqStream& b, const DiffOptions& options, std::ostream& out)
      : a_(a), b_(b), options_(options), out_(out) {}

  absl::StatusOr<DiffSummary> Run() {
    absl::Status error;
    while (!a_.done || !b_.done) {
      if (a_.Pull(&error)) Match(a_.last_thread);
      if (!error.ok()) return error;
      if (b_.Pull(&error)) Match(b_.last_thread);
      if (!error.ok()) return error;
      if (!options_.all && summary_.differences > 0) break;
    }
    for (Side* side : {&a_, &b_}) {
      if (!side->s.status().ok())
        return absl::FailedPreconditionError(
            absl::StrCat(side->s.path(), ": ", side->s.status().message()));
    }
    if (options_.all || summary_.differences == 0) {
      // What one trace has and the other lacks, thread by thread.
      std::map<uint32_t, bool> threads;
      for (const auto& [t, q] : a_.queues) threads[t] = true;
      for (const auto& [t, q] : b_.queues) threads[t] = true;
      for (const auto& [t, unused] : threads) {
        std::deque<Pending>& qa = a_.queues[t];
        std::deque<Pending>& qb = b_.queues[t];
        for (const Pending& p : qa) {
          Difference(t, p.index, &p, nullptr, "only in A");
          if (!options_.all) break;
        }
        if (!options_.all && summary_.differences > 0) break;
        for (const Pending& p : qb) {
          Difference(t, p.index, nullptr, &p, "only in B");
          if (!options_.all) break;
        }
        if (!options_.all && summary_.differences > 0) break;
      }
    }
    summary_.calls_a = a_.calls;
    summary_.calls_b = b_.calls;
    summary_.threads_a = a_.counts.size();
    summary_.threads_b = b_.counts.size();
    Report();
    return summary_;
  }

 private:
  void Match(uint32_t thread) {
    std::deque<Pending>& qa = a_.queues[thread];
    std::deque<Pending>& qb = b_.queues[thread];
    while (!qa.empty() && !qb.empty()) {
      if (!options_.all && summary_.differences > 0) return;
      std::string what = Compare(qa.front(), qb.front());
      if (!what.empty()) Difference(thread, qa.front().index, &qa.front(), &qb.front(), what);
      std::deque<std::pair<Event, Event>>& recent = recent_[thread];
      recent.emplace_back(qa.front().normalized, qb.front().normalized);
      if (recent.size() > options_.context) recent.pop_front();
      qa.pop_front();
      qb.pop_front();
    }
  }

  // "" when the calls are the same.
  std::string Compare(const Pending& pa, const Pending& pb) {
    const Event& a = pa.raw;
    const Event& b = pb.raw;
    if (a.call != b.call)
      return absl::StrCat("function: A ", CallName(a.call), ", B ", CallName(b.call));
    if (pa.parent_index != pb.parent_index) {
      auto where = [](uint64_t i) {
        return i == 0 ? std::string("top level") : absl::StrCat("inside call ", i);
      };
      return absl::StrCat("nesting: A ", where(pa.parent_index), ", B ", where(pb.parent_index));
    }
    if ((a.end == 0) != (b.end == 0))
      return absl::StrCat("A's call ", a.end == 0 ? "never returned" : "returned", ", B's ",
                          b.end == 0 ? "never returned" : "returned");
    if (a.ret != b.ret) {
      return absl::StrCat("return value: A ", RetToText(a), ", B ", RetToText(b));
    }
    if (a_.s.contents().Token(a.content) != b_.s.contents().Token(b.content))
      return "content bytes";
    if (a.args.size() != b.args.size()) return "arguments (array lengths)";
    std::vector<std::pair<const FieldInfo*, uint64_t>> fa, fb;
    Event ca = a, cb = b;
    ForEachField(&ca, [&](const FieldInfo& f, uint64_t* v) { fa.emplace_back(&f, *v); });
    ForEachField(&cb, [&](const FieldInfo& f, uint64_t* v) { fb.emplace_back(&f, *v); });
    std::string what;
    const bool creates = CreatesHandles(a.call);
    bool first_handle = true;
    for (size_t i = 0; i < fa.size() && i < fb.size() && what.empty(); ++i) {
      const FieldInfo& f = *fa[i].first;
      const uint64_t va = fa[i].second, vb = fb[i].second;
      bool same = true;
      switch (f.kind) {
        case FieldKind::kHandle:
          same = PairHandles(va, vb, (creates && !first_handle) || f.dir == FieldDir::kOut);
          first_handle = false;
          if (!same) {
            auto name = [](const Side& s, uint64_t h) {
              absl::string_view n = s.norm.NameOf(h);
              return h == 0 ? std::string("NULL") : std::string(n.empty() ? "?" : n);
            };
            return absl::StrCat("argument ", f.name, ": A ", name(a_, va), ", B ", name(b_, vb),
                                " (not the same handle)");
          }
          break;
        case FieldKind::kPtr:
          same = (va == 0) == (vb == 0) && (va > 0xffffffffull || vb > 0xffffffffull || va == vb);
          break;
        case FieldKind::kString:
          same = a_.s.strings().Token(va) == b_.s.strings().Token(vb);
          break;
        default:
          same = va == vb;
      }
      if (!same) what = absl::StrCat("argument ", f.name, ": A ", va, ", B ", vb);
    }
    if (!what.empty()) return what;
    if (EndsHandles(a.call)) {
      // The destroyed handles (every handle but the device, or the only one) pair anew.
      std::vector<size_t> handles;
      for (size_t i = 0; i < fa.size(); ++i)
        if (fa[i].first->kind == FieldKind::kHandle && fa[i].second != 0) handles.push_back(i);
      for (size_t k = handles.size() > 1 ? 1 : 0; k < handles.size(); ++k) {
        a2b_.erase(fa[handles[k]].second);
        b2a_.erase(fb[handles[k]].second);
      }
    }
    return "";
  }

  // Whether ha (of A) and hb (of B) are the same handle; pairs them when both are new, or
  // when `fresh` (a handle the call creates) even if either was paired before.
  bool PairHandles(uint64_t ha, uint64_t hb, bool fresh) {
    if (ha == 0 || hb == 0) return ha == hb;
    auto ia = a2b_.find(ha);
    auto ib = b2a_.find(hb);
    if (ia != a2b_.end() && ia->second == hb) return true;
    if (ia == a2b_.end() && ib == b2a_.end()) {
      a2b_[ha] = hb;
      b2a_[hb] = ha;
      return true;
    }
    if (!fresh) return false;
    if (ia != a2b_.end()) {
      b2a_.erase(ia->second);
      a2b_.erase(ia);
    }
    if (auto jb = b2a_.find(hb); jb != b2a_.end()) {
      a2b_.erase(jb->second);
      b2a_.erase(jb);
    }
    a2b_[ha] = hb;
    b2a_[hb] = ha;
    return true;
  }

  void Difference(uint32_t thread, uint64_t index, const Pending* pa, const Pending* pb,
                  const std::string& what) {
    ++summary_.differences;
    if (summary_.differences == 1) {
      summary_.first_thread = thread;
      summary_.first_index = index;
      summary_.first_seq_a = pa ? pa->raw.seq : 0;
      summary_.first_seq_b = pb ? pb->raw.seq : 0;
      summary_.first_what = what;
      first_a_ = pa ? a_.Text(pa->normalized) : "";
      first_b_ = pb ? b_.Text(pb->normalized) : "";
      for (const auto& [ea, eb] : recent_[thread]) context_.emplace_back(a_.Text(ea), b_.Text(eb));
    }
    if (options_.all && listed_.size() < options_.max_listed) {
      listed_.push_back({thread, index, pa ? pa->raw.seq : 0, pb ? pb->raw.seq : 0, what});
    }
  }

  static std::string Where(uint32_t thread, uint64_t index, uint64_t seq_a, uint64_t seq_b) {
    return absl::StrCat("thread ", thread, " call ", index, " (A seq ",
                        seq_a ? absl::StrCat(seq_a) : std::string("-"), ", B seq ",
                        seq_b ? absl::StrCat(seq_b) : std::string("-"), ")");
  }

  void Report() {
    const DiffSummary& s = summary_;
    if (options_.json) {
      rapidjson::StringBuffer buf;
      rapidjson::Writer<rapidjson::StringBuffer> w(buf);
      auto str = [&](const std::string& v) {
        w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
      };
      auto raw = [&](const std::string& v) {
        if (v.empty()) {
          w.Null();
        } else {
          w.RawValue(v.data(), v.size(), rapidjson::kObjectType);
        }
      };
      // The fields "first" and each "listed" difference share.
      auto where = [&](uint32_t thread, uint64_t index, uint64_t seq_a, uint64_t seq_b,
                       const std::string& what) {
        w.Key("thread");
        w.Uint(thread);
        w.Key("call");
        w.Uint64(index);
        w.Key("seq_a");
        seq_a ? w.Uint64(seq_a) : w.Null();
        w.Key("seq_b");
        seq_b ? w.Uint64(seq_b) : w.Null();
        w.Key("what");
        str(what);
      };
      w.StartObject();
      w.Key("equal");
      w.Bool(s.equal());
      w.Key("calls");
      w.StartArray();
      w.Uint64(s.calls_a);
      w.Uint64(s.calls_b);
      w.EndArray();
      w.Key("threads");
      w.StartArray();
      w.Uint64(s.threads_a);
      w.Uint64(s.threads_b);
      w.EndArray();
      w.Key("differences");
      w.Uint64(s.differences);
      if (!s.equal()) {
        w.Key("first");
        w.StartObject();
        where(s.first_thread, s.first_index, s.first_seq_a, s.first_seq_b, s.first_what);
        w.Key("a");
        raw(first_a_);
        w.Key("b");
        raw(first_b_);
        w.EndObject();
      }
      if (options_.all) {
        w.Key("listed");
        w.StartArray();
        for (const Listed& l : listed_) {
          w.StartObject();
          where(l.thread, l.index, l.seq_a, l.seq_b, l.what);
          w.EndObject();
        }
        w.EndArray();
      }
      w.EndObject();
      out_ << buf.GetString() << "\n";
      return;
    }
    if (s.equal()) {
      out_ << "equal: " << s.calls_a << " calls on " << s.threads_a
           << (s.threads_a == 1 ? " thread" : " threads") << "\n";
      return;
    }
    out_ << "first difference: "
         << Where(s.first_thread, s.first_index, s.first_seq_a, s.first_seq_b) << ": "
         << s.first_what << "\n";
    if (!context_.empty()) out_ << "  before it on thread " << s.first_thread << ":\n";
    for (const auto& [ta, tb] : context_) {
      out_ << "    A " << ta << "\n";
      if (tb != ta) out_ << "    B " << tb << "\n";
    }
    out_ << "  A " << (first_a_.empty() ? std::string("(no such call)") : first_a_) << "\n";
    out_ << "  B " << (first_b_.empty() ? std::string("(no such call)") : first_b_) << "\n";
    if (options_.all) {
      out_ << "differences:\n";
      for (const Listed& l : listed_)
        out_ << "  " << Where(l.thread, l.index, l.seq_a, l.seq_b) << ": " << l.what << "\n";
      if (s.differences > listed_.size())
        out_ << "  ... " << s.differences - listed_.size() << " more\n";
      out_ << s.differences << (s.differences == 1 ? " difference" : " differences") << "; A "
           << s.calls_a << " calls on " << s.threads_a << " threads, B " << s.calls_b
           << " calls on " << s.threads_b << " threads\n";
    }
  }

  struct Listed {
    uint32_t thread;
    uint64_t index;
    uint64_t seq_a, seq_b;
    std::string what;
  };

  Side a_, b_;
  const DiffOptions& options_;
  std::ostream& out_;
  DiffSummary summary_;
  absl::flat_hash_map<uint64_t, uint64_t> a2b_, b2a_;
  std::map<uint32_t, std::deque<std::pair<Event, Event>>> recent_;
  std::string first_a_, first_b_;
  std::vector<std::pair<std::string, std::string>> context_;
  std::vector<Listed> listed_;
};

}  // namespace

absl::StatusOr<DiffSummary> DiffTraces(SeqStream& a, SeqStream& b, const DiffOptions& options,
                                       std::ostream& out) {
  Differ d(a, b, options, out);
  return d.Run();
}

}  // namespace cltrace::format
