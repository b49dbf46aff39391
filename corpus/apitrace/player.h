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
// Streaming: Play(CallSource*) reads the calls as they are played (DumpFileSource: a dump file
// read line by line), so memory is bounded by the longest call and the live objects
// (PlayReport::max_buffered, max_objects).
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
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
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
  // What the play held at most at once: objects in the player's table (live ones, plus the
  // released ones not yet compacted away: at most about twice the live ones) and, for a
  // CallSource reading a dump, bytes of its line buffer (CallSource::max_buffered).
  uint64_t max_objects = 0;
  uint64_t max_buffered = 0;
};

// The calls of a capture in order, read one at a time (a parsed vector, or a dump read line by
// line: memory bounded by the longest call).
class CallSource {
 public:
  virtual ~CallSource() = default;
  // The next call into *call; false at the end or on an error (status()).
  virtual bool Next(Call* call) = 0;
  virtual absl::Status status() const = 0;
  // Back to the first call: the player reads a capture twice (a first pass looks for the one
  // application bug it plays with a misuse mode, see docs/apitrace.md §5).
  virtual absl::Status Rewind() = 0;
  // The most input bytes held at once (0 when not known).
  virtual size_t max_buffered() const { return 0; }
};

// A dump file read with DumpStream.
class DumpFileSource : public CallSource {
 public:
  // NotFound when the file cannot be opened.
  static absl::StatusOr<std::unique_ptr<DumpFileSource>> Open(const std::string& path);
  bool Next(Call* call) override;
  absl::Status status() const override { return stream_->status(); }
  absl::Status Rewind() override;
  size_t max_buffered() const override;

 private:
  std::ifstream in_;
  std::unique_ptr<DumpStream> stream_;
  size_t max_buffered_ = 0;  // of the streams before the last Rewind
};

// Plays `calls` in order. InvalidArgument "line L: ..." for bad input (a call that names an
// object no call created, an argument missing or of the wrong kind, a memcpy outside every
// mapping) and, with strict, for the first skipped call; Internal when the runtime model cannot
// create a device.
absl::StatusOr<PlayReport> Play(const std::vector<Call>& calls, const PlayOptions& options);
// The same, reading the calls from `source` as they are played (the capture's text is never
// held whole); a read error of the source (a malformed line: "line L, column C: ...") ends the
// play with that status.
absl::StatusOr<PlayReport> Play(CallSource* source, const PlayOptions& options);

}  // namespace cltrace::apitrace

#endif  // CLTRACE_CORPUS_APITRACE_PLAYER_H_
