// End-to-end tests of the in-process recorder with a fake driver and runtime
// (recorder/internal/fake_driver.h): calls, callbacks and nesting, exact positions across
// threads, annotations, table mutations (R5, R6), back-pressure, write failures, crashes,
// timestamps, oversized records.
#include "recorder/recorder.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ddi/catalog.h"
#include "format/load_trace.h"
#include "gtest/gtest.h"
#include "recorder/internal/fake_driver.h"
#include "recorder/internal/recording_testing.h"

namespace cltrace::recorder {
namespace {

using format::CallId;
using format::Event;
using testing::FakeRtContext;
using testing::FakeRuntime;

struct Trace : format::testing::ReadResult {
  std::string Name(const Event& e) const { return format::GetCall(e.call)->name; }
  std::string Annotation(const Event& e) const { return std::string(strings.Token(e.annotation)); }
  std::string Handle(uint64_t id) const { return std::string(handles.Token(id)); }
  std::vector<std::string> Names() const {
    std::vector<std::string> out;
    for (const Event& e : events) out.push_back(Name(e));
    return out;
  }
};

Trace Load(absl::string_view bytes) {
  Trace t;
  static_cast<format::testing::ReadResult&>(t) = testing::ReadRecording(bytes);
  return t;
}

// The annotation of a recording's last event, which must read back and be a `call`.
std::string LastEventNote(absl::string_view bytes, CallId call) {
  Trace t = Load(bytes);
  EXPECT_TRUE(t.status.ok()) << t.status;
  if (t.events.empty()) {
    ADD_FAILURE() << "the recording holds no events";
    return "";
  }
  EXPECT_EQ(t.events.back().call, call);
  return t.Annotation(t.events.back());
}

std::string Hex(const void* p) { return absl::StrFormat("0x%x", reinterpret_cast<uintptr_t>(p)); }

// Every position 1..2N is used exactly once (N events, all complete).
void ExpectDensePositions(const Trace& t) {
  std::vector<uint64_t> pos;
  for (const Event& e : t.events) {
    pos.push_back(e.seq);
    pos.push_back(e.end);
  }
  std::sort(pos.begin(), pos.end());
  for (size_t i = 0; i < pos.size(); ++i) {
    ASSERT_EQ(pos[i], i + 1) << "position " << i + 1 << " missing or duplicated";
  }
}

class RecorderTest : public testing::RecordingTest {
 protected:
  void SetUp() override { testing::Driver().bugs.store(testing::kNoBug); }
  void TearDown() override { testing::Driver().bugs.store(testing::kNoBug); }
};

TEST_F(RecorderTest, RecordsCallsCallbacksAndTheirNesting) {
  auto rec = Start();
  FakeRuntime rt;
  ASSERT_EQ(rt.Create(&testing::RecordedOpenAdapter), S_OK);
  FakeRtContext& ic = rt.ic();
  for (UINT i = 0; i < 3; ++i) ic.funcs.pfnDraw(ic.handle, 10 + i, i);
  ic.funcs.pfnSetBlendState(ic.handle, D3D10DDI_HBLENDSTATE{}, nullptr, 0xffffffff);
  ic.funcs.pfnFlush(ic.handle);
  Stats stats = rec->Stop();

  Trace t = Load(bytes_);
  ASSERT_TRUE(t.status.ok()) << t.status;
  EXPECT_EQ(t.Names(), (std::vector<std::string>{
                           "CalcPrivateDeviceSize", "CreateDevice",
                           "DisableDeferredStagingResourceDestruction", "Draw", "Draw", "Draw",
                           "SetBlendState", "StateOmRenderTargetsCb", "SetRenderTargets", "Flush",
                           "RenderCb", "PerformAmortizedProcessingCb"}));
  EXPECT_EQ(stats.calls, t.events.size());
  ExpectDensePositions(t);
  auto by_name = [&](const std::string& n, int nth = 0) -> const Event& {
    for (const Event& e : t.events) {
      if (t.Name(e) == n && nth-- == 0) return e;
    }
    static Event none;
    ADD_FAILURE() << "no " << n;
    return none;
  };
  // Nesting: a callback inside its DDI call, the state-refresh DDI inside the callback.
  EXPECT_EQ(by_name("DisableDeferredStagingResourceDestruction").parent,
            by_name("CreateDevice").seq);
  EXPECT_EQ(by_name("StateOmRenderTargetsCb").parent, by_name("SetBlendState").seq);
  EXPECT_EQ(by_name("SetRenderTargets").parent, by_name("StateOmRenderTargetsCb").seq);
  EXPECT_EQ(by_name("RenderCb").parent, by_name("Flush").seq);
  EXPECT_EQ(by_name("PerformAmortizedProcessingCb").parent, by_name("Flush").seq);
  EXPECT_EQ(by_name("Draw").parent, 0u);
  for (const Event& e : t.events) {
    if (e.parent == 0) continue;
    const Event* p = nullptr;
    for (const Event& q : t.events) {
      if (q.seq == e.parent) p = &q;
    }
    ASSERT_NE(p, nullptr);
    EXPECT_LT(p->seq, e.seq);
    EXPECT_GT(p->end, e.end) << t.Name(e) << " must return before " << t.Name(*p);
  }
  // Arguments: handles are the values the process saw; scalars as passed; returns.
  const Event& draw = by_name("Draw", 2);
  ASSERT_EQ(draw.args.size(), 3u);
  EXPECT_EQ(t.Handle(draw.args[0]), Hex(ic.handle.pDrvPrivate));
  EXPECT_EQ(draw.args[1], 12u);
  EXPECT_EQ(draw.args[2], 2u);
  EXPECT_EQ(by_name("Flush").ret, 0);  // void (the 11.0 slot)
  EXPECT_EQ(static_cast<uint64_t>(by_name("CalcPrivateDeviceSize").ret),
            sizeof(testing::FakeDevice));
  EXPECT_EQ(t.Handle(by_name("RenderCb").args[0]), Hex(&rt.device()));
  EXPECT_EQ(t.Handle(by_name("PerformAmortizedProcessingCb").args[0]), Hex(&ic));
  // The runtime and driver saw each other's calls.
  EXPECT_EQ(ic.refreshes.load(), 1u);
  EXPECT_EQ(ic.amortized_old.load(), 1u);
  EXPECT_EQ(rt.device().renders.load(), 1u);
}

TEST_F(RecorderTest, ThreadsOnDeferredContextsGetExactInterleavedPositions) {
  auto rec = Start();
  FakeRuntime rt;
  ASSERT_EQ(rt.Create(&testing::RecordedOpenAdapter), S_OK);
  constexpr int kThreads = 4, kCalls = 3000;
  std::vector<FakeRtContext*> dcs;
  for (int i = 0; i < kThreads; ++i) dcs.push_back(rt.CreateDeferredContext());
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      FakeRtContext* dc = dcs[static_cast<size_t>(i)];
      for (int k = 0; k < kCalls; ++k) {
        dc->funcs.pfnDraw(dc->handle, static_cast<UINT>(k), static_cast<UINT>(i));
      }
    });
  }
  for (auto& th : threads) th.join();
  Stats stats = rec->Stop();
  Trace t = Load(bytes_);
  ASSERT_TRUE(t.status.ok()) << t.status;
  ExpectDensePositions(t);
  std::map<std::string, std::vector<const Event*>> by_dc;
  std::set<uint32_t> tids;
  for (const Event& e : t.events) {
    if (e.call != CallId::kDraw) continue;
    by_dc[t.Handle(e.args[0])].push_back(&e);
    tids.insert(e.tid);
  }
  ASSERT_EQ(by_dc.size(), static_cast<size_t>(kThreads));
  EXPECT_EQ(tids.size(), static_cast<size_t>(kThreads));
  for (int i = 0; i < kThreads; ++i) {
    const auto& v = by_dc[Hex(dcs[static_cast<size_t>(i)]->handle.pDrvPrivate)];
    ASSERT_EQ(v.size(), static_cast<size_t>(kCalls));
    for (int k = 0; k < kCalls; ++k) {
      // The thread's own order: argument k is its k-th call.
      EXPECT_EQ(v[static_cast<size_t>(k)]->args[1], static_cast<uint64_t>(k));
      EXPECT_EQ(v[static_cast<size_t>(k)]->tid, v[0]->tid);
    }
  }
  EXPECT_EQ(stats.threads, static_cast<uint64_t>(kThreads + 1));
}

TEST_F(RecorderTest, AnnotationsNameTheApiCallOfTheDdiCallsInside) {
  auto rec = Start();
  FakeRuntime rt;
  ASSERT_EQ(rt.Create(&testing::RecordedOpenAdapter), S_OK);
  FakeRtContext& ic = rt.ic();
  AnnotateBegin("Draw");
  AnnotateBegin("Nested");  // only the outermost API call counts
  ic.funcs.pfnDraw(ic.handle, 1, 0);
  AnnotateEnd();
  ic.funcs.pfnSetBlendState(ic.handle, D3D10DDI_HBLENDSTATE{}, nullptr, 0);
  AnnotateEnd();
  ic.funcs.pfnDraw(ic.handle, 2, 0);
  rec->Stop();
  Trace t = Load(bytes_);
  ASSERT_TRUE(t.status.ok()) << t.status;
  std::vector<std::string> annotations;
  for (const Event& e : t.events) annotations.push_back(t.Annotation(e));
  EXPECT_EQ(t.Names(), (std::vector<std::string>{"CalcPrivateDeviceSize", "CreateDevice",
                                                 "DisableDeferredStagingResourceDestruction",
                                                 "Draw", "SetBlendState", "StateOmRenderTargetsCb",
                                                 "SetRenderTargets", "Draw"}));
  EXPECT_EQ(annotations,
            (std::vector<std::string>{"", "", "", "Draw", "Draw", "Draw", "Draw", ""}));
}

// Application markers (runtime/annotation.h) go on the next call the thread records, after its
// API annotation; two before one call are joined; a call without a marker before it has none.
TEST_F(RecorderTest, MarkersGoOnTheNextRecordedCallOfTheirThread) {
  auto rec = Start();
  FakeRuntime rt;
  ASSERT_EQ(rt.Create(&testing::RecordedOpenAdapter), S_OK);
  FakeRtContext& ic = rt.ic();
  AnnotateMarker("BeginEvent: Shadow pass");
  AnnotateBegin("Draw");
  ic.funcs.pfnDraw(ic.handle, 1, 0);
  AnnotateEnd();
  ic.funcs.pfnDraw(ic.handle, 2, 0);
  AnnotateMarker("SetMarker: a");
  AnnotateMarker("EndEvent");
  ic.funcs.pfnDraw(ic.handle, 3, 0);
  rec->Stop();
  Trace t = Load(bytes_);
  ASSERT_TRUE(t.status.ok()) << t.status;
  const std::vector<std::string> names = t.Names();
  std::vector<std::string> annotations;  // of the Draws
  for (size_t i = 0; i < t.events.size(); ++i) {
    if (names[i] == "Draw") annotations.push_back(t.Annotation(t.events[i]));
  }
  EXPECT_EQ(annotations, (std::vector<std::string>{"Draw | BeginEvent: Shadow pass", "",
                                                   "SetMarker: a | EndEvent"}));
}

TEST_F(RecorderTest, DriverRewritingACreateSlotIsNotedAndShownToTheRuntime) {
  auto rec = Start();
  FakeRuntime rt;
  ASSERT_EQ(rt.Create(&testing::RecordedOpenAdapter), S_OK);
  FakeRtContext& ic = rt.ic();
  const auto before = ic.funcs.pfnCreateResource;
  testing::Driver().bugs.store(testing::kRewriteSlot);
  ic.funcs.pfnFlush(ic.handle);  // the driver swaps its pfnCreateResource
  testing::Driver().bugs.store(testing::kNoBug);
  ic.funcs.pfnCreateResource(ic.handle, nullptr, D3D10DDI_HRESOURCE{}, D3D10DDI_HRTRESOURCE{});
  // The runtime's own snapshot check (R5) would see its slot change, as without the recorder.
  EXPECT_NE(ic.funcs.pfnCreateResource, before);
  ASSERT_NE(ic.funcs.pfnCreateResource, nullptr);
  ic.funcs.pfnCreateResource(ic.handle, nullptr, D3D10DDI_HRESOURCE{}, D3D10DDI_HRTRESOURCE{});
  rec->Stop();
  Trace t = Load(bytes_);
  ASSERT_TRUE(t.status.ok()) << t.status;
  // Noted on the Flush that made it (checked after every Flush, as the runtime model does),
  // once.
  std::vector<std::string> notes;
  for (const Event& e : t.events) {
    if (e.call == CallId::kFlush || e.call == CallId::kCreateResource) {
      notes.push_back(t.Name(e) + ": " + t.Annotation(e));
    }
  }
  ASSERT_EQ(notes.size(), 3u);
  EXPECT_TRUE(absl::StartsWith(notes[0],
                               "Flush: table-rewrite (R5): D3D11DDI_DEVICEFUNCS.pfnCreateResource "
                               "of immediate context"))
      << notes[0];
  EXPECT_EQ(notes[1], "CreateResource: ");
  EXPECT_EQ(notes[2], "CreateResource: ");
}

// RelocateDeviceFuncs: the runtime copies its table (the recorder's thunks) elsewhere and says
// so. The driver is told the address of the table it was handed, which did not move (its
// slot writes must keep reaching the recorder), and a later rewrite shows in the runtime's new
// table, not in the one it left.
TEST_F(RecorderTest, RelocatedRuntimeTableGetsLaterRewritesAndTheDriverKeepsItsTable) {
  auto rec = Start();
  FakeRuntime rt;
  ASSERT_EQ(rt.Create(&testing::RecordedOpenAdapter), S_OK);
  FakeRtContext& ic = rt.ic();
  testing::FakeDevice* driver = testing::AsFake(ic.handle);
  D3D11DDI_DEVICEFUNCS* const driver_table = driver->table;
  auto moved = std::make_unique<D3D11DDI_DEVICEFUNCS>(ic.funcs);
  ASSERT_NE(moved->pfnRelocateDeviceFuncs, nullptr);
  moved->pfnRelocateDeviceFuncs(ic.handle, moved.get());
  EXPECT_EQ(driver->table, driver_table);  // not the runtime's copy
  const auto old_slot = ic.funcs.pfnCreateResource;
  testing::Driver().bugs.store(testing::kRewriteSlot);
  moved->pfnFlush(ic.handle);  // the driver swaps its pfnCreateResource
  testing::Driver().bugs.store(testing::kNoBug);
  EXPECT_NE(moved->pfnCreateResource, old_slot);    // shown where the runtime looks now
  EXPECT_EQ(ic.funcs.pfnCreateResource, old_slot);  // the left table is not written
  rec->Stop();
  Trace t = Load(bytes_);
  ASSERT_TRUE(t.status.ok()) << t.status;
  int relocations = 0;
  for (const Event& e : t.events) {
    if (e.call != CallId::kRelocateDeviceFuncs) continue;
    ++relocations;
    EXPECT_EQ(e.args[1], reinterpret_cast<uint64_t>(moved.get()));  // the runtime's argument
  }
  EXPECT_EQ(relocations, 1);
}

TEST_F(RecorderTest, RewriteSeenFirstByTheCallThroughThatSlotIsNotedThere) {
  auto rec = Start();
  FakeRuntime rt;
  ASSERT_EQ(rt.Create(&testing::RecordedOpenAdapter), S_OK);
  FakeRtContext& ic = rt.ic();
  // A rewrite outside any checked call (here: by the test, as a driver thread could).
  testing::FakeDevice* dev = testing::AsFake(ic.handle);
  dev->table->pfnCreateResource = &testing::fake::CreateResourceB;
  ic.funcs.pfnCreateResource(ic.handle, nullptr, D3D10DDI_HRESOURCE{}, D3D10DDI_HRTRESOURCE{});
  rec->Stop();
  const std::string note = LastEventNote(bytes_, CallId::kCreateResource);
  EXPECT_TRUE(absl::StartsWith(note, "table-rewrite (R5)")) << note;
}

TEST_F(RecorderTest, RewriteOfASlotNotCalledAgainIsFoundByTheBackgroundCheck) {
  auto rec = Start();
  FakeRuntime rt;
  ASSERT_EQ(rt.Create(&testing::RecordedOpenAdapter), S_OK);
  FakeRtContext& ic = rt.ic();
  const auto before = ic.funcs.pfnCreateResource;
  // A rewrite nobody calls through and no checked call follows (as a driver thread could).
  testing::AsFake(ic.handle)->table->pfnCreateResource = &testing::fake::CreateResourceB;
  // The background thread compares whole tables every 50 ms.
  for (int i = 0; i < 1000 && ic.funcs.pfnCreateResource == before; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_NE(ic.funcs.pfnCreateResource, before);
  ic.funcs.pfnDraw(ic.handle, 1, 0);  // the next call on that context carries the note
  rec->Stop();
  const std::string note = LastEventNote(bytes_, CallId::kDraw);
  EXPECT_TRUE(absl::StrContains(note, "pfnCreateResource")) << note;
}

TEST_F(RecorderTest, CallbackThroughAReplacedPointerIsNotedAndReachesThatPointer) {
  auto rec = Start();
  FakeRuntime rt;
  ASSERT_EQ(rt.Create(&testing::RecordedOpenAdapter), S_OK);
  FakeRtContext& ic = rt.ic();
  testing::Driver().bugs.store(testing::kCacheCallback);
  ic.funcs.pfnFlush(ic.handle);  // cached pointer, still current
  FakeRuntime::SwapCallbacks(&ic);
  ic.funcs.pfnFlush(ic.handle);  // cached pointer, replaced since (R6)
  testing::Driver().bugs.store(testing::kNoBug);
  ic.funcs.pfnFlush(ic.handle);  // through the table: the new pointer
  rec->Stop();
  // The runtime observed exactly what it would without the recorder.
  EXPECT_EQ(ic.amortized_old.load(), 2u);
  EXPECT_EQ(ic.amortized_new.load(), 1u);
  Trace t = Load(bytes_);
  ASSERT_TRUE(t.status.ok()) << t.status;
  std::vector<std::string> notes;
  for (const Event& e : t.events) {
    if (e.call == CallId::kPerformAmortizedProcessingCb) notes.push_back(t.Annotation(e));
  }
  ASSERT_EQ(notes.size(), 3u);
  EXPECT_EQ(notes[0], "");
  EXPECT_TRUE(absl::StartsWith(notes[1],
                               "stale-callback (R6): D3D11DDI_CORELAYER_DEVICECALLBACKS."
                               "pfnPerformAmortizedProcessingCb"))
      << notes[1];
  EXPECT_TRUE(absl::StrContains(notes[1], "replaced 1 swap(s) ago")) << notes[1];
  EXPECT_EQ(notes[2], "");
}

// A sink as slow as a congested disk.
class SlowSink : public format::ByteSink {
 public:
  explicit SlowSink(std::string* out) : out_(out) {}
  absl::Status Write(absl::string_view bytes) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    out_->append(bytes.data(), bytes.size());
    return absl::OkStatus();
  }
  absl::Status Flush() override { return absl::OkStatus(); }

 private:
  std::string* out_;
};

TEST_F(RecorderTest, ProducersWaitWhenTheWriterFallsBehindAndNothingIsDropped) {
  Options o;
  o.thread_buffer_bytes = 8192;  // the smallest ring
  o.sink = std::make_unique<SlowSink>(&bytes_);
  o.chunk_bytes = 1024;  // a slow write every few dozen calls
  auto rec = Start(std::move(o));
  FakeRuntime rt;
  ASSERT_EQ(rt.Create(&testing::RecordedOpenAdapter), S_OK);
  FakeRtContext& ic = rt.ic();
  constexpr int kCalls = 20000;
  // A thread's ring is sized when the thread first records: use a new one.
  std::thread([&] {
    for (int i = 0; i < kCalls; ++i) ic.funcs.pfnDraw(ic.handle, static_cast<UINT>(i), 0);
  }).join();
  Stats stats = rec->Stop();
  EXPECT_GT(stats.producer_waits, 0u);
  EXPECT_GT(stats.producer_wait_ns, 0u);
  Trace t = Load(bytes_);
  ASSERT_TRUE(t.status.ok()) << t.status;
  EXPECT_EQ(t.events.size(), static_cast<size_t>(kCalls + 3));
  ExpectDensePositions(t);
}

TEST_F(RecorderTest, FullDiskStopsTheFileButCallsKeepBeingForwarded) {
  Options o;
  o.sink = format::testing::TornWriteSink::FullAt(&bytes_, 6000);
  o.chunk_bytes = 2048;
  o.zstd_level = 1;
  auto rec = Start(std::move(o));
  FakeRuntime rt;
  ASSERT_EQ(rt.Create(&testing::RecordedOpenAdapter), S_OK);
  FakeRtContext& ic = rt.ic();
  const uint64_t draws_before = testing::AsFake(ic.handle)->draws;
  constexpr int kCalls = 50000;
  for (int i = 0; i < kCalls; ++i) ic.funcs.pfnDraw(ic.handle, static_cast<UINT>(i * 7919), 0);
  EXPECT_EQ(testing::AsFake(ic.handle)->draws - draws_before, static_cast<uint64_t>(kCalls));
  Stats stats = rec->Stop();
  EXPECT_EQ(stats.write_failures, 1u);
  EXPECT_TRUE(absl::StrContains(stats.first_error, "No space left on device")) << stats.first_error;
  EXPECT_GT(stats.events_discarded, 0u);
  EXPECT_EQ(stats.calls, static_cast<uint64_t>(kCalls + 3));
  // Every recorded call is counted once: written, or not written (those of the failed chunk
  // and of the batch in hand at the failure included).
  EXPECT_EQ(stats.calls, stats.events_written + stats.events_discarded)
      << "written " << stats.events_written << ", not written " << stats.events_discarded;
  // What was written is a readable prefix ending in a torn chunk.
  Trace t = Load(bytes_);
  EXPECT_TRUE(t.status.ok()) << t.status;
  EXPECT_GT(t.events.size(), 0u);
  EXPECT_LT(t.events.size(), static_cast<size_t>(kCalls));
  EXPECT_EQ(t.events.size(), stats.events_written);
}

TEST_F(RecorderTest, UnwritableOutputFailsToStartAndCallsStillGoThrough) {
  Options o;
  o.output_path = "/nonexistent-directory/t.cltrace";
  auto rec = Recorder::Start(std::move(o));
  ASSERT_FALSE(rec.ok());
  EXPECT_EQ(rec.status().code(), absl::StatusCode::kNotFound) << rec.status();
  FakeRuntime rt;
  ASSERT_EQ(rt.Create(&testing::RecordedOpenAdapter), S_OK);
  const uint64_t before = testing::AsFake(rt.ic().handle)->draws;
  rt.ic().funcs.pfnDraw(rt.ic().handle, 3, 0);
  EXPECT_EQ(testing::AsFake(rt.ic().handle)->draws, before + 1);
}

// Options::drain_nice lowers the draining thread's priority only: the recorded program's
// threads keep theirs.
TEST_F(RecorderTest, TheDrainerRunsAtItsOwnNiceValue) {
  auto nice_of = [](const std::string& task) {
    std::ifstream in("/proc/self/task/" + task + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // Fields after the command's closing parenthesis: state is field 3, nice field 19.
    std::istringstream rest(stat.substr(stat.rfind(')') + 2));
    std::string field;
    for (int i = 3; i <= 19 && rest >> field; ++i) {
    }
    return std::stoi(field);
  };
  auto drainer_nice = [&]() -> std::optional<int> {
    for (const auto& t : std::filesystem::directory_iterator("/proc/self/task")) {
      std::ifstream comm(t.path() / "comm");
      std::string name;
      std::getline(comm, name);
      if (name == "cltrace-record") return nice_of(t.path().filename().string());
    }
    return std::nullopt;
  };
  const int own = nice_of(std::to_string(gettid()));
  Options o;
  std::string bytes;
  o.sink = std::make_unique<format::StringSink>(&bytes);
  o.drain_nice = 7;
  auto rec = Recorder::Start(std::move(o));
  ASSERT_TRUE(rec.ok()) << rec.status();
  std::optional<int> seen;
  for (int i = 0; i < 2000 && !seen.has_value(); ++i) {  // the thread names itself first
    seen = drainer_nice();
    if (seen.has_value() && *seen != 7) seen.reset();
    if (!seen.has_value()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_TRUE(seen.has_value()) << "no drainer thread at nice 7";
  EXPECT_EQ(nice_of(std::to_string(gettid())), own);  // this (the program's) thread: unchanged
  (*rec)->Stop();
}

TEST_F(RecorderTest, OnlyOneRecorderAtATime) {
  auto rec = Start();
  Options o;
  std::string other;
  o.sink = std::make_unique<format::StringSink>(&other);
  auto second = Recorder::Start(std::move(o));
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  rec->Stop();
  Options again;
  again.sink = std::make_unique<format::StringSink>(&other);
  EXPECT_TRUE(Recorder::Start(std::move(again)).ok());
}

TEST_F(RecorderTest, FlushWritesEverythingThatReturned) {
  auto rec = Start();
  FakeRuntime rt;
  ASSERT_EQ(rt.Create(&testing::RecordedOpenAdapter), S_OK);
  for (int i = 0; i < 10; ++i) rt.ic().funcs.pfnDraw(rt.ic().handle, 1, 0);
  ASSERT_TRUE(rec->Flush().ok());
  std::string snapshot = bytes_;
  Trace t = Load(snapshot);
  ASSERT_TRUE(t.status.ok()) << t.status;
  EXPECT_EQ(t.events.size(), 13u);
  rec->Stop();
}

// Runs `body` in a child process that records into `path`; returns the wait status.
template <typename F>
int InChild(const std::string& path, F body) {
  const pid_t pid = fork();
  if (pid == 0) {
    Options o;
    o.output_path = path;
    o.install_signal_handlers = true;
    o.flush_period_ms = 0;  // only the crash flush writes
    auto rec = Recorder::Start(std::move(o));
    if (!rec.ok()) _exit(100);
    body();
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return absl::StrCat(dir != nullptr ? dir : "/tmp", "/cltrace_recorder_", getpid(), "_", name);
}

TEST_F(RecorderTest, SegfaultInsideACallLeavesEverythingBeforeItAndTheOpenCall) {
  const std::string path = TempPath("segv.cltrace");
  const int status = InChild(path, [] {
    FakeRuntime rt;
    if (rt.Create(&testing::RecordedOpenAdapter) != S_OK) _exit(101);
    for (int i = 0; i < 100; ++i) rt.ic().funcs.pfnDraw(rt.ic().handle, 1, 0);
    rt.ic().funcs.pfnDrawIndexed(rt.ic().handle, testing::kCrashIndexCount, 0, 0);
  });
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << status;
  EXPECT_EQ(WTERMSIG(status), SIGSEGV);
  auto trace = format::ReadAllSorted(path);
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_EQ(trace->events.size(), 104u);
  const Event& last = trace->events.back();
  EXPECT_EQ(last.call, CallId::kDrawIndexed);
  EXPECT_EQ(last.end, 0u) << "the call the process died in never returned";
  EXPECT_EQ(last.args[1], testing::kCrashIndexCount);
  std::remove(path.c_str());
}

TEST_F(RecorderTest, AbortBetweenCallsLeavesEveryCallMade) {
  const std::string path = TempPath("abrt.cltrace");
  const int status = InChild(path, [] {
    FakeRuntime rt;
    if (rt.Create(&testing::RecordedOpenAdapter) != S_OK) _exit(101);
    for (int i = 0; i < 250; ++i) rt.ic().funcs.pfnDraw(rt.ic().handle, 1, 0);
    abort();
  });
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << status;
  EXPECT_EQ(WTERMSIG(status), SIGABRT);
  auto trace = format::ReadAllSorted(path);
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_EQ(trace->events.size(), 253u);
  for (const Event& e : trace->events) EXPECT_NE(e.end, 0u);
  std::remove(path.c_str());
}

TEST_F(RecorderTest, ForkedChildForwardsWithoutRecordingOrWaiting) {
  Options o;
  o.thread_buffer_bytes = 8192;  // the child fills it many times over
  auto rec = Start(std::move(o));
  FakeRuntime rt;
  ASSERT_EQ(rt.Create(&testing::RecordedOpenAdapter), S_OK);
  const pid_t pid = fork();
  if (pid == 0) {
    const uint64_t before = testing::AsFake(rt.ic().handle)->draws;
    for (int i = 0; i < 100000; ++i) rt.ic().funcs.pfnDraw(rt.ic().handle, 1, 0);
    _exit(testing::AsFake(rt.ic().handle)->draws - before == 100000 ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  rt.ic().funcs.pfnDraw(rt.ic().handle, 2, 0);
  rec->Stop();
  Trace t = Load(bytes_);
  ASSERT_TRUE(t.status.ok()) << t.status;
  EXPECT_EQ(t.events.size(), 4u) << "only the parent's calls";
}

void CheckTimestamps(TimestampMode mode) {
  std::string bytes;
  Options o;
  o.sink = std::make_unique<format::StringSink>(&bytes);
  o.timestamps = mode;
  auto rec = Recorder::Start(std::move(o));
  ASSERT_TRUE(rec.ok());
  FakeRuntime rt;
  ASSERT_EQ(rt.Create(&testing::RecordedOpenAdapter), S_OK);
  for (int i = 0; i < 100; ++i) rt.ic().funcs.pfnDraw(rt.ic().handle, 1, 0);
  // Flush makes the background thread take a (position, clock) sample now: derived times are
  // exact to within the samples around a call, and a starved background thread might
  // otherwise take none during the pause.
  ASSERT_TRUE((*rec)->Flush().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  ASSERT_TRUE((*rec)->Flush().ok());
  for (int i = 0; i < 100; ++i) rt.ic().funcs.pfnDraw(rt.ic().handle, 2, 0);
  (*rec)->Stop();
  Trace t = Load(bytes);
  ASSERT_TRUE(t.status.ok());
  ASSERT_EQ(t.events.size(), 203u);
  int64_t prev = 0;
  for (const Event& e : t.events) {
    EXPECT_GE(e.timestamp_ns, prev) << "seq " << e.seq;
    prev = e.timestamp_ns;
  }
  // Stored in 100 ns units; the gap is visible to within the poll interval (derived) or
  // exactly (clock).
  const int64_t gap = t.events[103].timestamp_ns - t.events[102].timestamp_ns;
  EXPECT_GE(gap, 25'000'000) << "gap " << gap;
  EXPECT_LT(gap, 1'000'000'000) << "gap " << gap;
}

TEST_F(RecorderTest, DerivedTimestampsFollowPositionsAndShowPauses) {
  CheckTimestamps(TimestampMode::kDerived);
}

TEST_F(RecorderTest, ClockTimestampsFollowPositionsAndShowPauses) {
  CheckTimestamps(TimestampMode::kClock);
}

void APIENTRY NoOpSetConstantBuffers(D3D10DDI_HDEVICE, UINT, UINT, const D3D10DDI_HRESOURCE*) {}

TEST_F(RecorderTest, RecordLargerThanTheRingTakesTheOverflowPath) {
  Options o;
  o.thread_buffer_bytes = 8192;  // (for threads that start recording from now on)
  auto rec = Start(std::move(o));
  static unsigned char device_memory[64];
  D3D11DDI_DEVICEFUNCS driver{}, runtime{};
  driver.pfnVsSetConstantBuffers = &NoOpSetConstantBuffers;
  DeviceTables d;
  d.device.pDrvPrivate = device_memory;
  d.driver_funcs = &driver;
  d.runtime_funcs = &runtime;
  ASSERT_TRUE(WrapDevice(d).ok());
  std::vector<D3D10DDI_HRESOURCE> buffers(70000);
  for (size_t i = 0; i < buffers.size(); ++i) {
    buffers[i].pDrvPrivate = reinterpret_cast<void*>(0x1000 + 16 * (i % 100));
  }
  runtime.pfnVsSetConstantBuffers(d.device, 0, static_cast<UINT>(buffers.size()), buffers.data());
  runtime.pfnVsSetConstantBuffers(d.device, 0, 1, buffers.data());
  rec->Stop();
  UnwrapDevice(d.device);
  Trace t = Load(bytes_);
  ASSERT_TRUE(t.status.ok()) << t.status;
  ASSERT_EQ(t.events.size(), 2u);
  const Event& big = t.events[0];
  // hDevice, StartBuffer, NumBuffers, phBuffers (1 + recorded count), then the elements.
  ASSERT_EQ(big.args.size(), 4u + 65536u);
  EXPECT_EQ(big.args[2], 70000u);
  EXPECT_EQ(big.args[3], 1u + 65536u);
  EXPECT_EQ(t.Handle(big.args[4 + 99]), "0x1630");
  EXPECT_EQ(t.events[1].args.size(), 5u);
}

}  // namespace
}  // namespace cltrace::recorder
