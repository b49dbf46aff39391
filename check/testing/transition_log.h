// TransitionLog: a TransitionObserver for tests that keeps every transition as one line of
// text (role, states, lifetime, handle, seq, call, table, context, IC handle, recording), so
// that two runs' transitions compare as vectors of strings.
//
// Example:
//   testing::TransitionLog log;
//   checker.set_observer(&log);
//   ... EXPECT_EQ(log.lines, other.lines);
#ifndef CLTRACE_CHECK_TESTING_TRANSITION_LOG_H_
#define CLTRACE_CHECK_TESTING_TRANSITION_LOG_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "check/checker.h"

namespace cltrace::check::testing {

class TransitionLog : public TransitionObserver {
 public:
  void OnTransition(const TransitionEvent& t) override {
    lines.push_back(absl::StrCat(static_cast<int>(t.role), " ", StateName(t.from), "->",
                                 StateName(t.to), " #", t.lifetime, " h", t.handle, " @", t.seq,
                                 " c", static_cast<int>(t.call), " dc", t.dc_table, " ctx",
                                 t.context, " ic", t.ic_handle, " r", t.recording));
    max_lifetime = std::max<uint64_t>(max_lifetime, t.lifetime);
  }
  std::vector<std::string> lines;
  uint64_t max_lifetime = 0;  // the highest lifetime number seen
};

}  // namespace cltrace::check::testing

#endif  // CLTRACE_CHECK_TESTING_TRANSITION_LOG_H_
