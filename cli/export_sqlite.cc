#include "cli/export_sqlite.h"

#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "cltrace_version.h"
#include "ddi/catalog.h"
#include "format/jsonl.h"
#include "rapidjson/document.h"

namespace cltrace::cli {

const char kSqliteSchema[] = R"sql(
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE calls (
  seq INTEGER PRIMARY KEY,  -- entry position
  "end" INTEGER,            -- exit position; NULL: never returned
  tid INTEGER,
  fn TEXT,                  -- DDI name without pfn: 'RecycleCreateCommandList'
  "table" TEXT,             -- 'IC', 'DC', 'Adapter', 'DXGI', 'CoreCb', 'KernelCb', 'KMD', ...
  parent INTEGER,           -- seq of the call it was made in; NULL: top level
  ret INTEGER,              -- return value (HRESULTs sign-extended); NULL: void
  ret_name TEXT,            -- HRESULT name ('E_OUTOFMEMORY'); NULL if none
  ts_ns INTEGER             -- entry time, ns since the trace's start
);
CREATE TABLE args (
  seq INTEGER,              -- calls.seq
  name TEXT,                -- field name; array elements 'pArray[2].Member'
  value,                    -- integer, real or text (enums and flags by name)
  handle TEXT               -- the handle token when the field is a handle, else NULL
);
CREATE TABLE handles (
  id INTEGER PRIMARY KEY,   -- one row per lifetime (a handle value reused is a new row)
  role TEXT,                -- 'CL', 'DC', 'Local'
  handle TEXT,              -- the handle's token
  lifetime INTEGER,         -- the checker's lifetime number (per role)
  context TEXT,             -- CL: last owning DC; Local: its DC
  ic_handle TEXT,           -- Local: the IC object or command list it stands for
  recording INTEGER,        -- Local: the DC's recording it was opened in
  first_seq INTEGER,        -- the call that created it
  last_seq INTEGER,         -- the call that destroyed (Local: closed) it; NULL: alive at end
  final_state TEXT          -- 'Destroyed', 'CreateFailed', or the state at the end
);
CREATE TABLE intervals (
  handle INTEGER,           -- handles.id
  state TEXT,               -- rules/state_machines.h names: 'Valid', 'Recording', ...
  "from" INTEGER,           -- seq entering the state
  "to" INTEGER,             -- seq leaving it; NULL: to the end (or a final state)
  cause TEXT,               -- the call that entered it ('RecycleCreateCommandList')
  cause_table TEXT,         -- 'IC' or 'DC' (device calls), else the layer
  context TEXT              -- CL: the owning DC then; Local: its DC
);
CREATE TABLE findings (
  rule TEXT,                -- 'R40'
  seq INTEGER,              -- the offending call
  handle TEXT,              -- token of the handle it is about; NULL: none
  message TEXT,
  severity TEXT,            -- 'violation' or 'warning'
  tid INTEGER,
  fn TEXT                   -- 'DC::CommandListExecute'
);
)sql";

const char kSqliteIndexes[] = R"sql(
CREATE INDEX calls_fn ON calls (fn);
CREATE INDEX calls_tid ON calls (tid, seq);
CREATE INDEX calls_parent ON calls (parent);
CREATE INDEX calls_ret_name ON calls (ret_name);
CREATE INDEX args_seq ON args (seq);
CREATE INDEX args_handle ON args (handle);
CREATE INDEX handles_handle ON handles (handle);
CREATE INDEX handles_role ON handles (role);
CREATE INDEX intervals_handle ON intervals (handle, "from");
CREATE INDEX intervals_state ON intervals (state);
CREATE INDEX findings_rule ON findings (rule);
CREATE INDEX findings_seq ON findings (seq);
)sql";

namespace {

absl::Status SqlError(sqlite3* db, absl::string_view what) {
  return absl::InternalError(absl::StrCat("sqlite: ", what, ": ", sqlite3_errmsg(db)));
}

struct StmtDeleter {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using Stmt = std::unique_ptr<sqlite3_stmt, StmtDeleter>;

// A statement's parameters bound in order.
class Row {
 public:
  explicit Row(sqlite3_stmt* s) : s_(s) { sqlite3_reset(s_); }
  Row& Int(int64_t v) {
    sqlite3_bind_int64(s_, ++i_, v);
    return *this;
  }
  Row& Null() {
    sqlite3_bind_null(s_, ++i_);
    return *this;
  }
  Row& IntOrNull(int64_t v, bool null) { return null ? Null() : Int(v); }
  Row& Real(double v) {
    sqlite3_bind_double(s_, ++i_, v);
    return *this;
  }
  Row& Text(absl::string_view v) {
    sqlite3_bind_text(s_, ++i_, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Row& TextOrNull(absl::string_view v) { return v.empty() ? Null() : Text(v); }
  bool Done() { return sqlite3_step(s_) == SQLITE_DONE; }

 private:
  sqlite3_stmt* s_;
  int i_ = 0;
};

class SqliteWriter : public TraceWalkVisitor {
 public:
  explicit SqliteWriter(const format::SeqStream& in) : in_(in) {}
  ~SqliteWriter() override {
    calls_.reset();
    args_.reset();
    handles_.reset();
    intervals_.reset();
    findings_.reset();
    if (db_ != nullptr) sqlite3_close(db_);
  }

  absl::Status Open(const std::string& path) {
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
        SQLITE_OK) {
      return SqlError(db_, absl::StrCat("cannot open ", path));
    }
    // A fresh file written once: no journal, no syncs (it is renamed into place when done).
    for (const char* sql : {"PRAGMA journal_mode=OFF", "PRAGMA synchronous=OFF",
                            "PRAGMA cache_size=-16384", kSqliteSchema, "BEGIN"}) {
      if (absl::Status st = Exec(sql); !st.ok()) return st;
    }
    if (absl::Status st = Prepare(&calls_, "INSERT INTO calls VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
        !st.ok())
      return st;
    if (absl::Status st = Prepare(&args_, "INSERT INTO args VALUES (?, ?, ?, ?)"); !st.ok())
      return st;
    if (absl::Status st =
            Prepare(&handles_, "INSERT INTO handles VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
        !st.ok())
      return st;
    if (absl::Status st =
            Prepare(&intervals_, "INSERT INTO intervals VALUES (?, ?, ?, ?, ?, ?, ?)");
        !st.ok())
      return st;
    return Prepare(&findings_, "INSERT INTO findings VALUES (?, ?, ?, ?, ?, ?, ?)");
  }

  absl::Status Finish(const WalkSummary& s, const absl::Status& read_status) {
    std::vector<std::pair<std::string, std::string>> meta = {
        {"generator", "cltrace export --sqlite " CLTRACE_VERSION},
        {"trace", in_.path()},
        {"calls", absl::StrCat(s.calls)},
        {"threads", absl::StrCat(s.threads)},
        {"handle_lifetimes", absl::StrCat(s.lifetimes)},
        {"violations", absl::StrCat(s.violations)},
        {"warnings", absl::StrCat(s.warnings)},
        {"timestamps", s.timestamps.source},
        {"timestamps_derived", s.timestamps.derived ? "1" : "0"},
    };
    if (in_.format() == format::TraceFileFormat::kCltrace) {
      meta.emplace_back("writer", in_.header().writer().name());
      meta.emplace_back("timestamp_unit_ns", absl::StrCat(in_.header().timestamp_unit_ns()));
    }
    if (!read_status.ok()) meta.emplace_back("incomplete", std::string(read_status.message()));
    Stmt m;
    if (absl::Status st = Prepare(&m, "INSERT INTO meta VALUES (?, ?)"); !st.ok()) return st;
    for (const auto& [k, v] : meta) {
      if (!Row(m.get()).Text(k).Text(v).Done()) return SqlError(db_, "meta");
    }
    if (absl::Status st = Exec(kSqliteIndexes); !st.ok()) return st;
    return Exec("COMMIT");
  }

  absl::Status OnCall(const format::Event& e, absl::string_view table) override {
    const format::CallInfo* ci = format::GetCall(e.call);
    const bool has_ret = ci != nullptr && ci->ret != format::ReturnKind::kVoid && e.end != 0;
    std::string ret_name;
    if (has_ret && ci->ret == format::ReturnKind::kHresult) {
      std::optional<std::string> n =
          ddi::NameOfValue(ddi::HresultNames(), static_cast<uint32_t>(e.ret));
      if (n) ret_name = *n;
    }
    if (!Row(calls_.get())
             .Int(static_cast<int64_t>(e.seq))
             .IntOrNull(static_cast<int64_t>(e.end), e.end == 0)
             .Int(e.tid)
             .Text(ci != nullptr ? ci->name : "?")
             .Text(table)
             .IntOrNull(static_cast<int64_t>(e.parent), e.parent == 0)
             .IntOrNull(e.ret, !has_ret)
             .TextOrNull(ret_name)
             .Int(e.timestamp_ns)
             .Done()) {
      return SqlError(db_, absl::StrCat("calls, seq ", e.seq));
    }
    return Args(e, ci);
  }

  absl::Status OnLifetimeEnd(const WalkLifetime& l, check::State final_state,
                             bool destroyed) override {
    if (!Row(handles_.get())
             .Int(static_cast<int64_t>(l.track))
             .Text(RoleShortName(l.role))
             .Text(Token(l.handle))
             .Int(l.lifetime)
             .TextOrNull(Token(l.context))
             .TextOrNull(Token(l.ic_handle))
             .IntOrNull(l.recording, l.role != check::HandleRole::kLocal)
             .Int(static_cast<int64_t>(l.first_seq))
             .IntOrNull(static_cast<int64_t>(last_seq_[l.track]), !destroyed)
             .Text(check::StateName(final_state))
             .Done()) {
      return SqlError(db_, "handles");
    }
    last_seq_.erase(l.track);
    return absl::OkStatus();
  }

  absl::Status OnInterval(const WalkLifetime& l, const WalkInterval& iv) override {
    last_seq_[l.track] = iv.from_seq;
    const format::CallInfo* cause = format::GetCall(iv.cause);
    if (!Row(intervals_.get())
             .Int(static_cast<int64_t>(l.track))
             .Text(check::StateName(iv.state))
             .Int(static_cast<int64_t>(iv.from_seq))
             .IntOrNull(static_cast<int64_t>(iv.to_seq), iv.to_seq == 0)
             .TextOrNull(cause != nullptr ? cause->name : "")
             .TextOrNull(cause == nullptr ? ""
                         : iv.dc_table    ? "DC"
                                          : LayerTableName(iv.cause))
             .TextOrNull(Token(iv.context))
             .Done()) {
      return SqlError(db_, "intervals");
    }
    return absl::OkStatus();
  }

  absl::Status OnFinding(const check::Violation& v, int64_t ns) override {
    (void)ns;
    const format::CallInfo* ci = format::GetCall(v.call);
    if (!Row(findings_.get())
             .Text(v.id())
             .Int(static_cast<int64_t>(v.seq))
             .TextOrNull(Token(v.handle))
             .Text(v.message)
             .Text(v.severity == check::Severity::kWarning ? "warning" : "violation")
             .Int(v.tid)
             .TextOrNull(ci == nullptr ? std::string()
                                       : absl::StrCat(v.dc_table ? "DC" : LayerTableName(v.call),
                                                      "::", ci->name))
             .Done()) {
      return SqlError(db_, "findings");
    }
    return absl::OkStatus();
  }

 private:
  absl::Status Exec(const char* sql) {
    char* message = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &message) != SQLITE_OK) {
      absl::Status st = absl::InternalError(absl::StrCat("sqlite: ", message ? message : "?"));
      sqlite3_free(message);
      return st;
    }
    return absl::OkStatus();
  }
  absl::Status Prepare(Stmt* stmt, const char* sql) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db_, sql, -1, &s, nullptr) != SQLITE_OK) return SqlError(db_, sql);
    stmt->reset(s);
    return absl::OkStatus();
  }
  absl::string_view Token(uint64_t handle) const {
    return handle == 0 ? absl::string_view() : in_.handles().Token(handle);
  }

  // The kinds of a call's fields by JSON name (array elements under "Array.Member").
  const absl::flat_hash_map<std::string, format::FieldKind>& KindsOf(const format::CallInfo& ci) {
    auto [it, inserted] = kinds_.try_emplace(&ci);
    if (inserted) {
      for (const format::FieldInfo& f : format::Fields(ci)) {
        it->second[f.name] = f.kind;
        if (f.kind != format::FieldKind::kArray) continue;
        for (const format::FieldInfo& ef : format::ElementFields(f))
          it->second[absl::StrCat(f.name, ".", ef.name)] = ef.kind;
      }
    }
    return it->second;
  }

  // One row per field as `cltrace export` writes it (format/jsonl.h): defaults omitted,
  // enums by name, array elements flattened to 'Array[i].Member'.
  absl::Status Args(const format::Event& e, const format::CallInfo* ci) {
    if (ci == nullptr || !format::CheckEventLayout(e).ok()) return absl::OkStatus();
    const std::string line = format::EventToJsonl(e, in_.handles(), in_.strings());
    rapidjson::Document doc;
    doc.Parse(line.data(), line.size());
    if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("args")) return absl::OkStatus();
    const auto& kinds = KindsOf(*ci);
    auto kind_of = [&](const std::string& key) {
      auto it = kinds.find(key);
      return it == kinds.end() ? format::FieldKind::kU64 : it->second;
    };
    for (const auto& m : doc["args"].GetObject()) {
      const std::string name = m.name.GetString();
      if (m.value.IsArray()) {
        size_t i = 0;
        for (const auto& el : m.value.GetArray()) {
          if (el.IsObject()) {
            for (const auto& mm : el.GetObject()) {
              const std::string member = mm.name.GetString();
              absl::Status st = Arg(e.seq, absl::StrCat(name, "[", i, "].", member), mm.value,
                                    kind_of(absl::StrCat(name, ".", member)));
              if (!st.ok()) return st;
            }
          } else {
            absl::Status st = Arg(e.seq, absl::StrCat(name, "[", i, "]"), el, kind_of(name));
            if (!st.ok()) return st;
          }
          ++i;
        }
        continue;
      }
      absl::Status st = Arg(e.seq, name, m.value, kind_of(name));
      if (!st.ok()) return st;
    }
    return absl::OkStatus();
  }

  absl::Status Arg(uint64_t seq, const std::string& name, const rapidjson::Value& v,
                   format::FieldKind kind) {
    Row row(args_.get());
    row.Int(static_cast<int64_t>(seq)).Text(name);
    const bool handle = kind == format::FieldKind::kHandle;
    if (v.IsNull()) {
      row.Null().Null();
    } else if (v.IsString()) {
      absl::string_view s(v.GetString(), v.GetStringLength());
      row.Text(s);
      if (handle) {
        row.Text(s);
      } else {
        row.Null();
      }
    } else if (v.IsBool()) {
      row.Int(v.GetBool() ? 1 : 0).Null();
    } else if (v.IsInt64()) {
      row.Int(v.GetInt64()).Null();
    } else if (v.IsUint64()) {
      row.Text(absl::StrCat(v.GetUint64())).Null();  // beyond int64: as text, exactly
    } else if (v.IsNumber()) {
      row.Real(v.GetDouble()).Null();
    } else {
      row.Int(1).Null();  // a present structure pointer ({})
    }
    if (!row.Done()) return SqlError(db_, absl::StrCat("args, seq ", seq));
    return absl::OkStatus();
  }

  const format::SeqStream& in_;
  sqlite3* db_ = nullptr;
  Stmt calls_, args_, handles_, intervals_, findings_;
  absl::flat_hash_map<const format::CallInfo*, absl::flat_hash_map<std::string, format::FieldKind>>
      kinds_;
  absl::flat_hash_map<uint64_t, uint64_t> last_seq_;  // track -> its latest interval's from
};

}  // namespace

absl::StatusOr<WalkSummary> ExportSqlite(format::SeqStream& in, check::TraceReplay replay,
                                         const check::CheckOptions& options,
                                         const std::string& db_path,
                                         const std::function<void()>& progress) {
  const std::string tmp = absl::StrCat(db_path, ".tmp-", getpid());
  std::remove(tmp.c_str());
  absl::StatusOr<WalkSummary> summary;
  {
    SqliteWriter writer(in);
    absl::Status st = writer.Open(tmp);
    if (st.ok()) {
      summary = WalkTrace(in, std::move(replay), options, &writer, progress);
      if (summary.ok()) st = writer.Finish(*summary, in.status());
    }
    if (st.ok() && !summary.ok()) st = summary.status();
    if (!st.ok()) {
      summary = st;
    }
  }  // closed
  if (summary.ok() && std::rename(tmp.c_str(), db_path.c_str()) != 0)
    summary = absl::InternalError(absl::StrCat("cannot rename ", tmp, " to ", db_path));
  if (!summary.ok()) std::remove(tmp.c_str());
  return summary;
}

}  // namespace cltrace::cli
