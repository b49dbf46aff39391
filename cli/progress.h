// Progress of long work on standard error: a bar with the calls done, their rate and the time
// left, redrawn in place. Shown only when standard error is a terminal, the verb was not given
// --quiet, and the work has run longer than a second (CLTRACE_PROGRESS_AFTER_MS overrides the
// second, for tests); the line is erased when the work ends, so the verb's own output and
// messages are unchanged.
//
// Thread-safety: one Progress per verb run, used from its thread.
//
// Example:
//   Progress progress("check", parsed.Flag("--quiet"));
//   while (stream.Next(&e)) { ...; progress.Update(stream.delivered(), expected); }
#ifndef CLTRACE_CLI_PROGRESS_H_
#define CLTRACE_CLI_PROGRESS_H_

#include <chrono>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace cltrace::cli {

// The bar's text (no "\r", no escape sequences): `verb`, then with a known `total`
//   "[#######.............]  35%  3.5 M / 10.0 M calls  2.1 M calls/s  3 s left"
// and without one "1.2 M calls  2.1 M calls/s". `fraction` (0..1) places the bar when the
// calls' total is unknown but another measure (bytes read) is; negative when none is.
std::string ProgressText(absl::string_view verb, uint64_t done, uint64_t total, double fraction,
                         double seconds);

class Progress {
 public:
  Progress(absl::string_view verb, bool quiet);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // `done` calls of `total` (0: unknown; then `fraction`, if >= 0, says how far). Cheap: looks
  // at the clock every few thousand calls.
  void Update(uint64_t done, uint64_t total, double fraction = -1) {
    if (!enabled_ || done - last_check_ < 4096) return;
    last_check_ = done;
    Draw(done, total, fraction);
  }
  // Erases the bar (also done by the destructor).
  void Finish();
  bool enabled() const { return enabled_; }

 private:
  void Draw(uint64_t done, uint64_t total, double fraction);
  std::string verb_;
  bool enabled_ = false;
  bool drawn_ = false;
  uint64_t last_check_ = 0;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
  std::chrono::milliseconds after_{1000};
};

}  // namespace cltrace::cli

#endif  // CLTRACE_CLI_PROGRESS_H_
