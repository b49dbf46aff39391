#include "cli/export_chrome.h"

#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "cli/trace_input.h"
#include "cltrace_version.h"
#include "ddi/catalog.h"
#include "rapidjson/ostreamwrapper.h"
#include "rapidjson/writer.h"

namespace cltrace::cli {
namespace {

using Writer = rapidjson::Writer<rapidjson::OStreamWrapper>;

int PidOf(check::HandleRole role) {
  switch (role) {
    case check::HandleRole::kCommandList:
      return kChromeCommandListsPid;
    case check::HandleRole::kDeferredContext:
      return kChromeDeferredContextsPid;
    default:
      return kChromeLocalHandlesPid;
  }
}

// Trace-event times are microseconds; ours are nanoseconds.
double Micros(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

std::string CallName(absl::string_view table, format::CallId call) {
  const format::CallInfo* ci = format::GetCall(call);
  return absl::StrCat(table, "::", ci != nullptr ? ci->name : "?");
}

class ChromeWriter : public TraceWalkVisitor {
 public:
  ChromeWriter(const format::SeqStream& in, std::ostream& out)
      : in_(in), stream_(out), w_(stream_) {}

  void Begin() {
    w_.StartObject();
    w_.Key("displayTimeUnit");
    w_.String("ns");
    w_.Key("traceEvents");
    w_.StartArray();
    ProcessName(kChromeThreadsPid, "threads");
    ProcessName(kChromeCommandListsPid, "command lists");
    ProcessName(kChromeDeferredContextsPid, "deferred contexts");
    ProcessName(kChromeLocalHandlesPid, "local handles");
  }

  void End(const WalkSummary& s, const absl::Status& read_status) {
    w_.EndArray();
    w_.Key("metadata");
    w_.StartObject();
    w_.Key("generator");
    w_.String("cltrace export --chrome " CLTRACE_VERSION);
    w_.Key("trace");
    w_.String(in_.path().c_str());
    if (in_.format() == format::TraceFileFormat::kCltrace) {
      w_.Key("writer");
      w_.String(in_.header().writer().name().c_str());
      w_.Key("timestamp_unit_ns");
      w_.Uint(in_.header().timestamp_unit_ns());
    }
    w_.Key("timestamps");
    w_.String(s.timestamps.source.c_str());
    w_.Key("timestamps_derived");
    w_.Bool(s.timestamps.derived);
    w_.Key("timestamps_note");
    w_.String(Note(s.timestamps.source));
    w_.Key("exit_times");
    w_.String(
        "a trace stores entry times only: a call's slice ends at the entry time of the first "
        "call entered after it returned");
    w_.Key("calls");
    w_.Uint64(s.calls);
    w_.Key("threads");
    w_.Uint64(s.threads);
    w_.Key("handle_tracks");
    w_.Uint64(s.lifetimes);
    w_.Key("violations");
    w_.Uint64(s.violations);
    w_.Key("warnings");
    w_.Uint64(s.warnings);
    if (s.dropped_findings != 0) {
      w_.Key("dropped_findings");
      w_.Uint64(s.dropped_findings);
    }
    if (!read_status.ok()) {
      w_.Key("incomplete");
      std::string message(read_status.message());
      w_.String(message.c_str());
    }
    w_.EndObject();
    w_.EndObject();
    stream_.Flush();
  }

  absl::Status OnCall(const format::Event& e, absl::string_view table) override {
    if (threads_.insert(e.tid).second) {
      Metadata(kChromeThreadsPid, e.tid, "thread_name", absl::StrCat("thread ", e.tid));
    }
    // Begin/end pairs rather than complete events: written in entry and exit order, a
    // callback that starts at its call's timestamp still nests inside it.
    w_.StartObject();
    Str("name", CallName(table, e.call));
    Str("cat", IsCallback(e) ? "callback" : "ddi");
    Str("ph", "B");
    ThreadTrackAt(e.tid, e.timestamp_ns);
    w_.Key("args");
    w_.StartObject();
    w_.Key("seq");
    w_.Uint64(e.seq);
    if (e.parent != 0) {
      w_.Key("parent");
      w_.Uint64(e.parent);
    }
    w_.EndObject();
    w_.EndObject();
    return absl::OkStatus();
  }

  absl::Status OnExit(const WalkExit& x) override {
    const format::CallInfo* ci = format::GetCall(x.call);
    w_.StartObject();
    Str("ph", "E");
    ThreadTrackAt(x.tid, x.exit_ns);
    w_.Key("args");
    w_.StartObject();
    w_.Key("end");
    if (x.end == 0) {
      w_.Null();  // never returned
    } else {
      w_.Uint64(x.end);
    }
    if (ci != nullptr && ci->ret != format::ReturnKind::kVoid && x.end != 0) {
      w_.Key("ret");
      if (ci->ret == format::ReturnKind::kHresult) {
        Write(ddi::HresultToString(static_cast<int32_t>(x.ret)));
      } else {
        w_.Int64(x.ret);
      }
    }
    w_.EndObject();
    w_.EndObject();
    return absl::OkStatus();
  }

  absl::Status OnLifetimeStart(const WalkLifetime& l) override {
    std::string title = absl::StrCat(RoleShortName(l.role), " ", Token(l.handle), " #", l.lifetime);
    if (l.role == check::HandleRole::kLocal)
      absl::StrAppend(&title, " (for ", Token(l.ic_handle), " on DC ", Token(l.context),
                      ", recording ", l.recording, ")");
    Metadata(PidOf(l.role), l.track, "thread_name", title);
    return absl::OkStatus();
  }

  absl::Status OnInterval(const WalkLifetime& l, const WalkInterval& iv) override {
    const int pid = PidOf(l.role);
    const bool final =
        iv.state == check::State::kDestroyed || iv.state == check::State::kCreateFailed;
    w_.StartObject();
    Str("name", std::string(check::StateName(iv.state)));
    Str("cat", "state");
    Str("ph", final ? "i" : "X");
    if (final) Str("s", "t");
    w_.Key("pid");
    w_.Int(pid);
    w_.Key("tid");
    w_.Uint64(l.track);
    w_.Key("ts");
    w_.Double(Micros(iv.from_ns));
    if (!final) {
      w_.Key("dur");
      w_.Double(Micros(iv.to_ns - iv.from_ns));
    }
    w_.Key("args");
    w_.StartObject();
    Str("handle", Token(l.handle));
    w_.Key("from_seq");
    w_.Uint64(iv.from_seq);
    w_.Key("to_seq");
    if (iv.to_seq == 0) {
      w_.Null();  // to the end of the trace
    } else {
      w_.Uint64(iv.to_seq);
    }
    if (iv.cause != format::CallId::kInvalid)
      Str("by", CallName(iv.dc_table ? "DC" : LayerTableName(iv.cause), iv.cause));
    if (iv.context != 0)
      Str(l.role == check::HandleRole::kCommandList ? "owner" : "dc", Token(iv.context));
    w_.EndObject();
    w_.EndObject();
    return absl::OkStatus();
  }

  absl::Status OnFinding(const check::Violation& v, int64_t ns) override {
    const bool warning = v.severity == check::Severity::kWarning;
    w_.StartObject();
    Str("name", absl::StrCat(v.id(), warning ? " warning" : ""));
    Str("cat", "finding");
    Str("ph", "i");
    Str("s", "t");
    w_.Key("pid");
    w_.Int(kChromeThreadsPid);
    w_.Key("tid");
    w_.Uint(v.tid);
    w_.Key("ts");
    w_.Double(Micros(ns));
    w_.Key("args");
    w_.StartObject();
    Str("rule", v.id());
    w_.Key("seq");
    w_.Uint64(v.seq);
    if (v.call != format::CallId::kInvalid)
      Str("fn", CallName(v.dc_table ? "DC" : LayerTableName(v.call), v.call));
    if (v.handle != 0) Str("handle", Token(v.handle));
    Str("severity", warning ? "warning" : "violation");
    Str("message", v.message);
    w_.EndObject();
    w_.EndObject();
    return absl::OkStatus();
  }

 private:
  static const char* Note(const std::string& source) {
    if (source == "clock") return "read from the clock at every call's entry";
    if (source == "derived")
      return "derived by the recorder from call positions and (position, clock) samples: a "
             "lower bound, exact to within one sampling interval";
    if (source == "positions")
      return "derived from call positions (seq times the timestamp unit): a normalised trace, "
             "no measured time";
    if (source == "none") return "the trace has no times (all zero): slices have no duration";
    return "the trace does not say where its timestamps come from";
  }

  std::string Token(uint64_t handle) const {
    absl::string_view t = in_.handles().Token(handle);
    return t.empty() ? std::string("?") : std::string(t);
  }
  void Write(const std::string& s) {
    w_.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  }
  void Str(const char* key, const std::string& value) {
    w_.Key(key);
    Write(value);
  }
  // The pid, tid and ts of an event on a thread's track.
  void ThreadTrackAt(uint32_t tid, int64_t ns) {
    w_.Key("pid");
    w_.Int(kChromeThreadsPid);
    w_.Key("tid");
    w_.Uint(tid);
    w_.Key("ts");
    w_.Double(Micros(ns));
  }
  void ProcessName(int pid, const char* name) {
    w_.StartObject();
    Str("name", "process_name");
    Str("ph", "M");
    w_.Key("pid");
    w_.Int(pid);
    w_.Key("tid");
    w_.Int(0);
    w_.Key("args");
    w_.StartObject();
    Str("name", name);
    w_.EndObject();
    w_.EndObject();
  }
  void Metadata(int pid, uint64_t tid, const char* what, const std::string& name) {
    w_.StartObject();
    Str("name", what);
    Str("ph", "M");
    w_.Key("pid");
    w_.Int(pid);
    w_.Key("tid");
    w_.Uint64(tid);
    w_.Key("args");
    w_.StartObject();
    Str("name", name);
    w_.EndObject();
    w_.EndObject();
  }
  const format::SeqStream& in_;
  rapidjson::OStreamWrapper stream_;
  Writer w_;
  absl::flat_hash_set<uint32_t> threads_;
};

}  // namespace

absl::StatusOr<WalkSummary> ExportChrome(format::SeqStream& in, check::TraceReplay replay,
                                         const check::CheckOptions& options, std::ostream& out,
                                         const std::function<void()>& progress) {
  ChromeWriter writer(in, out);
  writer.Begin();
  absl::StatusOr<WalkSummary> summary =
      WalkTrace(in, std::move(replay), options, &writer, progress);
  if (!summary.ok()) return summary;
  writer.End(*summary, in.status());
  if (!out) return absl::DataLossError("write error");
  return summary;
}

}  // namespace cltrace::cli
