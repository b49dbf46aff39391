// The kernel model's turn backstop (replayer/internal/kernel_model.h, ModelKernel::WaitTurn):
// a wait for a recorded kernel turn that never comes gives up after the timeout, and the
// replay reports it (a divergence naming the seq and thread waited for, counted in the
// result), never silently.
#include <chrono>
#include <string>
#include <vector>

#include "format/jsonl.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "replayer/internal/kernel_model.h"
#include "replayer/internal/plan.h"
#include "replayer/replay.h"

namespace cltrace::replay {
namespace {

using ::testing::HasSubstr;

// Thread 1's CloseAdapter (seq 1) makes a RenderCb (seq 2): turn 0. The kernel work recorded at
// top level before thread 2's CloseAdapter (seq 7) is turn 1.
constexpr char kTwoTurns[] =
    R"({"seq":1,"tid":1,"fn":"CloseAdapter","args":{"hAdapter":"a"},"end":4}
{"seq":2,"tid":1,"fn":"RenderCb","args":{"hDevice":"rtd"},"ret":0,"end":3,"parent":1}
{"seq":5,"tid":2,"fn":"DxgkDdiDpcRoutine","args":{"MiniportDeviceContext":"k"},"end":6}
{"seq":7,"tid":2,"fn":"CloseAdapter","args":{"hAdapter":"b"},"end":8}
)";

// Nobody takes turn 0 here, so the wait for turn 1 can only end by the timeout, whatever the
// machine's load: the test waits for nothing else.
TEST(KernelTurnTest, AWaitThatTimesOutIsRecordedNamingTheTurnItWaitedFor) {
  absl::StatusOr<format::JsonlTrace> t = format::ParseJsonl(kTwoTurns);
  ASSERT_TRUE(t.ok()) << t.status();
  internal::Plan plan;
  internal::BadInput bad;
  ASSERT_TRUE(internal::BuildPlan(t->events, t->handles, t->contents, 0, &plan, &bad))
      << bad.message;
  internal::ModelKernel model(plan, /*session=*/nullptr, /*threaded=*/true, {},
                              std::chrono::milliseconds(20));
  model.DriveBefore(7);  // turn 1: gives turn 0 up after 20 ms
  const std::vector<internal::ModelKernel::TurnTimeout> timeouts = model.TurnTimeouts();
  ASSERT_EQ(timeouts.size(), 1u);
  EXPECT_EQ(t->events[timeouts[0].event].seq, 7u);
  EXPECT_EQ(timeouts[0].waited_for, "the RenderCb at seq 2 (tid 1)");
  EXPECT_EQ(timeouts[0].waiter, "the kernel work recorded before seq 7 (tid 2)");
  const std::vector<Divergence> reported = model.TurnTimeoutDivergences();
  ASSERT_EQ(reported.size(), 1u);
  EXPECT_EQ(reported[0].seq, 7u);
  EXPECT_EQ(reported[0].tid, 2u);
  EXPECT_EQ(reported[0].actual,
            "kernel turn timeout: waited 20 ms for the RenderCb at seq 2 (tid 1), which never "
            "came; gave it up (the kernel model answers no later kernel call)");

  // The replay's report of it: a divergence (exit 3) and the count.
  ReplayOptions options;
  options.kernel = KernelMode::kModel;
  options.kernel_turn_timeout = std::chrono::milliseconds(20);
  ReplayResult r;
  r.outcome = Outcome::kDivergent;
  r.kernel.model = true;
  r.kernel.turn_timeouts = reported.size();
  r.divergences = reported;
  const std::string report = FormatReport(r, t->events, t->handles, t->strings, options);
  EXPECT_THAT(report, HasSubstr("replay: divergence at seq 7 (fn CloseAdapter, tid 2)"));
  EXPECT_THAT(report, HasSubstr("waited 20 ms for the RenderCb at seq 2 (tid 1)"));
  EXPECT_THAT(report, HasSubstr("kernel model: 1 kernel turn given up after waiting 20 ms"));
}

// A turn the replay knows will never come (SkipTop) releases the later ones at once: no
// timeout, nothing reported.
TEST(KernelTurnTest, ASkippedTurnIsReleasedWithoutATimeout) {
  absl::StatusOr<format::JsonlTrace> t = format::ParseJsonl(kTwoTurns);
  ASSERT_TRUE(t.ok()) << t.status();
  internal::Plan plan;
  internal::BadInput bad;
  ASSERT_TRUE(internal::BuildPlan(t->events, t->handles, t->contents, 0, &plan, &bad))
      << bad.message;
  internal::ModelKernel model(plan, /*session=*/nullptr, /*threaded=*/true, {},
                              std::chrono::milliseconds(20));
  model.SkipTop(0);      // thread 1's Flush is not issued: its turn will never come
  model.DriveBefore(7);  // released at once, out of turn
  EXPECT_TRUE(model.TurnTimeouts().empty());
}

}  // namespace
}  // namespace cltrace::replay
