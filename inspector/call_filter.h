// The call list's filter: by function, thread, handle and text, computed incrementally so a
// 10 M-call trace never blocks a frame — the UI calls Step with a budget every frame and shows
// the matches found so far with the scan's progress.
//
// Thread-safety: a CallFilter is used by one thread; the model it reads is immutable.
//
// Example:
//   CallFilter f;
//   f.Reset(model, {.call = format::CallId::kCommandListExecute});
//   while (!f.done()) f.Step(1'000'000);
//   for (size_t i = 0; i < f.size(); ++i) Show(model.Call(f.at(i)));
#ifndef CLTRACE_INSPECTOR_CALL_FILTER_H_
#define CLTRACE_INSPECTOR_CALL_FILTER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ddi/call_ids.h"
#include "inspector/model.h"

namespace cltrace::inspector {

struct CallFilterSpec {
  format::CallId call = format::CallId::kInvalid;  // kInvalid = any function
  int64_t tid = -1;                                // -1 = any thread
  uint64_t handle = 0;    // 0 = any; else calls with this handle id in any handle field
  std::string text = "";  // case-insensitive substring of the call name or its argument text
  bool empty() const {
    return call == format::CallId::kInvalid && tid < 0 && handle == 0 && text.empty();
  }
  bool operator==(const CallFilterSpec&) const = default;
};

class CallFilter {
 public:
  // Starts a new scan of `model` (which must outlive the filter or the next Reset).
  void Reset(const TraceModel& model, const CallFilterSpec& spec);
  // Scans up to `max_events` more events; returns done().
  bool Step(size_t max_events);
  bool done() const { return model_ == nullptr || next_ >= model_->call_count(); }
  float progress() const;
  // Matches so far (all events while the spec is empty).
  size_t size() const;
  size_t at(size_t i) const { return all_ ? i : matches_[i]; }
  // Position in the match list of the first match at or after event index `event`.
  size_t LowerBound(size_t event) const;
  const CallFilterSpec& spec() const { return spec_; }
  // True if event `i` passes the filter.
  bool Matches(size_t i) const;

 private:
  const TraceModel* model_ = nullptr;
  CallFilterSpec spec_;
  std::string lowered_text_;
  bool all_ = false;
  size_t next_ = 0;
  std::vector<uint32_t> matches_;
};

// Calls `fn(handle_id)` for every non-NULL handle field of `e`, array elements included.
template <typename Fn>
void ForEachHandle(const format::Event& e, Fn fn);

// Implementation detail of ForEachHandle (non-template part).
bool HandleFieldsOf(const format::Event& e, std::vector<uint64_t>* out);

template <typename Fn>
void ForEachHandle(const format::Event& e, Fn fn) {
  thread_local std::vector<uint64_t> handles;
  handles.clear();
  HandleFieldsOf(e, &handles);
  for (uint64_t h : handles) fn(h);
}

}  // namespace cltrace::inspector

#endif  // CLTRACE_INSPECTOR_CALL_FILTER_H_
