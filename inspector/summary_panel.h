// The summary panel: calls per function and per thread, the command-list recycle rate
// (RecycleCreateCommandList over all lists made) and handles alive over time.
//
// Thread-safety: UI thread only.
//
// Example:
//   SummaryPanel summary;
//   summary.DrawContents(model, view);  // inside a window or tab
#ifndef CLTRACE_INSPECTOR_SUMMARY_PANEL_H_
#define CLTRACE_INSPECTOR_SUMMARY_PANEL_H_

#include <memory>

#include "inspector/model.h"
#include "inspector/summary.h"
#include "inspector/view.h"

namespace cltrace::inspector {

class SummaryPanel {
 public:
  void DrawContents(const TraceModel& model, View& view);
  // Computed on first draw for a model.
  const Summary* summary() const { return summary_.get(); }

 private:
  const TraceModel* model_ = nullptr;
  std::unique_ptr<Summary> summary_;
};

}  // namespace cltrace::inspector

#endif  // CLTRACE_INSPECTOR_SUMMARY_PANEL_H_
