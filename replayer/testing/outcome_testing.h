// Test support for the replayer's randomized tests (replayer/*_test.cc): every damaged trace
// must end in one of the three outcomes, with its report.
//
// Thread-safety: none (test code).
#ifndef CLTRACE_REPLAYER_TESTING_OUTCOME_TESTING_H_
#define CLTRACE_REPLAYER_TESTING_OUTCOME_TESTING_H_

#include <string>

#include "absl/strings/match.h"
#include "absl/types/span.h"
#include "format/event.h"
#include "gtest/gtest.h"
#include "replayer/replay.h"

namespace cltrace::replay::testing {

// The report of replay result `r`, its outcome counted in outcomes[] (indexed by Outcome); a
// test failure unless the report starts as one of the three outcomes' reports do.
inline std::string CountedReport(const ReplayResult& r, absl::Span<const format::Event> events,
                                 const format::TokenTable& handles,
                                 const format::TokenTable& strings, const ReplayOptions& options,
                                 int (&outcomes)[3]) {
  ++outcomes[static_cast<int>(r.outcome)];
  std::string report = FormatReport(r, events, handles, strings, options);
  EXPECT_TRUE(absl::StartsWith(report, "replay: identical (") ||
              absl::StartsWith(report, "replay: divergence at seq ") ||
              absl::StartsWith(report, "replay: bad input at seq "))
      << report;
  return report;
}

}  // namespace cltrace::replay::testing

#endif  // CLTRACE_REPLAYER_TESTING_OUTCOME_TESTING_H_
