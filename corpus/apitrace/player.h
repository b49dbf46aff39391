// Plays a real program's apitrace capture (parsed by dump_parser.h) through the runtime model,
// so the DDI traffic its D3D11 call pattern produces can be recorded, checked and replayed:
// `cltrace-workload apitrace FILE`.
//
// Objects are remapped by identity: the pointer values the capture printed are keys into a table
// of runtime objects and are never dereferenced; a call naming a key no call created is bad
// input. Reference counts are real: AddRef/Release (and the references Get* calls and
// QueryInterface hand out) move the runtime object's count, and the final Release is the
// runtime's (its destruction deferred while a context still binds the object). What the capture
// never released is released when it ends, children before their device.
//
// Threads: every capture thread (`@tid`, `apitrace dump --thread-ids`) plays its calls on a
// thread of its own, the threads taking turns in the capture's global order, so each context is
// used by the thread the capture names and never by two at once (the runtime model's R10); a
// dump without thread ids plays on one thread.
//
// Blob contents: a text dump shows blob(N) without its bytes, unless `apitrace dump --blobs`
// wrote them to files (blob("FILE"), read relative to PlayOptions::blob_dir). Missing bytes are
// zeros, and shader bytecode without bytes becomes a minimal token program of the right stage.
//
// Calls the player does not implement are skipped and reported (PlayReport::skipped) or, with
// PlayOptions::strict, are an error. Never aborts on input.
//
// Thread-safety: Play is reentrant; it runs its own threads and joins them before returning.
//
// Example:
//   absl::StatusOr<std::vector<Call>> calls = ParseDump(text);
//   PlayOptions options;  // the reference driver
//   absl::StatusOr<PlayReport> report = Play(*calls, options);
//   for (const Skipped& s : report->skipped) ... s.name, s.count, s.first_line
#ifndef CLTRACE_CORPUS_APITRACE_PLAYER_H_
#define CLTRACE_CORPUS_APITRACE_PLAYER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "corpus/apitrace/dump_parser.h"
#include "runtime/options.h"

namespace cltrace::apitrace {

struct PlayOptions {
  // For every device the capture creates (driver, observer, misuse modes...).
  runtime::RuntimeOptions runtime;
  // Where blob("FILE") names are relative to.
  std::string blob_dir = ".";
  // A call the player does not implement is an error (InvalidArgument) instead of a skip.
  bool strict = false;
  // Called on the playing thread just before each call is played (played or skipped).
  std::function<void(const Call&)> on_call;
};

// A call name the player skipped: how often, where first, why.
struct Skipped {
  std::string name;
  uint64_t count = 0;
  int64_t first_line = 0;
  std::string reason;
};

struct PlayReport {
  uint64_t calls = 0;                // calls in the capture
  uint64_t played = 0;               // calls played (some make no DDI call, as in D3D11)
  int threads = 0;                   // capture threads played
  std::vector<Skipped> skipped;      // in order of first appearance
  std::vector<Skipped> substitutes;  // played, but not as the real runtime would (see reason)
};

// Plays `calls` in order. InvalidArgument "line L: ..." for bad input (a call that names an
// object no call created, an argument missing or of the wrong kind, a memcpy outside every
// mapping) and, with strict, for the first skipped call; Internal when the runtime model cannot
// create a device.
absl::StatusOr<PlayReport> Play(const std::vector<Call>& calls, const PlayOptions& options);

}  // namespace cltrace::apitrace

#endif  // CLTRACE_CORPUS_APITRACE_PLAYER_H_
