#include "check/testing/test_trace.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "check/internal/call_meta.h"
#include "ddi/catalog.h"

namespace cltrace::check::testing {

std::vector<std::string> CorpusTraces() {
  std::vector<std::string> traces;
  std::error_code ec;
  for (const auto& f : std::filesystem::directory_iterator("corpus/traces", ec))
    if (f.path().extension() == ".cltrace") traces.push_back(f.path().string());
  std::sort(traces.begin(), traces.end());
  return traces;
}
namespace {

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "TestTrace: %s\n", message.c_str());
  std::abort();
}

uint64_t ParseScalar(const format::FieldInfo& f, absl::string_view text) {
  if (f.kind == format::FieldKind::kEnum || f.kind == format::FieldKind::kFlags ||
      f.kind == format::FieldKind::kHresult) {
    auto enums = format::Enums();
    const format::EnumInfo& e = f.kind == format::FieldKind::kHresult && f.type_index == 0
                                    ? format::HresultNames()
                                    : enums[f.type_index];
    if (auto v = format::ValueOfName(e, text)) {
      if (f.kind == format::FieldKind::kHresult)
        return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(*v)));
      return *v;
    }
  }
  int64_t s = 0;
  uint64_t u = 0;
  if (absl::StartsWith(text, "0x") && absl::SimpleHexAtoi(text.substr(2), &u)) return u;
  if (absl::SimpleAtoi(text, &s)) return static_cast<uint64_t>(s);
  Die(std::string("cannot parse value \"") + std::string(text) + "\" of field " + f.name);
}

}  // namespace

format::Event TestTrace::Make(absl::string_view fn, const Args& args, absl::string_view ret) {
  const format::CallInfo* ci = format::FindCall(fn);
  if (ci == nullptr) Die("unknown function " + std::string(fn));
  format::Event e;
  e.call = format::IdOf(*ci);
  e.tid = tid_;
  auto fields = format::Fields(*ci);
  e.args.assign(fields.size(), 0);
  std::vector<bool> given(fields.size(), false);
  std::vector<std::vector<uint64_t>> arrays(fields.size());
  for (const auto& [name, value] : args) {
    int i = format::FieldIndex(*ci, name);
    if (i < 0) Die("function " + std::string(fn) + " has no field " + name);
    const format::FieldInfo& f = fields[i];
    given[i] = true;
    switch (f.kind) {
      case format::FieldKind::kHandle:
        e.args[i] = value.empty() || value == "0" || value == "NULL" ? 0 : handles_.Intern(value);
        break;
      case format::FieldKind::kArray: {
        auto elem_fields = format::ElementFields(f);
        if (value == "[]") {
          e.args[i] = 1;
          break;
        }
        uint64_t n = 0;
        for (absl::string_view elem : absl::StrSplit(value, ',')) {
          std::vector<absl::string_view> parts = absl::StrSplit(elem, ':');
          if (parts.size() != elem_fields.size())
            Die("array " + name + " element \"" + std::string(elem) + "\" needs " +
                std::to_string(elem_fields.size()) + " fields");
          for (size_t p = 0; p < parts.size(); ++p) {
            const format::FieldInfo& ef = elem_fields[p];
            arrays[i].push_back(ef.kind == format::FieldKind::kHandle
                                    ? (parts[p] == "0" ? 0 : handles_.Intern(parts[p]))
                                    : ParseScalar(ef, parts[p]));
          }
          ++n;
        }
        e.args[i] = 1 + n;
        break;
      }
      default:
        e.args[i] = ParseScalar(f, value);
        break;
    }
  }
  // Presence fields: 1 unless the call goes through a DC table and no member was given. A
  // structure pointer inside another structure (CREATERESOURCE's pPrimaryDesc) is optional:
  // present only when it or one of its members is given.
  const internal::CallMeta& m = internal::CallTable::Get()[e.call];
  bool through_dc = false;
  if (m.hdevice >= 0) {
    for (const auto& [name, value] : args)
      if (name == fields[m.hdevice].name && dc_tokens_.contains(value)) through_dc = true;
  }
  size_t outer_end = 0;  // fields up to here are members of an enclosing structure pointer
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].kind != format::FieldKind::kPresent) continue;
    const bool nested = i <= outer_end && outer_end != 0;
    if (!nested) outer_end = i + fields[i].elem_count;
    if (given[i]) continue;
    bool member_given = false;
    for (size_t j = i + 1; j < fields.size() && j <= i + fields[i].elem_count; ++j)
      member_given = member_given || given[j];
    e.args[i] = ((!through_dc && !nested) || member_given) ? 1 : 0;
  }
  for (size_t i = 0; i < fields.size(); ++i)
    e.args.insert(e.args.end(), arrays[i].begin(), arrays[i].end());
  if (!ret.empty()) {
    format::FieldInfo hr{"ret", format::FieldKind::kHresult, format::FieldDir::kOut, false, 0, 0,
                         0};
    e.ret = static_cast<int64_t>(ParseScalar(hr, ret));
  }
  if (fn == "CreateDeferredContext") {
    for (const auto& [name, value] : args)
      if (name == "hDrvContext") dc_tokens_.insert(value);
  }
  return e;
}

uint64_t TestTrace::Begin(absl::string_view fn, const Args& args, absl::string_view ret) {
  format::Event e = Make(fn, args, ret);
  e.seq = next_pos_++;
  auto& stack = open_[tid_];
  e.parent = stack.empty() ? 0 : events_[stack.back()].seq;
  events_.push_back(std::move(e));
  stack.push_back(events_.size() - 1);
  return events_.back().seq;
}

void TestTrace::End() {
  auto& stack = open_[tid_];
  if (stack.empty()) Die("End() without an open call on thread " + std::to_string(tid_));
  events_[stack.back()].end = next_pos_++;
  stack.pop_back();
}

void TestTrace::EndSeq(uint64_t seq) {
  for (auto& [tid, stack] : open_) {
    for (size_t i = 0; i < stack.size(); ++i) {
      if (events_[stack[i]].seq != seq) continue;
      if (i + 1 != stack.size()) Die("EndSeq of a call with open nested calls");
      events_[stack[i]].end = next_pos_++;
      stack.pop_back();
      return;
    }
  }
  Die("EndSeq: no open call with seq " + std::to_string(seq));
}

uint64_t TestTrace::Call(absl::string_view fn, const Args& args, absl::string_view ret) {
  uint64_t seq = Begin(fn, args, ret);
  End();
  return seq;
}

const format::Event& TestTrace::At(uint64_t seq) const {
  for (const format::Event& e : events_)
    if (e.seq == seq) return e;
  Die("no event with seq " + std::to_string(seq));
}

}  // namespace cltrace::check::testing
