// Robustness: tests/replay/small_cl.jsonl mutated at random (handle fields pointed at other
// handles, scalars set to extreme values, return values changed, calls deleted — the damage a
// hostile or corrupted trace does) and replayed into the reference driver. Every replay ends in
// one of the three reports (identical, divergence, bad input), none crashes the replayer, and
// a report repeats byte for byte. The seed is fixed: failures reproduce.
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "format/jsonl.h"
#include "gtest/gtest.h"
#include "replayer/replay.h"
#include "replayer/testing/outcome_testing.h"

namespace cltrace::replay {
namespace {

TEST(MutationTest, DamagedTracesNeverCrashTheReplayer) {
  std::ifstream in(CLTRACE_SOURCE_DIR "/tests/replay/small_cl.jsonl");
  std::stringstream ss;
  ss << in.rdbuf();
  absl::StatusOr<format::JsonlTrace> trace = format::ParseJsonl(ss.str());
  ASSERT_TRUE(trace.ok()) << trace.status();
  std::mt19937_64 rng(20261123);
  int outcomes[3] = {0, 0, 0};
  constexpr int kTraces = 150;
  for (int n = 0; n < kTraces; ++n) {
    std::vector<format::Event> events = trace->events;
    for (int m = 1 + static_cast<int>(rng() % 3); m > 0 && !events.empty(); --m) {
      format::Event& e = events[rng() % events.size()];
      switch (rng() % 4) {
        case 0:  // any field now names some handle of the trace
          if (!e.args.empty()) e.args[rng() % e.args.size()] = rng() % trace->handles.size();
          break;
        case 1: {  // any field now holds an extreme value
          const uint64_t values[] = {0, 1, 0xffffffffu, rng() & 0xffff, rng()};
          if (!e.args.empty()) e.args[rng() % e.args.size()] = values[rng() % 5];
          break;
        }
        case 2:
          e.ret = rng() % 2 ? 0 : static_cast<int64_t>(rng() & 0xffff);
          break;
        default:
          events.erase(events.begin() + static_cast<long>(&e - events.data()));
          break;
      }
    }
    ReplayOptions options;
    options.driver_path = CLTRACE_REFDRIVER_LIB;
    options.threads = n % 2 ? ThreadMode::kSingle : ThreadMode::kRecorded;
    options.keep_going = n % 3 == 0;
    absl::StatusOr<ReplayResult> r = Replay(options, events, trace->handles, trace->strings);
    ASSERT_TRUE(r.ok()) << r.status();
    const std::string report =
        testing::CountedReport(*r, events, trace->handles, trace->strings, options, outcomes);
    if (options.threads == ThreadMode::kSingle) {
      absl::StatusOr<ReplayResult> again = Replay(options, events, trace->handles, trace->strings);
      ASSERT_TRUE(again.ok());
      EXPECT_EQ(FormatReport(*again, events, trace->handles, trace->strings, options), report);
    }
  }
  // The mutations exercise all three outcomes.
  EXPECT_GT(outcomes[static_cast<int>(Outcome::kIdentical)], 0);
  EXPECT_GT(outcomes[static_cast<int>(Outcome::kDivergent)], 0);
  EXPECT_GT(outcomes[static_cast<int>(Outcome::kBadInput)], 0);
}

}  // namespace
}  // namespace cltrace::replay
