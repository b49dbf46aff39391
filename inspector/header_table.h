// A Dear ImGui table whose first row is a frozen header of named columns: the shape of every
// list in the inspector's panels.
//
// Thread-safety: the UI thread only (Dear ImGui).
#ifndef CLTRACE_INSPECTOR_HEADER_TABLE_H_
#define CLTRACE_INSPECTOR_HEADER_TABLE_H_

#include <initializer_list>

#include "imgui.h"

namespace cltrace::inspector {

struct TableColumn {
  const char* label;
  float width = 0;  // pixels of a fixed-width column; 0: the column stretches
};

// ImGui::BeginTable with `columns` and their header row frozen on top. True when the table is
// shown: the caller fills its rows, then calls ImGui::EndTable().
inline bool BeginHeaderTable(const char* id, ImGuiTableFlags flags,
                             std::initializer_list<TableColumn> columns,
                             const ImVec2& size = ImVec2(0, 0)) {
  if (!ImGui::BeginTable(id, static_cast<int>(columns.size()), flags, size)) return false;
  ImGui::TableSetupScrollFreeze(0, 1);
  for (const TableColumn& c : columns) {
    ImGui::TableSetupColumn(
        c.label,
        c.width > 0 ? ImGuiTableColumnFlags_WidthFixed : ImGuiTableColumnFlags_WidthStretch,
        c.width);
  }
  ImGui::TableHeadersRow();
  return true;
}

}  // namespace cltrace::inspector

#endif  // CLTRACE_INSPECTOR_HEADER_TABLE_H_
