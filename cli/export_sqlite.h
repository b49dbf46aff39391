// `cltrace export IN --sqlite OUT.db`: a trace as an SQLite database (Debian's libsqlite3),
// written as the trace streams by (cli/trace_walk.h): prepared statements in one transaction,
// the indexes built at the end. Memory does not grow with the trace (SQLite's page cache is
// bounded).
//
// The schema is docs/sql.md (kSqliteSchema below is its source): tables calls (seq, end, tid,
// fn, table, parent, ret, ...), args (seq, name, value, handle), handles (one row per lifetime
// of a command list, deferred context or local handle), intervals (handle, state, from, to,
// ...), findings (rule, seq, handle, message, ...) and meta (key, value). `end`, `table`,
// `from` and `to` are SQL keywords: quote them ("end").
//
// Thread-safety: single-threaded.
#ifndef CLTRACE_CLI_EXPORT_SQLITE_H_
#define CLTRACE_CLI_EXPORT_SQLITE_H_

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "check/checker.h"
#include "cli/trace_walk.h"
#include "format/seq_stream.h"

namespace cltrace::cli {

// The CREATE TABLE statements (docs/sql.md shows them).
extern const char kSqliteSchema[];
// The CREATE INDEX statements, run after the rows are in.
extern const char kSqliteIndexes[];

// Writes the database of `in` (read from its current position to its end) to `db_path`
// (replaced; written beside it and renamed when complete, so a failed export leaves no half
// database). Errors as WalkTrace's; SQLite errors are Internal with SQLite's message. When
// reading stops early (in.status()) nothing is written: the caller reports the stream's error.
absl::StatusOr<WalkSummary> ExportSqlite(format::SeqStream& in, check::TraceReplay replay,
                                         const check::CheckOptions& options,
                                         const std::string& db_path,
                                         const std::function<void()>& progress = {});

}  // namespace cltrace::cli

#endif  // CLTRACE_CLI_EXPORT_SQLITE_H_
