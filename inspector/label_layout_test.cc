#include "inspector/label_layout.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace cltrace::inspector {
namespace {

void ExpectDisjointAndInside(const std::vector<std::optional<LabelBox>>& placed,
                             const std::vector<LabelBox>& obstacles, const LabelBox& bounds) {
  for (size_t i = 0; i < placed.size(); ++i) {
    if (!placed[i]) continue;
    EXPECT_TRUE(placed[i]->Inside(bounds)) << i;
    for (const LabelBox& o : obstacles) EXPECT_FALSE(placed[i]->Intersects(o)) << i;
    for (size_t j = i + 1; j < placed.size(); ++j) {
      if (placed[j]) {
        EXPECT_FALSE(placed[i]->Intersects(*placed[j])) << i << " " << j;
      }
    }
  }
}

TEST(LabelLayoutTest, CrowdedLabelsAreDisjointInsideAndClearOfObstacles) {
  const LabelBox bounds{10, 20, 410, 220};
  const std::vector<LabelBox> nodes = {{190, 100, 230, 140}, {20, 30, 60, 70}};
  std::vector<LabelRequest> labels;
  // Twelve labels all wanting the same spot next to a node, some hanging off the edge.
  for (int i = 0; i < 12; ++i)
    labels.push_back({.anchor_x = 210,
                      .anchor_y = 95,
                      .normal_x = i % 2 ? 1.0f : 0.0f,
                      .normal_y = -1,
                      .width = 90,
                      .height = 26});
  labels.push_back({.anchor_x = 405, .anchor_y = 25, .width = 120, .height = 26});
  std::vector<std::optional<LabelBox>> placed = PlaceLabels(bounds, nodes, labels);
  ASSERT_EQ(placed.size(), labels.size());
  for (size_t i = 0; i < placed.size(); ++i) EXPECT_TRUE(placed[i].has_value()) << i;
  ExpectDisjointAndInside(placed, nodes, bounds);
  // The first label gets its preferred spot: centred above the anchor.
  EXPECT_FLOAT_EQ(placed[0]->x0, 210 - 45);
  EXPECT_FLOAT_EQ(placed[0]->y1, 95);
}

TEST(LabelLayoutTest, ALabelWithNoRoomIsNotPlaced) {
  const LabelBox bounds{0, 0, 100, 40};
  std::vector<LabelRequest> labels = {
      {.anchor_x = 50, .anchor_y = 20, .width = 96, .height = 36},
      {.anchor_x = 50, .anchor_y = 20, .width = 20, .height = 10},   // no room left
      {.anchor_x = 50, .anchor_y = 20, .width = 200, .height = 10},  // wider than the panel
  };
  std::vector<std::optional<LabelBox>> placed = PlaceLabels(bounds, {}, labels);
  EXPECT_TRUE(placed[0].has_value());
  EXPECT_FALSE(placed[1].has_value());
  EXPECT_FALSE(placed[2].has_value());
  ExpectDisjointAndInside(placed, {}, bounds);
}

TEST(LabelLayoutTest, ElideKeepsBothEndsWithinTheWidth) {
  auto measure = [](absl::string_view s) { return 7.0f * static_cast<float>(s.size()); };
  EXPECT_EQ(ElideToWidth("lvb0 -> vb", 200, measure), "lvb0 -> vb");
  const std::string long_label = "0x7e0000031000 -> 0x7e0000045000";
  const std::string e = ElideToWidth(long_label, 140, measure);
  EXPECT_LE(measure(e), 140);
  EXPECT_GE(measure(e), 140 - 14);  // as much as fits
  EXPECT_EQ(e.substr(0, 4), "0x7e");
  EXPECT_EQ(e.substr(e.size() - 3), "000");
  EXPECT_NE(e.find("..."), std::string::npos);
  EXPECT_EQ(ElideToWidth(long_label, 10, measure), "");
}

}  // namespace
}  // namespace cltrace::inspector
