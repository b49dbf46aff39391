#include "cli/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cltrace::cli {
namespace {

// 950, 12.3 k, 4.5 M, 1.2 G.
std::string Amount(double n) {
  if (n < 1e3) return absl::StrFormat("%.0f", n);
  if (n < 1e6) return absl::StrFormat("%.1f k", n / 1e3);
  if (n < 1e9) return absl::StrFormat("%.1f M", n / 1e6);
  return absl::StrFormat("%.1f G", n / 1e9);
}

// 42 s, 3 min 5 s, 2 h 4 min.
std::string Seconds(double s) {
  const int64_t t = static_cast<int64_t>(s + 0.5);
  if (t < 60) return absl::StrCat(t, " s");
  if (t < 3600) return absl::StrCat(t / 60, " min ", t % 60, " s");
  return absl::StrCat(t / 3600, " h ", t % 3600 / 60, " min");
}

}  // namespace

std::string ProgressText(absl::string_view verb, uint64_t done, uint64_t total, double fraction,
                         double seconds) {
  constexpr int kWidth = 20;
  const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0;
  if (total != 0) fraction = std::min(1.0, static_cast<double>(done) / static_cast<double>(total));
  std::string text = absl::StrCat("cltrace ", verb, " ");
  if (fraction >= 0) {
    fraction = std::min(1.0, fraction);
    const int filled = static_cast<int>(fraction * kWidth);
    absl::StrAppend(&text, "[", std::string(filled, '#'), std::string(kWidth - filled, '.'), "] ",
                    absl::StrFormat("%3d%%", static_cast<int>(fraction * 100)), "  ");
  }
  absl::StrAppend(&text, Amount(static_cast<double>(done)));
  if (total != 0) absl::StrAppend(&text, " / ", Amount(static_cast<double>(total)));
  absl::StrAppend(&text, " calls  ", Amount(rate), " calls/s");
  if (fraction > 0 && fraction < 1 && seconds > 0) {
    absl::StrAppend(&text, "  ", Seconds(seconds * (1 - fraction) / fraction), " left");
  }
  return text;
}

Progress::Progress(absl::string_view verb, bool quiet)
    : verb_(verb), enabled_(!quiet && isatty(STDERR_FILENO) == 1) {
  start_ = last_draw_ = std::chrono::steady_clock::now();
  int ms;
  if (const char* v = std::getenv("CLTRACE_PROGRESS_AFTER_MS");
      v != nullptr && absl::SimpleAtoi(v, &ms))
    after_ = std::chrono::milliseconds(ms);
}

Progress::~Progress() { Finish(); }

void Progress::Draw(uint64_t done, uint64_t total, double fraction) {
  const auto now = std::chrono::steady_clock::now();
  if (now - start_ < after_ || (drawn_ && now - last_draw_ < std::chrono::milliseconds(200)))
    return;
  last_draw_ = now;
  drawn_ = true;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  std::string line =
      absl::StrCat("\r", ProgressText(verb_, done, total, fraction, seconds), "\x1b[K");
  (void)!write(STDERR_FILENO, line.data(), line.size());
}

void Progress::Finish() {
  if (!drawn_) return;
  drawn_ = false;
  static constexpr char kErase[] = "\r\x1b[K";
  (void)!write(STDERR_FILENO, kErase, sizeof(kErase) - 1);
}

}  // namespace cltrace::cli
