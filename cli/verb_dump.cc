// cltrace dump FILE: the calls of a trace, one per line, in seq order.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/args.h"
#include "cli/trace_input.h"
#include "cli/verb.h"
#include "ddi/catalog.h"
#include "format/jsonl.h"

namespace cltrace::cli {
namespace {

constexpr char kUsage[] =
    "usage: cltrace dump FILE [--from SEQ] [--count N] [--json] [--salvage]\n"
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
    "\n"
    "exit: 0 ok; 1 --salvage had to skip data; 2 unreadable or damaged file (the calls read\n"
    "before the damage are still printed) or bad usage\n";

int RunDump(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ArgSpec spec = ArgSpec("dump", kUsage)
                     .Options({"--from", "--count"})
                     .Flags({"--json", "--salvage"})
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
  std::optional<TraceInput> in = ReadVerbTrace("dump", path, parsed.Flag("--salvage"), err);
  if (!in) return kExitBadInput;
  const std::vector<format::Event>& events = in->events;
  auto first = std::lower_bound(events.begin(), events.end(), from,
                                [](const format::Event& e, uint64_t seq) { return e.seq < seq; });
  size_t begin = static_cast<size_t>(first - events.begin());
  size_t end = begin + static_cast<size_t>(std::min<uint64_t>(count, events.size() - begin));

  int status = kExitOk;
  if (parsed.Flag("--json")) {
    for (size_t i = begin; i < end; ++i) {
      absl::Status layout = format::CheckEventLayout(events[i]);
      if (!layout.ok()) {
        err << "cltrace dump: " << path << ": seq " << events[i].seq << ": " << layout.message()
            << "\n";
        status = kExitBadInput;
        continue;
      }
      out << format::EventToJsonl(events[i], in->handles, in->strings, &in->contents) << "\n";
    }
  } else {
    // Nesting depth by seq (parents come before their nested calls). A parent that was not
    // read (damaged file) still indents its calls one level.
    absl::flat_hash_map<uint64_t, int> depth;
    for (const format::Event& e : events) {
      int d = 0;
      if (e.parent != 0) {
        auto it = depth.find(e.parent);
        d = it == depth.end() ? 1 : it->second + 1;
      }
      depth[e.seq] = d;
    }
    int seq_w = 3, end_w = 3, tid_w = 3;
    for (size_t i = begin; i < end; ++i) {
      seq_w = std::max<int>(seq_w, absl::StrCat(events[i].seq).size());
      end_w = std::max<int>(end_w, absl::StrCat(events[i].end).size());
      tid_w = std::max<int>(tid_w, absl::StrCat(events[i].tid).size());
    }
    if (begin < end)
      out << absl::StrFormat("%*s %*s %*s  call\n", seq_w, "seq", end_w, "end", tid_w, "tid");
    for (size_t i = begin; i < end; ++i) {
      const format::Event& e = events[i];
      const format::CallInfo* call = format::GetCall(e.call);
      std::string line = absl::StrFormat("%*d %*s %*d  %s%s(%s)", seq_w, e.seq, end_w,
                                         e.end == 0 ? std::string("-") : absl::StrCat(e.end), tid_w,
                                         e.tid, std::string(2 * depth[e.seq], ' '),
                                         call != nullptr ? call->name : "(unknown call)",
                                         format::ArgsToText(e, in->handles, in->strings));
      if (e.end == 0) {
        absl::StrAppend(&line, "  (never returned)");
      } else if (call != nullptr && call->ret != format::ReturnKind::kVoid) {
        absl::StrAppend(&line, " = ", format::RetToText(e));
      }
      if (e.content != 0) {
        absl::StrAppend(&line, "  [content: ", in->contents.Token(e.content).size(), " bytes]");
      }
      // The annotation: the API call that caused it, recorder notes such as R5 table rewrites.
      if (e.annotation != 0) absl::StrAppend(&line, "  # ", in->strings.Token(e.annotation));
      out << line << "\n";
    }
  }
  return ExitAfterReading("dump", path, *in,
                          absl::StrCat(" (", events.size(), " calls were read before it)"), status,
                          out, err);
}

const VerbRegistrar kDump({"dump", "print the calls of a trace, nested calls indented", kUsage,
                           RunDump});

}  // namespace
}  // namespace cltrace::cli
