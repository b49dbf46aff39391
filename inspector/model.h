// The inspector's model: a loaded trace indexed for the GUI — one lifeline row per command-list
// handle, deferred context and context-local handle (ddi-spec §3.1-§3.3) with its state spans,
// the transitions the trace took (for the state diagrams), the checker's findings, and per
// function / per thread call counts. No ImGui here: the CLI-style tools, the tests and the
// benchmarks use it without a display (the tracy split: analysis in a library, UI on top).
//
// The states come from the contract checker's transition stream (check/), the same
// stream the lifecycle analysis (`cltrace lifecycle`) is built from, so the inspector, `cltrace
// lifecycle` and `cltrace check` agree on every state. One checker pass builds everything.
//
// Calls are kept compact (inspector/call_index.h: a 26-byte record per call, or a block index
// above BuildOptions::coarse_above calls); a call's whole event is decoded from the file on
// demand (DecodeEvent).
//
// Thread-safety: a TraceModel is logically immutable once built; any number of threads may
// query it (the on-demand caches lock). Building happens on one thread (the loader's).
//
// Example:
//   absl::StatusOr<std::unique_ptr<TraceModel>> m = TraceModel::Open("t.cltrace");
//   int row = (*m)->FindRow("cl1");
//   const Span* s = (*m)->SpanAt(row, 120);   // s->state == check::State::kValid
#ifndef CLTRACE_INSPECTOR_MODEL_H_
#define CLTRACE_INSPECTOR_MODEL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "check/checker.h"
#include "check/states.h"
#include "ddi/call_ids.h"
#include "format/event.h"
#include "format/load_trace.h"
#include "format/trace_reader.h"
#include "inspector/call_index.h"

namespace cltrace::inspector {

using TraceFileFormat = format::TraceFileFormat;

// A whole trace as read from a file (see loader.h), events sorted by seq.
struct TraceData {
  std::string path;
  TraceFileFormat format = TraceFileFormat::kCltrace;
  uint64_t file_size = 0;
  std::vector<format::Event> events;
  format::TokenTable handles;
  format::TokenTable strings;
  format::TokenTable contents;  // Event::content bytes (FORMAT.md §3.8)
  int64_t torn_tail = -1;       // .cltrace: offset of a partial last chunk (read as end of file)
  format::TraceReader::Stats stats;  // .cltrace: chunks read, corrupt chunks skipped (salvage)
};

// Receives build/load progress in [0, 1]. Called from the building thread.
using ProgressFn = std::function<void(float)>;

enum class RowKind : uint8_t {
  kCommandList,      // IC command-list handle (§3.1); every lifetime of the handle value
  kDeferredContext,  // hDrvContext (§3.2)
  kLocal,            // a DC-local handle on one DC (§3.3), every recording
};

// One state a row's handle was in: [from, to) on the trace's position counter.
struct Span {
  uint64_t from = 0;  // entry seq of the call that caused the state
  uint64_t to = 0;    // seq the next state began (exclusive); always > from. Terminal states
                      // (Destroyed, CreateFailed) are one position wide: the handle's end.
  check::State state = check::State::kNone;
  bool dc_table = false;  // the causing call went through a DC table
  format::CallId cause = format::CallId::kInvalid;
  uint32_t lifetime = 0;  // the checker's lifetime number (per role)
};

struct Row {
  RowKind kind = RowKind::kCommandList;
  uint64_t handle = 0;      // token id in TraceModel::handles()
  uint64_t context = 0;     // kLocal: its DC; kCommandList: owning DC of the latest lifetime
  uint64_t ic_handle = 0;   // kLocal: the IC object or IC command list it stands for
  int32_t group = -1;       // kLocal: the row of its DC; kDeferredContext: itself
  uint32_t lifetimes = 0;   // number of lifetimes drawn on this row
  std::string label;        // the handle's token ("cl1"; locals: "lvb0 > vb")
  std::vector<Span> spans;  // by `from`, non-overlapping
};

// How often the trace took one transition (role, from, to, call, table).
struct TransitionCount {
  check::HandleRole role = check::HandleRole::kCommandList;
  check::State from = check::State::kNone;
  check::State to = check::State::kNone;
  format::CallId call = format::CallId::kInvalid;
  bool dc_table = false;
  uint64_t count = 0;
  uint64_t first_seq = 0;  // the first time it was taken
  // A checker error was reported at that call for that handle (e.g. R45 on RD->V).
  bool flagged = false;
};

struct BuildOptions {
  check::CheckOptions check;
  // LoadModel / Loader: skip corrupt chunks of a .cltrace (format::LoadOptions::salvage).
  bool salvage = false;
  // Above this many calls the model keeps a coarse index (one entry per block of calls) and
  // decodes the calls of a block from the file when they are looked at.
  uint64_t coarse_above = 20'000'000;
  // Calls per block of the coarse index (tests use small blocks to cross many boundaries).
  uint32_t coarse_block_calls = CallIndex::kBlockCalls;
};

// What the model keeps of every call: enough for the calls list, lifeline hovers and nesting;
// arguments come from TraceModel::DecodeEvent.
struct CallRecord {
  uint64_t seq = 0;     // entry position
  uint64_t end = 0;     // exit position; 0: never returned
  uint64_t parent = 0;  // seq of the call it was made inside; 0: top level
  uint32_t tid = 0;
  format::CallId call = format::CallId::kInvalid;
  uint16_t depth = 0;     // nesting depth: 0 top level, 1 inside a top-level call, ...
  bool dc_table = false;  // went through a deferred context's table (TraceModel::ViaDcTable)

  bool operator==(const CallRecord&) const = default;
};

class TraceModel {
 public:
  // Indexes `data`. InvalidArgument when the checker refuses the event order (a repeated seq:
  // a damaged file); `progress` (may be empty) is called with increasing values in [0, 1].
  static absl::StatusOr<std::unique_ptr<TraceModel>> Build(TraceData data,
                                                           const BuildOptions& options = {},
                                                           const ProgressFn& progress = {});
  // Builds the model of a trace file in one pass over format::SeqStream (seq order, the trace
  // never held in memory): a .cltrace keeps compact call records (or, above
  // BuildOptions::coarse_above calls, a block index) and decodes events from the file on
  // demand; JSONL is read whole (ReadTraceFile) and built as Build does. Errors as
  // ReadTraceFile and Build (without the path prefix LoadModel adds).
  static absl::StatusOr<std::unique_ptr<TraceModel>> Open(const std::string& path,
                                                          const BuildOptions& options = {},
                                                          const ProgressFn& progress = {});
  ~TraceModel();

  // The file and its definitions (TraceData::events is empty once the model is built: calls
  // are reached through the calls API below).
  const TraceData& data() const { return data_; }
  const format::TokenTable& handles() const { return data_.handles; }
  const format::TokenTable& strings() const { return data_.strings; }
  const format::TokenTable& contents() const { return data_.contents; }
  // First entry seq and one past the last position used (entry or exit); the lifeline axis.
  uint64_t first_seq() const { return first_seq_; }
  uint64_t end_seq() const { return end_seq_; }

  // ---- Lifelines ---------------------------------------------------------------------------
  // Command lists (by first appearance), then each deferred context followed by its locals.
  const std::vector<Row>& rows() const { return rows_; }
  uint64_t span_count() const { return span_count_; }
  // The row of a handle token / id: command-list and DC rows first, then the first local row
  // with that token. -1 if none.
  int FindRow(absl::string_view token) const;
  int RowOfHandle(uint64_t handle) const;
  // Index into rows()[row].spans of the span containing `seq`, or -1 (a gap).
  int SpanIndexAt(int row, uint64_t seq) const;
  const Span* SpanAt(int row, uint64_t seq) const;
  // The start of the next span strictly after / the previous span strictly before `seq`.
  std::optional<uint64_t> NextTransition(int row, uint64_t seq) const;
  std::optional<uint64_t> PrevTransition(int row, uint64_t seq) const;

  // ---- Calls -------------------------------------------------------------------------------
  // Calls are numbered 0..call_count()-1 in seq order ("call index"; View::selected_event,
  // CallFilter and Children use these indices).
  size_t call_count() const;
  // The compact record of call `i` (no arguments). With the fine index a look-up; with the
  // coarse index (traces above BuildOptions::coarse_above calls) the block of calls holding
  // `i` is decoded from the file when not cached: bounded work (one block), see README.
  // Precondition: i < call_count().
  CallRecord Call(size_t i) const;
  // The whole event of call `i` (arguments, return value, content id, annotation), decoded
  // from the trace file through its chunk index on demand and kept in a small cache. Errors:
  // the file changed or became unreadable since the model was built (DataLoss naming the
  // chunk offset), OutOfRange for a bad index. Never blocks longer than decoding the chunks
  // that hold the call.
  absl::StatusOr<std::shared_ptr<const format::Event>> DecodeEvent(size_t i) const;
  // Index of the call entered at `seq` (-1 if none), or of the last call entered at or
  // before `seq` (-1 if `seq` precedes the trace): finding a call by seq.
  int64_t EventAt(uint64_t seq) const;
  int64_t EventAtOrBefore(uint64_t seq) const;
  // The call went through a deferred context's table (device-layer calls only).
  bool ViaDcTable(size_t i) const;
  // "DC::Draw" for calls through a DC table, else the catalog name.
  std::string CallLabel(size_t i) const;
  // Calls nested directly in call `i` (callbacks, state refreshes), in order.
  std::vector<size_t> Children(size_t i) const;
  // Whether calls are indexed per call (false: per block, detail loaded on demand).
  bool fine_index() const;
  // Bytes the model holds per call for its call storage (records, index, cached blocks and
  // events), by its own accounting (not RSS): the <= 60 B/call budget of the issue.
  uint64_t call_storage_bytes() const;
  // Calls per CallId (index = static_cast<int>(CallId)).
  const std::vector<uint64_t>& call_counts() const { return call_counts_; }
  // (tid, calls) by tid.
  const std::vector<std::pair<uint32_t, uint64_t>>& thread_counts() const { return thread_counts_; }

  // ---- Checker -----------------------------------------------------------------------------
  // Errors and warnings, by seq (errors first at equal seq).
  const std::vector<check::Violation>& violations() const { return violations_; }
  uint64_t error_count() const { return errors_; }
  uint64_t dropped_findings() const { return dropped_findings_; }
  // First finding with seq > `seq` (wrapping to the first), or -1 if there are none.
  int NextViolation(uint64_t seq) const;
  int PrevViolation(uint64_t seq) const;
  // Findings at exactly this call, as indices into violations().
  std::vector<int> ViolationsAt(uint64_t seq) const;

  const std::vector<TransitionCount>& transitions() const { return transitions_; }
  // Command-list executes (T2 self loop) and DC-table calls while Recording (D2 self loop)
  // are not state changes, so the checker reports no transition for them; they are counted
  // here from the calls.
  uint64_t ic_executes() const { return ic_executes_; }
  uint64_t nested_executes() const { return nested_executes_; }
  uint64_t dc_table_calls() const { return dc_table_calls_; }

  // The handle's token, "?" when unknown, "NULL" for 0.
  std::string Token(uint64_t handle) const;

 private:
  friend class ModelBuilder;
  friend class ModelPass;

  TraceModel() = default;

  TraceData data_;
  uint64_t first_seq_ = 0;
  uint64_t end_seq_ = 1;
  std::vector<Row> rows_;
  uint64_t span_count_ = 0;
  absl::flat_hash_map<uint64_t, int> row_of_handle_;
  std::unique_ptr<CallIndex> calls_;
  std::vector<uint64_t> call_counts_;
  std::vector<std::pair<uint32_t, uint64_t>> thread_counts_;
  std::vector<check::Violation> violations_;
  uint64_t errors_ = 0;
  uint64_t dropped_findings_ = 0;
  std::vector<TransitionCount> transitions_;
  uint64_t ic_executes_ = 0;
  uint64_t nested_executes_ = 0;
  uint64_t dc_table_calls_ = 0;
};

// True for the states drawn as a one-position end marker.
inline bool IsTerminal(check::State s) {
  return s == check::State::kDestroyed || s == check::State::kCreateFailed;
}

absl::string_view RowKindName(RowKind k);

}  // namespace cltrace::inspector

#endif  // CLTRACE_INSPECTOR_MODEL_H_
