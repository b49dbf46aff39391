// Command-list handle state machine (ddi-spec §3.1): R20-R22, R40-R46. Each rule has a
// violating trace and a legal near-miss.
#include "check/testing/check_fixture.h"

namespace cltrace::check::testing {
namespace {

class CommandListTest : public CheckTest {
 protected:
  // Device, dc1, and cl1 made on it (Valid, never executed).
  void MadeList() {
    Device();
    Dc("dc1");
    SmallList("dc1", "cl1");
  }
  // MadeList, then cl1 executed once and released into dc1's lock-free list.
  void ReleasedList() {
    MadeList();
    Execute("cl1");
    RecycleDestroy("cl1");
  }
  // T1e/R21: a CreateCommandList of cl1 on dc1 that reported `hr` made no handle.
  void FailedCreate(const std::string& hr) {
    t.On(kDcThread);
    t.Call("CalcPrivateCommandListSize", {{"hDevice", "ic"}, {"hDeferredContext", "dc1"}}, "256");
    t.Begin("CreateCommandList", CreateListArgs("dc1", "cl1"));
    t.Call("SetErrorCb", {{"hRuntimeDevice", "rtic"}, {"hResult", hr}});
    t.End();
  }
  // Device, dc1 recording a draw, a failed CreateCommandList (`hr`), then the abandon and
  // recycle that follow it (D5e, the default model).
  void AbandonedFailedCreate(const std::string& hr) {
    Device();
    Dc("dc1");
    Draw("dc1");
    FailedCreate(hr);
    t.On(kDcThread).Call("AbandonCommandList", {{"hDevice", "dc1"}});
    RecycleDc("dc1");
  }
  // After ReleasedList: dc1 drains cl1 and reuses it; RecycleCreateCommandList returns S_OK
  // but reports `hr` through pfnSetErrorCb.
  void RecycleCreateReporting(const std::string& hr) {
    t.On(kDcThread).Call("RecycleCommandList", {{"hDevice", "dc1"}, {"hCommandList", "cl1"}});
    t.Begin("RecycleCreateCommandList", CreateListArgs("dc1", "cl1"), "S_OK");
    t.Call("SetErrorCb", {{"hRuntimeDevice", "rtic"}, {"hResult", hr}});
    t.End();
  }
};

TEST_F(CommandListTest, FullRecycleLoopIsLegal) {
  ReleasedList();
  Draw("dc1");
  FinishRecycled("dc1", "cl1", {"cl1"});
  RecycleDc("dc1");
  Execute("cl1");
  Execute("cl1");    // T2: executable any number of times
  DestroyCl("cl1");  // T4: legal at any time
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(CommandListTest, R40_ExecuteRecycleDestroyed) {
  ReleasedList();
  Execute("cl1");
  EXPECT_THAT(Errors(), ElementsAre("R40")) << Report();
  EXPECT_NE(Report().find("[last: Valid@"), std::string::npos) << Report();
}

TEST_F(CommandListTest, R40_ExecuteRecycled) {
  ReleasedList();
  t.On(kDcThread);
  t.Call("RecycleCommandList", {{"hDevice", "dc1"}, {"hCommandList", "cl1"}});
  Execute("cl1");
  EXPECT_THAT(Errors(), ElementsAre("R40")) << Report();
}

TEST_F(CommandListTest, R40_NearMiss_ExecuteTwiceBeforeRelease) {
  MadeList();
  Execute("cl1");
  Execute("cl1");
  RecycleDestroy("cl1");
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(CommandListTest, R41_RecycleDestroyTwice) {
  ReleasedList();
  RecycleDestroy("cl1");
  EXPECT_THAT(Errors(), ElementsAre("R41")) << Report();
}

TEST_F(CommandListTest, R41_RecycleDestroyAfterOwnerDestroyed) {
  MadeList();
  t.On(kDcThread).Call("DestroyDevice", {{"hDevice", "dc1"}});
  RecycleDestroy("cl1");
  EXPECT_THAT(Errors(), ElementsAre("R41")) << Report();
}

TEST_F(CommandListTest, R41_NearMiss_DestroyAfterOwnerDestroyed) {
  MadeList();
  t.On(kDcThread).Call("DestroyDevice", {{"hDevice", "dc1"}});
  DestroyCl("cl1");  // §4.6: the owner is gone, so a full destroy
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(CommandListTest, R42_RecycleValidHandle) {
  MadeList();
  Draw("dc1");
  FinishNew("dc1", "cl2", {"cl1"});  // cl1 was never released
  EXPECT_THAT(Errors(), ElementsAre("R42")) << Report();
}

TEST_F(CommandListTest, R42_RecycleThroughAnotherDc) {
  ReleasedList();
  Dc("dc2");
  Draw("dc2");
  FinishNew("dc2", "cl2", {"cl1"});
  EXPECT_THAT(Errors(), ElementsAre("R42")) << Report();
}

TEST_F(CommandListTest, R42_NearMiss_RecycleThroughOwner) {
  ReleasedList();
  Draw("dc1");
  FinishNew("dc1", "cl2", {"cl1"});  // drained into the cache, a new handle made anyway
  RecycleDc("dc1");
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(CommandListTest, R43_RecycleCreateForAnotherDc) {
  ReleasedList();
  Dc("dc2");
  t.On(kDcThread).Call("RecycleCommandList", {{"hDevice", "dc1"}, {"hCommandList", "cl1"}});
  FinishRecycled("dc2", "cl1", {});
  EXPECT_THAT(Errors(), ElementsAre("R43")) << Report();
}

TEST_F(CommandListTest, R43_RecycleCreateValidHandle) {
  MadeList();
  FinishRecycled("dc1", "cl1", {});
  EXPECT_THAT(Errors(), ElementsAre("R43")) << Report();
}

TEST_F(CommandListTest, R43_NearMiss_RecycleCreateFromOwnCache) {
  ReleasedList();
  FinishRecycled("dc1", "cl1", {"cl1"});
  RecycleDc("dc1");
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(CommandListTest, R44_DestroyTwice) {
  ReleasedList();
  DestroyCl("cl1");
  DestroyCl("cl1");
  EXPECT_THAT(Errors(), ElementsAre("R44")) << Report();
}

TEST_F(CommandListTest, R44_DestroyNeverCreated) {
  Device();
  DestroyCl("cl9");
  EXPECT_THAT(Errors(), ElementsAre("R44")) << Report();
}

TEST_F(CommandListTest, R44_NearMiss_DestroyFromRecycleDestroyedAndRecycled) {
  ReleasedList();
  DestroyCl("cl1");  // T6
  Dc("dc2");
  SmallList("dc2", "cl2");
  RecycleDestroy("cl2");
  t.On(kDcThread).Call("RecycleCommandList", {{"hDevice", "dc2"}, {"hCommandList", "cl2"}});
  DestroyCl("cl2");  // T8
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(CommandListTest, R45_RecycleCreateWithoutRecycleCommandList) {
  ReleasedList();
  FinishRecycled("dc1", "cl1", {});  // straight from RecycleDestroyed
  EXPECT_THAT(Errors(), ElementsAre("R45")) << Report();
}

TEST_F(CommandListTest, R46_RecycleLoopAfterCreate) {
  ReleasedList();
  Draw("dc1");
  FinishNew("dc1", "cl2");
  t.On(kDcThread).Call("RecycleCommandList", {{"hDevice", "dc1"}, {"hCommandList", "cl1"}});
  EXPECT_THAT(Errors(), ElementsAre("R46")) << Report();
}

TEST_F(CommandListTest, R46_NearMiss_RecycleLoopFirst) {
  ReleasedList();
  Dc("dc2");
  SmallList("dc2", "cl2");
  RecycleDestroy("cl2");
  Draw("dc1");
  FinishRecycled("dc1", "cl1", {"cl1"});
  RecycleDc("dc1");
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(CommandListTest, R21_DestroyAfterFailedCreate) {
  AbandonedFailedCreate("E_OUTOFMEMORY");
  DestroyCl("cl1");
  EXPECT_THAT(Errors(), ElementsAre("R21")) << Report();
}

TEST_F(CommandListTest, R21_ExecuteAfterFailedCreate) {
  AbandonedFailedCreate("D3DDDIERR_DEVICEREMOVED");
  Execute("cl1");
  EXPECT_THAT(Errors(), ElementsAre("R21")) << Report();
}

TEST_F(CommandListTest, R21_NearMiss_FailedCreateAbandonedOrClosed) {
  AbandonedFailedCreate("E_OUTOFMEMORY");
  Draw("dc1");
  FailedCreate("E_OUTOFMEMORY");
  RecycleDc("dc1");         // D5e: closing straight to recycle is accepted too
  SmallList("dc1", "cl1");  // the handle value is reused: a fresh lifetime
  Execute("cl1");
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(CommandListTest, R20_CriticalCodeFromCreateCommandList) {
  AbandonedFailedCreate("E_FAIL");
  EXPECT_THAT(Errors(), ElementsAre("R20")) << Report();
}

TEST_F(CommandListTest, R22_RecycleCreateReturnsOtherCode) {
  ReleasedList();
  FinishRecycled("dc1", "cl1", {"cl1"}, "E_FAIL");
  t.Call("AbandonCommandList", {{"hDevice", "dc1"}});
  RecycleDc("dc1");
  EXPECT_THAT(Errors(), ElementsAre("R22")) << Report();
}

TEST_F(CommandListTest, R22_RecycleCreateReportsOomThroughSetErrorCb) {
  ReleasedList();
  RecycleCreateReporting("E_OUTOFMEMORY");
  RecycleDc("dc1");
  EXPECT_THAT(Errors(), ElementsAre("R22")) << Report();
}

TEST_F(CommandListTest, R22_DeviceRemovedThroughSetErrorCbIsOnlyAWarning) {
  ReleasedList();
  RecycleCreateReporting("D3DDDIERR_DEVICEREMOVED");
  RecycleDc("dc1");
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
  EXPECT_THAT(Warnings(), ElementsAre("R22")) << Report();
}

TEST_F(CommandListTest, R22_NearMiss_RecycleCreateOomByReturnValueEitherWay) {
  for (bool destroy_after : {false, true}) {
    t = TestTrace();
    ReleasedList();
    FinishRecycled("dc1", "cl1", {"cl1"}, "E_OUTOFMEMORY");
    t.Call("AbandonCommandList", {{"hDevice", "dc1"}});
    RecycleDc("dc1");
    if (destroy_after) DestroyCl("cl1");  // T7e: the checker accepts both
    EXPECT_THAT(Errors(), IsEmpty()) << "destroy_after=" << destroy_after << "\n" << Report();
  }
}

}  // namespace
}  // namespace cltrace::check::testing
