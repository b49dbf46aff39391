#include "cli/trim.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "check/checker.h"
#include "cli/dx6_model_driver.h"
#include "cli/reduce.h"
#include "cli/trace_input.h"
#include "cli/verb.h"
#include "ddi/call_traits.h"
#include "format/load_trace.h"
#include "gtest/gtest.h"
#include "replayer/replay.h"

namespace cltrace::cli {
namespace {

using format::Event;
using format::LoadedTrace;

TrimOptions Window(std::optional<uint64_t> from, std::optional<uint64_t> to = std::nullopt) {
  TrimOptions o;
  o.from = from;
  o.to = to;
  return o;
}

TrimOptions OfHandle(const std::string& token) {
  TrimOptions o;
  o.handle = token;
  return o;
}

LoadedTrace Load(const std::string& name) {
  absl::StatusOr<LoadedTrace> t = format::ReadAllSorted(absl::StrCat("corpus/traces/", name));
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? std::move(*t) : LoadedTrace();
}

std::string RefDriver() {
  const char* dir = getenv("CLTRACE_BUILD_DIR");
  return absl::StrCat(dir != nullptr ? dir : "build", "/lib/libcltrace_refdriver.so");
}

std::string TempPath(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/trim_test_", getpid(), "_", name);
}

replay::ReplayResult ReplayInto(const LoadedTrace& t, const std::vector<Event>& events,
                                std::vector<replay::Injection> injections = {}) {
  replay::ReplayOptions o;
  o.driver_path = RefDriver();
  o.threads = replay::ThreadMode::kSingle;
  o.injections = std::move(injections);
  o.dx6_driver = Dx6ModelDriverFactory();
  absl::StatusOr<replay::ReplayResult> r =
      replay::Replay(o, events, t.handles, t.strings, t.contents);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? std::move(*r) : replay::ReplayResult();
}

std::string Describe(const replay::ReplayResult& r) {
  if (r.outcome == replay::Outcome::kBadInput)
    return absl::StrCat("bad input at seq ", r.bad_seq, ": ", r.bad_message);
  if (!r.divergences.empty())
    return absl::StrCat("diverges at seq ", r.divergences[0].seq, ": expected ",
                        r.divergences[0].expected, ", actual ", r.divergences[0].actual);
  return "identical";
}

// The state of every handle after the calls before `seq`, by the checker's transitions.
std::map<std::string, rules::State> StatesBefore(const LoadedTrace& t,
                                                 const std::vector<Event>& events, uint64_t seq) {
  struct Observer : check::TransitionObserver {
    void OnTransition(const check::TransitionEvent& e) override {
      if (e.seq < seq) state[std::string(handles->Token(e.handle))] = e.to;
    }
    uint64_t seq;
    const format::TokenTable* handles;
    std::map<std::string, rules::State> state;
  } observer;
  observer.seq = seq;
  observer.handles = &t.handles;
  check::Checker checker({});
  checker.set_observer(&observer);
  EXPECT_TRUE(checker.Run(events, t.handles).ok());
  return observer.state;
}

class TrimTest : public ::testing::Test {
 protected:
  void Open(const std::string& name) {
    trace_ = Load(name);
    absl::StatusOr<std::unique_ptr<TraceCutter>> c = TraceCutter::Build(&trace_);
    ASSERT_TRUE(c.ok()) << c.status();
    cutter_ = std::move(*c);
  }
  uint64_t SeqAt(double fraction) const {
    return trace_.events[static_cast<size_t>(fraction * (trace_.events.size() - 1))].seq;
  }
  LoadedTrace trace_;
  std::unique_ptr<TraceCutter> cutter_;
};

TEST_F(TrimTest, UnitsKeepCallbacksWithTheirCall) {
  Open("smallcl_R22.cltrace");
  for (size_t u = 0; u < cutter_->unit_count(); ++u) {
    const Event& top = cutter_->Top(u);
    for (uint32_t i : cutter_->UnitEvents(u)) {
      const Event& e = trace_.events[i];
      EXPECT_GE(e.seq, top.seq);
      if (&e != &top) {
        EXPECT_NE(e.parent, 0u);
      }
    }
  }
}

TEST_F(TrimTest, WindowCutIsCleanAndReplaysExceptWhereItSaysSo) {
  for (const char* name : {"scene.cltrace", "smallcl.cltrace", "present.cltrace"}) {
    for (auto [lo, hi] : {std::pair{0.4, 0.6}, std::pair{0.6, 0.9}}) {
      SCOPED_TRACE(absl::StrCat(name, " ", lo, "..", hi));
      Open(name);
      ASSERT_TRUE(cutter_->findings().violations.empty());
      const uint64_t from = SeqAt(lo), to = SeqAt(hi);
      absl::StatusOr<TrimResult> cut = Trim(*cutter_, Window(from, to));
      ASSERT_TRUE(cut.ok()) << cut.status();
      EXPECT_LT(cut->events.size(), trace_.events.size());
      EXPECT_GT(cut->window_calls, 0u);
      EXPECT_GT(cut->prelude_calls, 0u);  // the device at least
      EXPECT_TRUE(cut->new_findings.empty()) << absl::StrJoin(cut->unsynthesized, "\n");
      absl::StatusOr<check::CheckResult> verdict = check::Check(cut->events, trace_.handles);
      ASSERT_TRUE(verdict.ok());
      EXPECT_TRUE(verdict->violations.empty()) << verdict->violations[0].message;
      // Every call entered in the window is in the cut, but for those made inside a call
      // entered before it (the window is made of whole top-level calls entered in it: a callback
      // of a PresentDXGI entered before `from` is not).
      for (const Event& e : trace_.events) {
        if (e.seq < from || e.seq > to) continue;
        const int64_t unit = cutter_->UnitOfSeq(e.seq);
        if (unit >= 0 && cutter_->Top(unit).seq < from) continue;
        EXPECT_TRUE(
            std::binary_search(cut->events.begin(), cut->events.end(), e,
                               [](const Event& a, const Event& b) { return a.seq < b.seq; }))
            << "seq " << e.seq;
      }
      // Identical, except where the cut says it cannot be: a submission whose buffered commands
      // partly came before the window.
      replay::ReplayResult r = ReplayInto(trace_, cut->events);
      if (r.divergences.empty()) {
        EXPECT_EQ(Describe(r), "identical");
      } else {
        ASSERT_EQ(r.outcome, replay::Outcome::kDivergent) << Describe(r);
        auto n = cut->notes.find(r.divergences[0].seq);
        ASSERT_NE(n, cut->notes.end()) << Describe(r);
        EXPECT_NE(n->second.find("submission"), std::string::npos) << n->second;
      }
    }
  }
}

TEST_F(TrimTest, DrawPrimitives2WindowGetsTheDx6BufferPathBeforeIt) {
  // D3dDrawPrimitives2 hands buffers back and forth: a window of it replays only with the DX6
  // calls before it.
  Open("dp2.cltrace");
  absl::StatusOr<TrimResult> cut = Trim(*cutter_, Window(SeqAt(0.4), SeqAt(0.6)));
  ASSERT_TRUE(cut.ok()) << cut.status();
  EXPECT_LT(cut->events.size(), trace_.events.size());
  EXPECT_EQ(Describe(ReplayInto(trace_, cut->events)), "identical");
}

TEST_F(TrimTest, HandlesAliveAtTheCutHaveTheStateTheyHadThere) {
  Open("smallcl.cltrace");
  const uint64_t from = SeqAt(0.5);
  absl::StatusOr<TrimResult> cut = Trim(*cutter_, Window(from));
  ASSERT_TRUE(cut.ok()) << cut.status();
  std::map<std::string, rules::State> before = StatesBefore(trace_, trace_.events, from);
  std::map<std::string, rules::State> in_cut = StatesBefore(trace_, cut->events, from);
  // Every handle the window names has, in the cut, the state it had in the original.
  int compared = 0, not_fresh = 0;
  for (size_t u = cutter_->FirstUnitAtOrAfter(from); u < cutter_->unit_count(); ++u) {
    for (uint64_t h : cutter_->UnitHandles(u)) {
      const std::string token(trace_.handles.Token(h));
      auto it = before.find(token);
      if (it == before.end()) continue;
      EXPECT_EQ(rules::StateName(in_cut[token]), rules::StateName(it->second)) << token;
      ++compared;
      if (it->second != rules::State::kValid && it->second != rules::State::kAlive) ++not_fresh;
    }
  }
  EXPECT_GT(compared, 0);
  EXPECT_GT(not_fresh, 0);  // recycled / cached / recording states, not just created ones
}

TEST_F(TrimTest, HandleCutKeepsItsCallsAndWhatTheyDependOn) {
  Open("smallcl.cltrace");
  // The handle of the first RecycleCreateCommandList: a command list that has been cached.
  uint64_t handle = 0;
  for (const Event& e : trace_.events)
    if (ddi::TraitsOf(e.call).role == ddi::CallRole::kRecycleCreateCommandList) {
      for (uint64_t h : cutter_->UnitHandles(cutter_->UnitOfSeq(e.seq)))
        if (cutter_->LifetimeStart(h, cutter_->UnitOfSeq(e.seq)) != cutter_->UnitOfSeq(e.seq) &&
            handle == 0 && h != e.args[0])
          handle = h;
      if (handle != 0) break;
    }
  ASSERT_NE(handle, 0u);
  const std::string token(trace_.handles.Token(handle));
  absl::StatusOr<TrimResult> cut = Trim(*cutter_, OfHandle(token));
  ASSERT_TRUE(cut.ok()) << cut.status();
  EXPECT_LT(cut->events.size(), trace_.events.size());
  // Every call naming the handle is kept.
  size_t naming = 0;
  for (uint32_t u : cutter_->UnitsNaming(handle)) naming += cutter_->UnitEvents(u).size();
  EXPECT_EQ(cut->window_calls, naming);
  absl::StatusOr<check::CheckResult> verdict = check::Check(cut->events, trace_.handles);
  ASSERT_TRUE(verdict.ok());
  EXPECT_TRUE(verdict->violations.empty());
  EXPECT_EQ(Describe(ReplayInto(trace_, cut->events)), "identical");
}

TEST_F(TrimTest, BadWindowsAndHandlesAreInvalidArgument) {
  Open("smallcl.cltrace");
  EXPECT_EQ(Trim(*cutter_, Window(50, 40)).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Trim(*cutter_, Window(1u << 30)).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Trim(*cutter_, OfHandle("0xdeadbeef")).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(TrimTest, WrittenCutReadsBackWithItsNotes) {
  Open("scene.cltrace");
  absl::StatusOr<TrimResult> cut = Trim(*cutter_, Window(SeqAt(0.4), SeqAt(0.6)));
  ASSERT_TRUE(cut.ok()) << cut.status();
  // Resource contents written before the cut cannot be synthesized: reported, and annotated.
  ASSERT_FALSE(cut->unsynthesized.empty());
  const std::string path = TempPath("cut.cltrace");
  // The corpus is normalised (no timestamp source): say the recording's were derived.
  trace_.header.mutable_writer()->set_timestamps(format::proto::TIMESTAMPS_DERIVED);
  ASSERT_TRUE(WriteCut(trace_, cut->events, cut->notes, path, "cltrace trim").ok());
  absl::StatusOr<LoadedTrace> back = format::ReadAllSorted(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->header.writer().name(), "cltrace trim");
  EXPECT_EQ(back->header.writer().timestamps(), format::proto::TIMESTAMPS_DERIVED);  // kept
  EXPECT_FALSE(back->dense_positions);
  ASSERT_EQ(back->events.size(), cut->events.size());
  EXPECT_TRUE(back->stats.has_index);
  size_t annotated = 0;
  for (size_t i = 0; i < back->events.size(); ++i) {
    EXPECT_EQ(back->events[i].seq, cut->events[i].seq);
    EXPECT_EQ(back->events[i].call, cut->events[i].call);
    const std::string a(back->strings.Token(back->events[i].annotation));
    if (a.find("cltrace trim: ") != std::string::npos) ++annotated;
  }
  EXPECT_EQ(annotated, cut->notes.size());
  unlink(path.c_str());
}

TEST(ReduceTest, PlantedR22ShrinksAndStillReportsIt) {
  LoadedTrace t = Load("smallcl_R22.cltrace");
  absl::StatusOr<std::unique_ptr<TraceCutter>> cutter = TraceCutter::Build(&t);
  ASSERT_TRUE(cutter.ok());
  absl::StatusOr<ReduceResult> r = ReduceToRule(**cutter, rules::Rule::kR22);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->calls_before, t.events.size());
  EXPECT_EQ(r->calls_after, r->events.size());
  EXPECT_LT(r->calls_after * 10, r->calls_before);  // much smaller
  absl::StatusOr<check::CheckResult> verdict = check::Check(r->events, t.handles);
  ASSERT_TRUE(verdict.ok());
  ASSERT_FALSE(verdict->violations.empty());
  EXPECT_EQ(verdict->violations[0].rule, rules::Rule::kR22);
  EXPECT_EQ(verdict->violations[0].seq, r->target_seq);
  // Replayable: into the reference driver with the planted bug, failing the same
  // RecycleCreateCommandList (the Nth of the reduced trace).
  uint64_t nth = 0;
  for (const Event& e : r->events)
    if (e.call == format::CallId::kRecycleCreateCommandList && e.seq <= r->target_seq) ++nth;
  ASSERT_GT(nth, 0u);
  setenv("CLTRACE_REFDRIVER_CONFIG", "bug=R22", 1);
  replay::ReplayResult replayed =
      ReplayInto(t, r->events, {{"oom", "RecycleCreateCommandList", nth}});
  unsetenv("CLTRACE_REFDRIVER_CONFIG");
  EXPECT_EQ(Describe(replayed), "identical");
}

// `src`'s events after everything in `dst`, ids re-interned, positions shifted (a program that
// recreates its device: the same handle values again).
void AppendShifted(const LoadedTrace& src, LoadedTrace* dst, uint64_t* shift) {
  uint64_t span = 0;
  for (const Event& e : src.events) {
    Event c = e;
    RemapIds(
        &c, [&](uint64_t id) { return dst->handles.Intern(src.handles.Token(id)); },
        [&](uint64_t id) { return dst->strings.Intern(src.strings.Token(id)); });
    if (c.content != 0) c.content = dst->contents.Intern(src.contents.Token(e.content));
    c.seq += *shift;
    if (c.end != 0) c.end += *shift;
    if (c.parent != 0) c.parent += *shift;
    span = std::max({span, e.seq, e.end});
    dst->events.push_back(std::move(c));
  }
  *shift += span;
}

TEST(ReduceTest, EarlierRunsOfTheDeviceWithTheSameHandleValuesStayOut) {
  LoadedTrace clean = Load("smallcl.cltrace"), bug = Load("smallcl_R22.cltrace");
  LoadedTrace t;
  uint64_t shift = 0;
  AppendShifted(clean, &t, &shift);
  AppendShifted(clean, &t, &shift);
  const uint64_t earlier = shift;
  AppendShifted(bug, &t, &shift);
  absl::StatusOr<std::unique_ptr<TraceCutter>> cutter = TraceCutter::Build(&t);
  ASSERT_TRUE(cutter.ok()) << cutter.status();
  absl::StatusOr<ReduceResult> r = ReduceToRule(**cutter, rules::Rule::kR22);
  ASSERT_TRUE(r.ok()) << r.status();
  // The caps and size queries before a run's CreateDevice belong to that run, not to the one
  // before (whose handles carry the same values).
  for (const Event& e : r->events) EXPECT_GT(e.seq, earlier) << ddi::NameOf(e.call);
  EXPECT_LT(r->calls_after * 50, r->calls_before);
}

TEST(ReduceTest, ARuleTheTraceDoesNotReportIsNotFound) {
  LoadedTrace t = Load("smallcl.cltrace");
  absl::StatusOr<std::unique_ptr<TraceCutter>> cutter = TraceCutter::Build(&t);
  ASSERT_TRUE(cutter.ok());
  EXPECT_EQ(ReduceToRule(**cutter, rules::Rule::kR22).status().code(), absl::StatusCode::kNotFound);
}

TEST(ReduceTest, OracleDecidesWhatStays) {
  // A failure "at" a late call that needs one particular earlier call: ddmin keeps exactly the
  // closure of the two.
  LoadedTrace t = Load("smallcl.cltrace");
  absl::StatusOr<std::unique_ptr<TraceCutter>> cutter = TraceCutter::Build(&t);
  ASSERT_TRUE(cutter.ok());
  const TraceCutter& c = **cutter;
  const uint64_t target = c.Top(c.unit_count() - 1).seq;
  const uint64_t needed = c.Top(c.unit_count() / 2).seq;
  absl::StatusOr<ReduceResult> r =
      Reduce(c, target, [&](absl::Span<const Event> events) -> absl::StatusOr<bool> {
        return std::any_of(events.begin(), events.end(),
                           [&](const Event& e) { return e.seq == needed; });
      });
  ASSERT_TRUE(r.ok()) << r.status();
  auto has = [&](uint64_t seq) {
    return std::any_of(r->events.begin(), r->events.end(),
                       [&](const Event& e) { return e.seq == seq; });
  };
  EXPECT_TRUE(has(needed));
  EXPECT_TRUE(has(target));
  EXPECT_LT(r->events.size() * 4, t.events.size());
}

TEST(TrimVerbTest, ReduceKeepsAReplayDivergenceInADriver) {
  // A clean recording replayed into the reference driver with a planted R22 that fails the
  // second RecycleCreateCommandList diverges there; reduce keeps that divergence.
  setenv("CLTRACE_REFDRIVER_CONFIG", "bug=R22;oom:RecycleCreateCommandList=2", 1);
  const std::string out_path = TempPath("driver.cltrace");
  std::ostringstream out, err;
  const int code = RunCli({"cltrace", "reduce", "corpus/traces/smallcl.cltrace", "-o", out_path,
                           "--driver", RefDriver()},
                          out, err);
  EXPECT_EQ(code, kExitOk) << err.str();
  EXPECT_NE(out.str().find("diverges at seq "), std::string::npos) << out.str();
  absl::StatusOr<LoadedTrace> small = format::ReadAllSorted(out_path);
  ASSERT_TRUE(small.ok()) << small.status();
  LoadedTrace t = Load("smallcl.cltrace");
  EXPECT_LT(small->events.size() * 10, t.events.size());
  replay::ReplayResult whole = ReplayInto(t, t.events);
  replay::ReplayResult reduced = ReplayInto(*small, small->events);
  unsetenv("CLTRACE_REFDRIVER_CONFIG");
  ASSERT_FALSE(whole.divergences.empty());
  ASSERT_FALSE(reduced.divergences.empty()) << Describe(reduced);
  EXPECT_EQ(reduced.divergences[0].seq, whole.divergences[0].seq);
  unlink(out_path.c_str());
}

TEST(TrimVerbTest, ExitCodesAndOutput) {
  const std::string out_path = TempPath("verb.cltrace");
  std::ostringstream out, err;
  EXPECT_EQ(RunCli({"cltrace", "trim", "corpus/traces/smallcl.cltrace", "-o", out_path, "--from",
                    "300", "--to", "400"},
                   out, err),
            kExitOk)
      << err.str();
  EXPECT_NE(out.str().find("in the window"), std::string::npos) << out.str();
  out.str("");
  EXPECT_EQ(RunCli({"cltrace", "check", out_path}, out, err), kExitOk) << out.str();
  EXPECT_EQ(RunCli({"cltrace", "trim", "corpus/traces/smallcl.cltrace", "-o", out_path}, out, err),
            kExitBadInput);
  EXPECT_EQ(
      RunCli({"cltrace", "trim", "corpus/traces/smallcl.cltrace", "-o", out_path, "--from", "x"},
             out, err),
      kExitBadInput);
  out.str("");
  EXPECT_EQ(RunCli({"cltrace", "reduce", "corpus/traces/smallcl_R22.cltrace", "-o", out_path,
                    "--rule", "R22"},
                   out, err),
            kExitOk)
      << err.str();
  EXPECT_NE(out.str().find("ratio"), std::string::npos) << out.str();
  out.str("");
  EXPECT_EQ(RunCli({"cltrace", "check", out_path}, out, err), kExitProblems);
  EXPECT_NE(out.str().find("R22 seq="), std::string::npos) << out.str();
  EXPECT_EQ(RunCli({"cltrace", "reduce", "corpus/traces/smallcl.cltrace", "-o", out_path, "--rule",
                    "R22"},
                   out, err),
            kExitProblems);
  EXPECT_EQ(RunCli({"cltrace", "reduce", "corpus/traces/smallcl.cltrace", "-o", out_path, "--rule",
                    "R999"},
                   out, err),
            kExitBadInput);
  unlink(out_path.c_str());
}

}  // namespace
}  // namespace cltrace::cli
