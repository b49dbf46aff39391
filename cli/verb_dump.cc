// cltrace dump FILE: the calls of a trace, one per line, in seq order.
#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/args.h"
#include "cli/progress.h"
#include "cli/trace_input.h"
#include "cli/verb.h"
#include "ddi/catalog.h"
#include "format/jsonl.h"

namespace cltrace::cli {
namespace {

constexpr char kUsage[] =
    "usage: cltrace dump FILE [--from SEQ] [--count N] [--json] [--salvage] [--quiet]\n"
    "\n"
    "Prints the calls of a trace (.cltrace or .jsonl) in seq order, one per line: seq, end,\n"
    "thread, then the call with its arguments (symbolic enums and HRESULTs, handle tokens)\n"
    "and its return value. Calls made inside another call (callbacks, state refreshes) are\n"
    "indented under it. A call that never returned shows '-' as its end. A call's annotation\n"
    "(the API call that caused it, recorder notes such as R5 table rewrites) follows '#'.\n"
    "\n"
    "  --from SEQ   start at the first call with seq >= SEQ\n"
    "  --count N    print at most N calls\n"
    "  --json       print canonical JSONL lines instead (the form `cltrace export` writes)\n"
    "  --salvage    skip corrupt chunks of a .cltrace instead of stopping at the first one\n"
    "  --quiet      no progress bar (shown on a terminal when reading takes over a second)\n"
    "\n"
    "exit: 0 ok; 1 --salvage had to skip data; 2 unreadable or damaged file (the calls read\n"
    "before the damage are still printed) or bad usage\n";

// Nesting depth of each call (a call made inside another is one deeper), for calls in seq
// order, holding only the calls still open. A parent that was not read (damaged file) counts
// as depth 0, so its calls indent one level. A parent passed over (below --from) or already
// forgotten (a parent that returned before its callee was entered: malformed nesting) is
// looked up in the file.
class Depths {
 public:
  explicit Depths(format::TraceReader* reader) : reader_(reader) {}

  int Of(const format::Event& e) {
    while (!open_.empty() && open_.front().first < e.seq) {
      std::pop_heap(open_.begin(), open_.end(), std::greater<>());
      depth_.erase(open_.back().second);
      open_.pop_back();
    }
    const int d = e.parent == 0 ? 0 : ParentDepth(e.parent, 0) + 1;
    depth_[e.seq] = d;
    if (e.end != 0) {
      open_.emplace_back(e.end, e.seq);
      std::push_heap(open_.begin(), open_.end(), std::greater<>());
    }
    return d;
  }

 private:
  // Depth of the call entered at `seq`, or 0 if it was never read.
  int ParentDepth(uint64_t seq, int hops) {
    if (auto it = depth_.find(seq); it != depth_.end()) return it->second;
    if (auto it = looked_up_.find(seq); it != looked_up_.end()) return it->second;
    int d = 0;
    if (reader_ != nullptr && hops < 64) {
      absl::StatusOr<format::Event> p = reader_->FindBySeq(seq);
      if (p.ok()) d = p->parent == 0 ? 0 : ParentDepth(p->parent, hops + 1) + 1;
    }
    looked_up_[seq] = d;
    return d;
  }

  format::TraceReader* reader_;
  absl::flat_hash_map<uint64_t, int> depth_;         // calls still open
  absl::flat_hash_map<uint64_t, int> looked_up_;     // parents found in the file
  std::vector<std::pair<uint64_t, uint64_t>> open_;  // (end, seq), min-heap by end
};

// The widest seq, end and tid of the calls to print (the columns' widths).
struct Widths {
  int seq = 3, end = 3, tid = 3;
  void Add(const format::Event& e) {
    seq = std::max<int>(seq, absl::StrCat(e.seq).size());
    end = std::max<int>(end, absl::StrCat(e.end).size());
    tid = std::max<int>(tid, absl::StrCat(e.tid).size());
  }
};

// Up to this many calls are held to size the columns; more are read twice.
constexpr uint64_t kHeldCalls = uint64_t{1} << 16;

int RunDump(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ArgSpec spec = ArgSpec("dump", kUsage)
                     .Options({"--from", "--count"})
                     .Flags({"--json", "--salvage", "--quiet"})
                     .Positional(1, 1);
  ParsedArgs parsed;
  if (std::optional<int> done = ParseVerbArgs(args, spec, &parsed, out, err)) return *done;
  uint64_t from = 0, count = UINT64_MAX;
  for (auto [name, target] : {std::pair{"--from", &from}, std::pair{"--count", &count}}) {
    if (std::optional<std::string> v = parsed.Option(name)) {
      absl::StatusOr<uint64_t> n = ParseCount(name, *v);
      if (!n.ok()) {
        err << "cltrace dump: " << n.status().message() << "\n";
        return kExitBadInput;
      }
      *target = *n;
    }
  }
  const std::string& path = parsed.positional[0];
  const bool json = parsed.Flag("--json");
  format::SeqStreamOptions options;
  options.salvage = parsed.Flag("--salvage");
  options.gaps = false;
  options.from_seq = from;
  std::unique_ptr<format::SeqStream> in = OpenVerbStream("dump", path, options, err);
  if (in == nullptr) return kExitBadInput;
  // A JSONL file is read from its start (no chunks to skip): the calls before --from still
  // give their callees' depths.
  const bool jsonl = in->format() == TraceFormat::kJsonl;
  if (jsonl && from != 0) {
    options.from_seq = 0;
    in = OpenVerbStream("dump", path, options, err);
    if (in == nullptr) return kExitBadInput;
  }

  // The column widths depend on every call printed: a few are held, more are read twice.
  Widths widths;
  std::vector<format::Event> held;
  bool all_held = false;
  if (!json) {
    if (count <= kHeldCalls) {
      format::Event e;
      for (uint64_t n = 0; n < count && in->Next(&e);) {
        if (e.seq >= from) {
          widths.Add(e);
          ++n;
        }
        held.push_back(std::move(e));
      }
      all_held = true;
    } else {
      std::unique_ptr<format::SeqStream> first = OpenVerbStream("dump", path, options, err);
      if (first == nullptr) return kExitBadInput;
      format::Event e;
      for (uint64_t n = 0; n < count && first->Next(&e);) {
        if (e.seq < from) continue;
        widths.Add(e);
        ++n;
      }
    }
  }

  Progress progress("dump", parsed.Flag("--quiet"));
  Depths depths(jsonl ? nullptr : in->reader());
  int status = kExitOk;
  uint64_t printed = 0;
  size_t next_held = 0;
  format::Event e;
  auto next = [&]() {
    if (!all_held) return in->Next(&e);
    if (next_held == held.size()) return false;
    e = std::move(held[next_held++]);
    return true;
  };
  while (printed < count && next()) {
    progress.Update(in->delivered(), count != UINT64_MAX ? count : in->expected_events());
    if (json) {
      if (e.seq < from) continue;
      ++printed;
      absl::Status layout = format::CheckEventLayout(e);
      if (!layout.ok()) {
        err << "cltrace dump: " << path << ": seq " << e.seq << ": " << layout.message() << "\n";
        status = kExitBadInput;
        continue;
      }
      out << format::EventToJsonl(e, in->handles(), in->strings(), &in->contents()) << "\n";
      continue;
    }
    const int depth = depths.Of(e);
    if (e.seq < from) continue;
    if (printed++ == 0)
      out << absl::StrFormat("%*s %*s %*s  call\n", widths.seq, "seq", widths.end, "end",
                             widths.tid, "tid");
    const format::CallInfo* call = format::GetCall(e.call);
    std::string line = absl::StrFormat("%*d %*s %*d  %s%s(%s)", widths.seq, e.seq, widths.end,
                                       e.end == 0 ? std::string("-") : absl::StrCat(e.end),
                                       widths.tid, e.tid, std::string(2 * depth, ' '),
                                       call != nullptr ? call->name : "(unknown call)",
                                       format::ArgsToText(e, in->handles(), in->strings()));
    if (e.end == 0) {
      absl::StrAppend(&line, "  (never returned)");
    } else if (call != nullptr && call->ret != format::ReturnKind::kVoid) {
      absl::StrAppend(&line, " = ", format::RetToText(e));
    }
    if (e.content != 0) {
      absl::StrAppend(&line, "  [content: ", in->contents().Token(e.content).size(), " bytes]");
    }
    // The annotation: the API call that caused it, recorder notes such as R5 table rewrites.
    if (e.annotation != 0) absl::StrAppend(&line, "  # ", in->strings().Token(e.annotation));
    out << line << "\n";
  }
  progress.Finish();
  return ExitAfterStreaming("dump", path, *in,
                            absl::StrCat(" (", in->events_read(), " calls were read before it)"),
                            status, out, err);
}

const VerbRegistrar kDump({"dump", "print the calls of a trace, nested calls indented", kUsage,
                           RunDump});

}  // namespace
}  // namespace cltrace::cli
