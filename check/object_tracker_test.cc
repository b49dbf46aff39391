// ObjectTracker on its own: bindings (R73) and the per-(query, context) tracker of §3.4
// (R63), fed event by event (the rule tests through the whole checker are in
// checker_dc_test.cc and checker_value_test.cc).
#include "check/testing/tracker_fixture.h"

namespace cltrace::check::testing {
namespace {

class ObjectTrackerTest : public TrackerTest {
 protected:
  void Feed(uint64_t s, int32_t c) {
    const CallMeta& m = M(s);
    switch (m.op) {
      case Op::kCreateObject:
        return trk().objects.OnCreate(E(s), m, c);
      case Op::kDestroyObject:
        return trk().objects.OnDestroy(E(s), m);
      case Op::kSetter:
        return trk().objects.OnSetter(E(s), m, c, trk().contexts.at(c).dc);
      case Op::kQueryBegin:
      case Op::kQueryEnd:
        return trk().objects.OnQuery(E(s), c, SlotOf("q1").obj, m.op == Op::kQueryBegin);
      default:
        FAIL() << "not an object call";
    }
  }
};

TEST_F(ObjectTrackerTest, R73_DestroyingABoundObjectUntilItIsUnbound) {
  Device();
  Resource("vb");
  Resource("vb2");
  BindVb("ic", "vb");
  uint64_t destroy =
      t.On(kIcThread).Call("DestroyResource", {{"hDevice", "ic"}, {"hResource", "vb"}});
  BindVb("ic", "vb2");
  Start();
  int32_t ic = DeviceFrom(SeqOf("CreateDevice"));
  Feed(SeqOf("CreateResource"), ic);
  Feed(SeqOf("CreateResource", 1), ic);
  Feed(SeqOf("IaSetVertexBuffers"), ic);
  int32_t vb = SlotOf("vb").obj;
  EXPECT_EQ(trk().objects.at(vb).bind_count, 1u);
  Feed(destroy, ic);
  EXPECT_THAT(Found(), ElementsAre("R73"));
  EXPECT_EQ(trk().objects.at(vb).state, State::kDestroyed);
  Feed(SeqOf("IaSetVertexBuffers", 1), ic);  // slot 0 now holds vb2
  EXPECT_EQ(trk().objects.at(vb).bind_count, 0u);
  EXPECT_EQ(trk().objects.at(SlotOf("vb2").obj).bind_count, 1u);
  trk().objects.ClearBindings(ic);
  EXPECT_EQ(trk().objects.at(SlotOf("vb2").obj).bind_count, 0u);
  ASSERT_NE(trk().objects.BindingsOf(ic), nullptr);
  EXPECT_EQ(trk().objects.BindingsOf(ic)->bound, 0u);
}

TEST_F(ObjectTrackerTest, R63_QueryEndedOnAContextWhereItIsNotBegun) {
  Device();
  Dc("dc1");
  Query("q1");
  uint64_t begin = t.On(kIcThread).Call("QueryBegin", {{"hDevice", "ic"}, {"hQuery", "q1"}});
  uint64_t end = t.On(kDcThread).Call("QueryEnd", {{"hDevice", "dc1"}, {"hQuery", "lq1"}});
  uint64_t end_ic = t.On(kIcThread).Call("QueryEnd", {{"hDevice", "ic"}, {"hQuery", "q1"}});
  Start();
  int32_t ic = DeviceFrom(SeqOf("CreateDevice"));
  uint64_t dc_seq = SeqOf("CreateDeferredContext");
  trk().contexts.OnCreateDeferredContext(E(dc_seq), M(dc_seq), ic);
  int32_t dc = SlotOf("dc1").ctx;
  Feed(SeqOf("CreateQuery"), ic);
  int32_t q = SlotOf("q1").obj;
  Feed(begin, ic);
  EXPECT_TRUE(trk().objects.at(q).BuildingOn(ic));
  Feed(end, dc);  // the End of the IC's pair, made on dc1
  EXPECT_THAT(Found(), ElementsAre("R63"));
  EXPECT_FALSE(trk().objects.at(q).BuildingOn(ic));
  EXPECT_EQ(trk().contexts.at(dc).rec_queries.size(), 1u);  // the recording touched q1
  Feed(end_ic, ic);  // nothing is begun any more: an unpaired End is not judged here
  EXPECT_THAT(Found(), ElementsAre("R63"));
}

TEST_F(ObjectTrackerTest, IcUsesOfAViewCountForItsResource) {
  Device();
  Resource("r1");
  Srv("v1", "r1");
  uint64_t set = t.On(kIcThread).Call(
      "PsSetShaderResources",
      {{"hDevice", "ic"}, {"StartSlot", "0"}, {"NumViews", "1"}, {"phShaderResourceViews", "v1"}});
  Start();
  int32_t ic = DeviceFrom(SeqOf("CreateDevice"));
  Feed(SeqOf("CreateResource"), ic);
  Feed(SeqOf("CreateShaderResourceView"), ic);
  trk().objects.NoteIcUses(E(set), M(set));
  EXPECT_EQ(trk().objects.at(SlotOf("v1").obj).last_ic_use, set);
  EXPECT_EQ(trk().objects.at(SlotOf("r1").obj).last_ic_use, set);
  EXPECT_THAT(Found(), IsEmpty());
}

}  // namespace
}  // namespace cltrace::check::testing
