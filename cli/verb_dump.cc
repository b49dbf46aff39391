// cltrace dump FILE: the calls of a trace, one per line, in seq order.
#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "check/checker.h"
#include "cli/args.h"
#include "cli/progress.h"
#include "cli/trace_input.h"
#include "cli/trace_walk.h"
#include "cli/verb.h"
#include "ddi/catalog.h"
#include "format/jsonl.h"
#include "format/stable_names.h"

namespace cltrace::cli {
namespace {

constexpr char kUsage[] =
    "usage: cltrace dump FILE [--from SEQ] [--to SEQ] [--count N] [--tid T] [--fn NAME]\n"
    "                    [--handle H] [--json] [--salvage] [--quiet]\n"
    "\n"
    "Prints the calls of a trace (.cltrace or .jsonl) in seq order, one per line: seq, end,\n"
    "thread, then the call marked with its table (IC::/DC:: as the checker decides for\n"
    "device calls, else the layer: Adapter::, KernelCb::, KMD::, ...) and its arguments\n"
    "(enums and flags by name, Format=DXGI_FORMAT_..., A|B for flags, handle tokens, shader\n"
    "bytecode as <N dwords, fnv1a 0x...>) and its return value. Calls made inside another\n"
    "call (callbacks, state refreshes) are indented under it. A call that never returned\n"
    "shows '-' as its end. A call's annotation (the API call that caused it, recorder notes\n"
    "such as R5 table rewrites) follows '#'.\n"
    "\n"
    "  --from SEQ   start at the first call with seq >= SEQ\n"
    "  --to SEQ     stop after the last call with seq <= SEQ\n"
    "  --count N    print at most N calls (of those the filters keep)\n"
    "  --tid T      only the calls of thread T\n"
    "  --fn NAME    only calls of DDI or callback NAME; TABLE::NAME (DC::Draw) also\n"
    "               requires the table\n"
    "  --handle H   only calls naming handle H (its token as in the trace) in any argument\n"
    "  --json       print canonical JSONL lines instead (the form `cltrace export` writes)\n"
    "  --salvage    skip corrupt chunks of a .cltrace instead of stopping at the first one\n"
    "  --quiet      no progress bar (shown on a terminal when reading takes over a second)\n"
    "\n"
    "The filters combine (a call is printed when it passes all of them). --from seeks\n"
    "through a .cltrace's index; the tables of the calls printed then come from the calls\n"
    "that created their contexts.\n"
    "\n"
    "exit: 0 ok; 1 --salvage had to skip data; 2 unreadable or damaged file (the calls read\n"
    "before the damage are still printed), unknown --fn or --handle, or bad usage\n";

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
    seq = std::max(seq, Digits(e.seq));
    end = std::max(end, Digits(e.end));
    tid = std::max(tid, Digits(e.tid));
  }
  static int Digits(uint64_t n) {
    int d = 1;
    for (; n >= 10; n /= 10) ++d;
    return d;
  }
};

// Which calls to print (--tid, --fn, --handle, --from, --to): all must match.
struct Filter {
  uint64_t from = 0, to = UINT64_MAX;
  std::optional<uint32_t> tid;
  format::CallId call = format::CallId::kInvalid;  // kInvalid: any
  std::string table;                               // "IC", "DC", ...; empty: any
  std::string handle;                              // token; empty: any
  uint64_t handle_id = 0;                          // handle's id once defined

  // --fn NAME or TABLE::NAME; InvalidArgument for a name the catalog does not know.
  absl::Status SetFn(absl::string_view fn) {
    absl::string_view name = fn;
    if (size_t colon = fn.rfind("::"); colon != absl::string_view::npos) {
      table = std::string(fn.substr(0, colon));
      name = fn.substr(colon + 2);
    }
    const format::CallInfo* ci = format::FindCall(name);
    if (ci == nullptr)
      return absl::InvalidArgumentError(
          absl::StrCat("--fn: no DDI or callback named '", name, "' in the catalog"));
    call = format::IdOf(*ci);
    return absl::OkStatus();
  }

  bool Matches(const format::Event& e, absl::string_view call_table,
               const format::TokenTable& handles) {
    if (tid && e.tid != *tid) return false;
    if (call != format::CallId::kInvalid && e.call != call) return false;
    if (!table.empty() && call_table != table) return false;
    if (handle.empty()) return true;
    if (handle_id == 0) {
      const int64_t id = handles.Find(handle);
      if (id <= 0) return false;
      handle_id = static_cast<uint64_t>(id);
    }
    if (!format::CheckEventLayout(e).ok()) return false;
    bool named = false;
    format::Event copy = e;
    format::ForEachField(&copy, [&](const format::FieldInfo& f, uint64_t* v) {
      if (f.kind == format::FieldKind::kHandle && *v == handle_id) named = true;
    });
    return named;
  }
};

// The table device calls go through, as the contract checker decides (by the hDevice, as
// `cltrace check` and `export --chrome` name calls).
class TableObserver : public check::TransitionObserver {
 public:
  void OnTransition(const check::TransitionEvent&) override {}
  void OnDeviceCall(const format::Event& e, bool dc_table) override {
    if (e.seq == current_seq) dc = dc_table;
  }
  uint64_t current_seq = 0;
  bool dc = false;
};

// The checker's table of the device calls of one stream, read from the start of the trace
// and advanced as far as asked (calls asked for in seq order): what a dump from the start
// decides, at the cost of reading up to the call.
class CheckerTables {
 public:
  CheckerTables(std::unique_ptr<format::SeqStream> in, const std::string& path, bool salvage)
      : in_(std::move(in)) {
    check::CheckOptions options;
    options.strings = &in_->strings();
    checker_ = std::make_unique<check::Checker>(options);
    checker_->set_observer(&observer_);
    checker_->Begin(in_->handles(), ReplayOf(path, salvage));
  }

  // Whether the device call entered at `seq` went through a DC table.
  bool Dc(uint64_t seq) {
    while (last_seq_ < seq && in_->Next(&e_)) {
      last_seq_ = e_.seq;
      observer_.current_seq = e_.seq;
      observer_.dc = false;
      if (checker_ != nullptr && !checker_->Add(e_).ok()) checker_.reset();
      last_dc_ = checker_ != nullptr && observer_.dc;
    }
    return last_seq_ == seq && last_dc_;
  }

 private:
  std::unique_ptr<format::SeqStream> in_;
  TableObserver observer_;
  std::unique_ptr<check::Checker> checker_;
  format::Event e_;
  uint64_t last_seq_ = 0;
  bool last_dc_ = false;
};

// The table of device calls for a dump that seeks (--from through a .cltrace's index): the
// context an hDevice names is an immediate context when the first use of the handle (in its
// defining chunk, read through the index) is the hDrvDevice of a CreateDevice that
// succeeded, a deferred context when it is the hDrvContext of a (Recycle)
// CreateDeferredContext -- as the checker decides for a trace read from its start. A handle
// whose first use says neither (a trace that starts after the context was created) is
// decided by the checker reading the trace from its start up to the call (CheckerTables).
class SeekTables {
 public:
  using OpenStream = std::function<std::unique_ptr<format::SeqStream>()>;
  SeekTables(format::SeqStream* in, OpenStream open_all, std::string path, bool salvage)
      : in_(in), open_all_(std::move(open_all)), path_(std::move(path)), salvage_(salvage) {}

  // "DC" or "IC" for a device call `e`.
  absl::string_view Table(const format::Event& e, const format::CallInfo& call) {
    const int field = format::FieldIndex(call, "hDevice");
    const uint64_t h = field >= 0 && static_cast<size_t>(field) < e.args.size() ? e.args[field] : 0;
    if (h == 0) return "IC";  // the checker names no context
    auto it = class_.find(h);
    if (it == class_.end()) it = class_.emplace(h, Classify(h)).first;
    if (it->second != Class::kUnknown) return it->second == Class::kDc ? "DC" : "IC";
    if (checker_ == nullptr) {
      std::unique_ptr<format::SeqStream> all = open_all_();
      if (all == nullptr) return "IC";
      checker_ = std::make_unique<CheckerTables>(std::move(all), path_, salvage_);
    }
    return checker_->Dc(e.seq) ? "DC" : "IC";
  }

 private:
  enum class Class : uint8_t { kIc, kDc, kUnknown };

  // Chunks read for a handle's first use, from the one that defined it (a writer may define
  // handles ahead of their use, as the synthetic traces of the benchmarks do).
  static constexpr size_t kChunksRead = 8;

  // The class of handle `h` by its first use in seq order: the use with the lowest seq in the
  // chunks from its definition on (none before it can name it), decisive once no chunk left
  // unread holds a lower seq.
  Class Classify(uint64_t h) {
    const int64_t defining = in_->ChunkDefiningHandle(h);
    if (defining < 0 || in_->reader() == nullptr) return Class::kUnknown;
    const std::vector<format::ChunkSpan>& spans = in_->chunk_spans();
    if (lowest_after_.size() != spans.size() + 1) {
      lowest_after_.assign(spans.size() + 1, UINT64_MAX);  // lowest min_seq from chunk i on
      for (size_t i = spans.size(); i-- > 0;) {
        lowest_after_[i] = lowest_after_[i + 1];
        if (spans[i].events != 0) lowest_after_[i] = std::min(lowest_after_[i], spans[i].min_seq);
      }
    }
    uint64_t best_seq = UINT64_MAX;
    Class best = Class::kUnknown;
    size_t c = static_cast<size_t>(defining);
    for (; c < spans.size() && c < static_cast<size_t>(defining) + kChunksRead &&
           lowest_after_[c] < best_seq;
         ++c) {
      if (spans[c].events == 0 || spans[c].min_seq >= best_seq) continue;
      std::vector<format::Event> events;
      if (!in_->reader()->ReadChunk(spans[c], format::ChunkReadMode::kEvents, &events).ok())
        return Class::kUnknown;
      for (const format::Event& e : events) {
        if (e.seq >= best_seq) continue;
        if (std::optional<Class> k = FirstUse(e, h)) {
          best_seq = e.seq;
          best = *k;
        }
      }
    }
    if (best_seq == UINT64_MAX || lowest_after_[c] < best_seq) return Class::kUnknown;
    return best;
  }

  // What `e` says about handle `h` if it names it: nullopt if it does not.
  static std::optional<Class> FirstUse(const format::Event& e, uint64_t h) {
    const format::CallInfo* ci = format::GetCall(e.call);
    if (ci == nullptr || !format::CheckEventLayout(e).ok()) return std::nullopt;
    bool named = false;
    format::Event copy = e;
    ForEachField(&copy, [&](const format::FieldInfo& f, uint64_t* v) {
      if (f.kind == format::FieldKind::kHandle && *v == h) named = true;
    });
    if (!named) return std::nullopt;
    const absl::string_view name = ci->name;
    auto arg = [&](absl::string_view field) -> uint64_t {
      const int i = format::FieldIndex(*ci, field);
      return i >= 0 ? e.args[i] : 0;
    };
    if (ci->layer == format::Layer::kAdapter && name == "CreateDevice" && arg("hDrvDevice") == h &&
        static_cast<int32_t>(e.ret) >= 0)
      return Class::kIc;
    if (ci->layer == format::Layer::kDevice &&
        (name == "CreateDeferredContext" || name == "RecycleCreateDeferredContext") &&
        arg("hDrvContext") == h && arg("hDevice") != h)
      return Class::kDc;
    return Class::kUnknown;
  }

  format::SeqStream* in_;
  OpenStream open_all_;
  std::string path_;
  bool salvage_;
  absl::flat_hash_map<uint64_t, Class> class_;
  std::vector<uint64_t> lowest_after_;
  std::unique_ptr<CheckerTables> checker_;
};

// One call to print, with its nesting depth and table.
struct Item {
  format::Event e;
  int depth = 0;
  absl::string_view table;
};

// The calls of one stream that pass the filter, in seq order. With `tables`, every call from
// the start of the trace goes through the checker (which needs them all to tell the tables
// apart); a checker that rejects the trace leaves the tables of later calls unmarked.
class Calls {
 public:
  Calls(std::unique_ptr<format::SeqStream> in, const std::string& path, bool salvage, bool tables,
        Filter filter, bool depths = true, SeekTables::OpenStream open_all = nullptr)
      : in_(std::move(in)),
        with_depths_(depths),
        depths_(in_->format() == TraceFormat::kJsonl ? nullptr : in_->reader()),
        filter_(std::move(filter)) {
    if (tables && open_all != nullptr) {
      seek_tables_ = std::make_unique<SeekTables>(in_.get(), std::move(open_all), path, salvage);
    } else if (tables) {
      check::CheckOptions options;
      options.strings = &in_->strings();
      checker_ = std::make_unique<check::Checker>(options);
      checker_->set_observer(&observer_);
      checker_->Begin(in_->handles(), ReplayOf(path, salvage));
    }
  }

  bool Next(Item* item) {
    while (!done_ && in_->Next(&item->e)) {
      const format::Event& e = item->e;
      if (e.seq > filter_.to) break;
      item->depth = with_depths_ ? depths_.Of(e) : 0;
      item->table = LayerTableName(e.call);
      if (seek_tables_ != nullptr) {
        const format::CallInfo* ci = format::GetCall(e.call);
        if (ci != nullptr && ci->layer == format::Layer::kDevice)
          item->table = seek_tables_->Table(e, *ci);
      } else if (checker_ != nullptr) {
        observer_.current_seq = e.seq;
        observer_.dc = false;
        if (!checker_->Add(e).ok()) checker_.reset();
        const format::CallInfo* ci = format::GetCall(e.call);
        if (checker_ != nullptr && ci != nullptr && ci->layer == format::Layer::kDevice)
          item->table = observer_.dc ? "DC" : "IC";
      }
      if (e.seq < filter_.from) continue;
      if (filter_.Matches(e, item->table, in_->handles())) return true;
    }
    done_ = true;
    return false;
  }

  format::SeqStream& in() { return *in_; }
  const Filter& filter() const { return filter_; }

 private:
  std::unique_ptr<format::SeqStream> in_;
  bool with_depths_ = true;
  Depths depths_;
  Filter filter_;
  TableObserver observer_;
  std::unique_ptr<check::Checker> checker_;
  std::unique_ptr<SeekTables> seek_tables_;
  bool done_ = false;
};

// Up to this many calls are held to size the columns; more are read twice.
constexpr uint64_t kHeldCalls = uint64_t{1} << 16;

// The filter and --count of the command line; the exit code (with a message on `err`) when
// one is bad.
std::optional<int> ParseFilter(const ParsedArgs& parsed, Filter* filter, uint64_t* count,
                               std::ostream& err) {
  uint64_t tid = 0;
  for (auto [name, target] : {std::pair{"--from", &filter->from}, std::pair{"--to", &filter->to},
                              std::pair{"--count", count}, std::pair{"--tid", &tid}}) {
    if (std::optional<std::string> v = parsed.Option(name)) {
      absl::StatusOr<uint64_t> n = ParseCount(name, *v);
      if (!n.ok()) {
        err << "cltrace dump: " << n.status().message() << "\n";
        return kExitBadInput;
      }
      *target = *n;
    }
  }
  if (parsed.Option("--tid")) {
    if (tid > UINT32_MAX) {
      err << "cltrace dump: --tid: " << tid << " is not a thread id (32 bits)\n";
      return kExitBadInput;
    }
    filter->tid = static_cast<uint32_t>(tid);
  }
  if (std::optional<std::string> fn = parsed.Option("--fn")) {
    if (absl::Status st = filter->SetFn(*fn); !st.ok()) {
      err << "cltrace dump: " << st.message() << "\n";
      return kExitBadInput;
    }
  }
  filter->handle = parsed.Option("--handle").value_or("");
  if (filter->from > filter->to) {
    err << "cltrace dump: --from " << filter->from << " is after --to " << filter->to << "\n";
    return kExitBadInput;
  }
  return std::nullopt;
}

// `s` right-aligned in `width` columns (absl::StrFormat's "%*s").
void AppendPadded(std::string* out, absl::string_view s, int width) {
  if (static_cast<int>(s.size()) < width) out->append(width - s.size(), ' ');
  out->append(s.data(), s.size());
}

void AppendPadded(std::string* out, uint64_t n, int width) {
  char buf[absl::numbers_internal::kFastToBufferSize];
  char* end = absl::numbers_internal::FastIntToBuffer(n, buf);
  AppendPadded(out, absl::string_view(buf, end - buf), width);
}

// One call as the text dump prints it, appended to `line` with its newline: seq, end,
// thread, the call (indented by its depth, marked with its table), its arguments, return
// value, content size and annotation.
void AppendTextLine(std::string* line, const Item& item, const Widths& widths,
                    format::SeqStream& in, const format::TextOptions& text) {
  const format::Event& e = item.e;
  const format::CallInfo* call = format::GetCall(e.call);
  AppendPadded(line, e.seq, widths.seq);
  line->push_back(' ');
  if (e.end == 0) {
    AppendPadded(line, "-", widths.end);
  } else {
    AppendPadded(line, e.end, widths.end);
  }
  line->push_back(' ');
  AppendPadded(line, e.tid, widths.tid);
  line->append(2 + 2 * item.depth, ' ');
  if (call != nullptr) {
    absl::StrAppend(line, item.table, "::", call->name);
  } else {
    line->append("(unknown call)");
  }
  line->push_back('(');
  format::AppendArgsText(line, e, in.handles(), in.strings(), text);
  line->push_back(')');
  if (e.end == 0) {
    line->append("  (never returned)");
  } else if (call != nullptr && call->ret != format::ReturnKind::kVoid) {
    line->append(" = ");
    format::AppendRetText(line, e);
  }
  if (e.content != 0) {
    absl::StrAppend(line, "  [content: ", in.contents().Token(e.content).size(), " bytes]");
  }
  // The annotation: the API call that caused it, recorder notes such as R5 table rewrites.
  if (e.annotation != 0) absl::StrAppend(line, "  # ", in.strings().Token(e.annotation));
  line->push_back('\n');
}

// Reads the first calls to print into `held` and their widths; when there are more, reads
// the calls to print a first time for the widths (without the checker and the depths, seeking
// to --from, unless --fn names a TABLE::). False when a stream could not be opened (the error
// is printed).
bool MeasureWidths(Calls* calls, uint64_t count, const Filter& filter,
                   const format::SeqStreamOptions& options, const std::string& path, bool salvage,
                   const std::function<std::unique_ptr<Calls>()>& open, std::ostream& err,
                   Widths* widths, std::vector<Item>* held) {
  Item item;
  while (held->size() < std::min(count, kHeldCalls) && calls->Next(&item)) {
    widths->Add(item.e);
    held->push_back(std::move(item));
  }
  if (held->size() < kHeldCalls || count <= kHeldCalls) return true;
  std::unique_ptr<Calls> first;
  if (filter.table.empty()) {
    format::SeqStreamOptions light = options;
    light.from_seq = filter.from;
    std::unique_ptr<format::SeqStream> in = OpenVerbStream("dump", path, light, err);
    if (in == nullptr) return false;
    first = std::make_unique<Calls>(std::move(in), path, salvage, /*tables=*/false, filter,
                                    /*depths=*/false);
  } else {
    first = open();
  }
  if (first == nullptr) return false;
  for (uint64_t n = 0; n < count && first->Next(&item); ++n) widths->Add(item.e);
  return true;
}

// Prints up to `count` calls, the held ones first, then the rest of `calls`, gathering lines
// in blocks (one stream write per block, not per line). Returns kExitOk, or kExitBadInput
// after a --json call whose layout is damaged (reported; the others are still printed).
int PrintCalls(Calls* calls, std::vector<Item> held, uint64_t count, bool json,
               const Widths& widths, const std::string& path, bool quiet, std::ostream& out,
               std::ostream& err, uint64_t* printed) {
  format::SeqStream& in = calls->in();
  Progress progress("dump", quiet);
  int status = kExitOk;
  size_t next_held = 0;
  Item item;
  auto next = [&]() {
    if (next_held < held.size()) {
      item = std::move(held[next_held++]);
      return true;
    }
    return calls->Next(&item);
  };
  format::TextOptions text;
  text.for_dump = true;
  constexpr size_t kBlock = size_t{1} << 16;
  std::string block;
  block.reserve(kBlock + 4096);
  auto flush = [&] {
    out.write(block.data(), static_cast<std::streamsize>(block.size()));
    block.clear();
  };
  while (*printed < count && next()) {
    if (block.size() >= kBlock) flush();
    const format::Event& e = item.e;
    progress.Update(in.delivered(), count != UINT64_MAX ? count : in.expected_events());
    ++*printed;
    if (json) {
      absl::Status layout = format::CheckEventLayout(e);
      if (!layout.ok()) {
        flush();
        err << "cltrace dump: " << path << ": seq " << e.seq << ": " << layout.message() << "\n";
        status = kExitBadInput;
        continue;
      }
      format::AppendEventJsonl(&block, e, in.handles(), in.strings(), &in.contents());
      block.push_back('\n');
      continue;
    }
    if (*printed == 1)
      absl::StrAppendFormat(&block, "%*s %*s %*s  call\n", widths.seq, "seq", widths.end, "end",
                            widths.tid, "tid");
    AppendTextLine(&block, item, widths, in, text);
  }
  flush();
  progress.Finish();
  return status;
}

int RunDump(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ArgSpec spec = ArgSpec("dump", kUsage)
                     .Options({"--from", "--to", "--count", "--tid", "--fn", "--handle"})
                     .Flags({"--json", "--salvage", "--quiet"})
                     .Positional(1, 1);
  ParsedArgs parsed;
  if (std::optional<int> done = ParseVerbArgs(args, spec, &parsed, out, err)) return *done;
  Filter filter;
  uint64_t count = UINT64_MAX;
  if (std::optional<int> bad = ParseFilter(parsed, &filter, &count, err)) return *bad;
  const std::string& path = parsed.positional[0];
  const bool json = parsed.Flag("--json");
  const bool salvage = parsed.Flag("--salvage");
  // Tables are marked in the text (and needed by --fn TABLE::NAME): the checker then reads
  // the trace from its start. Otherwise a .cltrace is read from --from through its index.
  const bool tables = !json || !filter.table.empty();
  format::SeqStreamOptions options;
  options.salvage = salvage;
  options.gaps = false;
  options.from_seq = filter.from;
  // The text form seeks too: the tables of the calls printed come from the creations of
  // their contexts (SeekTables) instead of a checker that reads everything before --from.
  SeekTables::OpenStream open_all;
  if (tables && filter.from > 0) {
    open_all = [&]() -> std::unique_ptr<format::SeqStream> {
      format::SeqStreamOptions all = options;
      all.from_seq = 0;
      std::ostringstream ignored;  // the stream that seeks reports the same errors
      return OpenVerbStream("dump", path, all, ignored);
    };
  }
  auto open = [&]() -> std::unique_ptr<Calls> {
    std::unique_ptr<format::SeqStream> in = OpenVerbStream("dump", path, options, err);
    if (in == nullptr) return nullptr;
    // A JSONL file is read from its start (no chunks to skip): the calls before --from
    // still give their callees' depths.
    if (in->format() == TraceFormat::kJsonl && options.from_seq != 0) {
      format::SeqStreamOptions all = options;
      all.from_seq = 0;
      in = OpenVerbStream("dump", path, all, err);
      if (in == nullptr) return nullptr;
    }
    const bool seeks = in->format() != TraceFormat::kJsonl && open_all != nullptr;
    return std::make_unique<Calls>(std::move(in), path, salvage, tables, filter,
                                   /*depths=*/true, seeks ? open_all : nullptr);
  };
  std::unique_ptr<Calls> calls = open();
  if (calls == nullptr) return kExitBadInput;
  format::SeqStream& in = calls->in();

  // The column widths depend on every call printed: a few are held, more are read twice.
  Widths widths;
  std::vector<Item> held;
  if (!json && !MeasureWidths(calls.get(), count, filter, options, path, salvage, open, err,
                              &widths, &held)) {
    return kExitBadInput;
  }
  uint64_t printed = 0;
  const int status = PrintCalls(calls.get(), std::move(held), count, json, widths, path,
                                parsed.Flag("--quiet"), out, err, &printed);
  if (!filter.handle.empty() && in.handles().Find(filter.handle) <= 0 && in.status().ok() &&
      filter.to == UINT64_MAX && printed < count) {
    err << "cltrace dump: " << path << ": no handle '" << filter.handle << "' in the trace\n";
    return kExitBadInput;
  }
  return ExitAfterStreaming("dump", path, in,
                            absl::StrCat(" (", in.events_read(), " calls were read before it)"),
                            status, out, err);
}

const VerbRegistrar kDump({"dump", "print the calls, nested ones indented; filters, --json", kUsage,
                           RunDump});

}  // namespace
}  // namespace cltrace::cli
