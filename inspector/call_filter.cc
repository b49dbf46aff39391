#include "inspector/call_filter.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "ddi/catalog.h"
#include "format/jsonl.h"

namespace cltrace::inspector {
namespace {

// Where the handles of one call sit in Event::args (catalog_types.h: fixed fields first, then
// the elements of every array in fixed-field order).
struct HandleLayout {
  std::vector<uint16_t> fixed;  // fixed fields of kind kHandle
  struct Array {
    uint16_t field;                 // the kArray fixed field
    uint16_t stride;                // fields per element
    std::vector<uint16_t> handles;  // element fields of kind kHandle
  };
  std::vector<Array> arrays;  // every array, in order (their elements must be skipped too)
};

const std::vector<HandleLayout>& Layouts() {
  static const std::vector<HandleLayout>* layouts = [] {
    auto* out = new std::vector<HandleLayout>();
    for (const format::CallInfo& ci : format::Calls()) {
      HandleLayout l;
      absl::Span<const format::FieldInfo> fields = format::Fields(ci);
      for (size_t i = 0; i < fields.size(); ++i) {
        if (fields[i].kind == format::FieldKind::kHandle)
          l.fixed.push_back(static_cast<uint16_t>(i));
        if (fields[i].kind != format::FieldKind::kArray) continue;
        HandleLayout::Array a;
        a.field = static_cast<uint16_t>(i);
        absl::Span<const format::FieldInfo> elem = format::ElementFields(fields[i]);
        a.stride = static_cast<uint16_t>(std::max<size_t>(1, elem.size()));
        for (size_t j = 0; j < elem.size(); ++j)
          if (elem[j].kind == format::FieldKind::kHandle)
            a.handles.push_back(static_cast<uint16_t>(j));
        l.arrays.push_back(std::move(a));
      }
      out->push_back(std::move(l));
    }
    return out;
  }();
  return *layouts;
}

// Case-insensitive substring test against an already lowered needle, without allocating
// (this runs for every call of the trace while a text filter scans).
bool ContainsLowered(absl::string_view haystack, absl::string_view lowered) {
  if (lowered.size() > haystack.size()) return false;
  for (size_t i = 0; i + lowered.size() <= haystack.size(); ++i) {
    size_t j = 0;
    while (j < lowered.size() && absl::ascii_tolower(haystack[i + j]) == lowered[j]) ++j;
    if (j == lowered.size()) return true;
  }
  return false;
}

}  // namespace

bool HandleFieldsOf(const format::Event& e, std::vector<uint64_t>* out) {
  const std::vector<HandleLayout>& layouts = Layouts();
  size_t c = static_cast<size_t>(e.call);
  if (c >= layouts.size()) return false;
  const HandleLayout& l = layouts[c];
  const size_t n = e.args.size();
  for (uint16_t f : l.fixed)
    if (f < n && e.args[f] != 0) out->push_back(e.args[f]);
  if (l.arrays.empty()) return true;
  size_t pos = format::Fields(*format::GetCall(c)).size();
  for (const HandleLayout::Array& a : l.arrays) {
    if (a.field >= n) return false;
    const uint64_t v = e.args[a.field];
    const size_t count = v == 0 ? 0 : static_cast<size_t>(v - 1);
    for (size_t k = 0; k < count; ++k, pos += a.stride) {
      if (pos + a.stride > n) return false;
      for (uint16_t h : a.handles)
        if (e.args[pos + h] != 0) out->push_back(e.args[pos + h]);
    }
  }
  return true;
}

void CallFilter::Reset(const TraceModel& model, const CallFilterSpec& spec) {
  model_ = &model;
  spec_ = spec;
  lowered_text_ = absl::AsciiStrToLower(spec.text);
  all_ = spec.empty();
  next_ = all_ ? model.call_count() : 0;
  matches_.clear();
}

bool CallFilter::Matches(size_t i) const {
  const CallRecord r = model_->Call(i);
  if (spec_.call != format::CallId::kInvalid && r.call != spec_.call) return false;
  if (spec_.tid >= 0 && r.tid != static_cast<uint64_t>(spec_.tid)) return false;
  if (spec_.handle == 0 && lowered_text_.empty()) return true;
  absl::StatusOr<std::shared_ptr<const format::Event>> decoded = model_->DecodeEvent(i);
  if (!decoded.ok()) return false;
  const format::Event& e = **decoded;
  if (spec_.handle != 0) {
    bool found = false;
    ForEachHandle(e, [&](uint64_t h) { found = found || h == spec_.handle; });
    if (!found) return false;
  }
  if (!lowered_text_.empty()) {
    // Cheap tests first: the call's name, then the handle tokens; the argument text (the
    // slow part: formatting every field) only when those fail.
    const format::CallInfo* ci = format::GetCall(e.call);
    absl::string_view name = ci ? absl::string_view(ci->name) : absl::string_view();
    if (ContainsLowered(name, lowered_text_)) return true;
    if (model_->ViaDcTable(i) && ContainsLowered(absl::StrCat("DC::", name), lowered_text_))
      return true;
    bool found = false;
    ForEachHandle(e, [&](uint64_t h) {
      found = found || ContainsLowered(model_->handles().Token(h), lowered_text_);
    });
    if (found) return true;
    if (!format::CheckEventLayout(e).ok()) return false;
    std::string args = absl::AsciiStrToLower(absl::StrCat(
        format::ArgsToText(e, model_->handles(), model_->strings()), " ", format::RetToText(e)));
    return absl::StrContains(args, lowered_text_);
  }
  return true;
}

bool CallFilter::Step(size_t max_events) {
  if (done()) return true;
  const size_t n = model_->call_count();
  const size_t stop = std::min(n, next_ + max_events);
  for (; next_ < stop; ++next_)
    if (Matches(next_)) matches_.push_back(static_cast<uint32_t>(next_));
  return done();
}

float CallFilter::progress() const {
  if (model_ == nullptr || model_->call_count() == 0) return 1.0f;
  return static_cast<float>(next_) / static_cast<float>(model_->call_count());
}

size_t CallFilter::size() const {
  if (model_ == nullptr) return 0;
  return all_ ? model_->call_count() : matches_.size();
}

size_t CallFilter::LowerBound(size_t event) const {
  if (all_) return std::min(event, size());
  return static_cast<size_t>(std::lower_bound(matches_.begin(), matches_.end(), event) -
                             matches_.begin());
}

}  // namespace cltrace::inspector
