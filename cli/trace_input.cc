#include "cli/trace_input.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "format/catalog.h"
#include "format/jsonl.h"

namespace cltrace::cli {

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

absl::string_view FormatName(TraceFormat format) {
  return format == TraceFormat::kJsonl ? "JSONL" : "cltrace";
}

absl::StatusOr<TraceFormat> DetectFormat(const std::string& path) {
  // An ifstream opens a directory and then reads nothing: that would pass for an empty trace.
  if (IsDirectory(path)) return absl::InvalidArgumentError("is a directory, not a trace file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open: ", std::strerror(errno)));
  char c;
  while (in.get(c)) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
    return c == '{' ? TraceFormat::kJsonl : TraceFormat::kCltrace;
  }
  return absl::EndsWith(path, ".cltrace") ? TraceFormat::kCltrace : TraceFormat::kJsonl;
}

namespace {

uint64_t FileSize(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  return in ? static_cast<uint64_t>(in.tellg()) : 0;
}

void SortBySeq(std::vector<format::Event>* events) {
  std::stable_sort(events->begin(), events->end(),
                   [](const format::Event& a, const format::Event& b) { return a.seq < b.seq; });
}

void NotePositions(TraceInput* in) {
  in->gaps = format::FindPositionGaps(in->events);
  if (!in->dense_positions) {
    in->gaps.missing = in->gaps.first_missing = 0;
    in->gaps.holes.clear();
  }
}

}  // namespace

absl::StatusOr<TraceInput> ReadTrace(const std::string& path, bool salvage) {
  absl::StatusOr<TraceFormat> detected = DetectFormat(path);
  if (!detected.ok()) return detected.status();
  TraceInput in;
  in.path = path;
  in.format = *detected;
  in.file_size = FileSize(path);
  format::Event e;
  if (in.format == TraceFormat::kJsonl) {
    absl::StatusOr<std::unique_ptr<format::JsonlReader>> r = format::JsonlReader::Open(path);
    if (!r.ok()) return r.status();
    while ((*r)->Next(&e)) in.events.push_back(std::move(e));
    in.error = (*r)->status();
    in.handles = (*r)->handles();
    in.strings = (*r)->strings();
    in.contents = (*r)->contents();
    in.lines = (*r)->lines();
    NotePositions(&in);
    return in;
  }
  format::TraceReader::Options options;
  options.salvage = salvage;
  absl::StatusOr<std::unique_ptr<format::TraceReader>> r = format::TraceReader::Open(path, options);
  if (!r.ok()) return r.status();
  while ((*r)->Next(&e)) in.events.push_back(std::move(e));
  in.error = (*r)->status();
  in.header = (*r)->header();
  in.stats = (*r)->stats();
  in.torn_tail = (*r)->torn_tail();
  in.handles = (*r)->handles();
  in.strings = (*r)->strings();
  in.contents = (*r)->contents();
  // Writers append in arrival order; every reader of the CLI wants call order.
  SortBySeq(&in.events);
  in.dense_positions = format::PositionsAreDense(in.header);
  NotePositions(&in);
  return in;
}

void RemapIds(format::Event* event, const std::function<uint64_t(uint64_t)>& handle,
              const std::function<uint64_t(uint64_t)>& string) {
  if (event->annotation != 0) event->annotation = string(event->annotation);
  const format::CallInfo* call = format::GetCall(event->call);
  if (call == nullptr) return;
  auto fields = format::Fields(*call);
  auto remap = [&](const format::FieldInfo& f, uint64_t* v) {
    if (*v == 0) return;
    if (f.kind == format::FieldKind::kHandle) *v = handle(*v);
    if (f.kind == format::FieldKind::kString) *v = string(*v);
  };
  size_t tail = fields.size();
  for (size_t i = 0; i < fields.size() && i < event->args.size(); ++i) {
    remap(fields[i], &event->args[i]);
    if (fields[i].kind != format::FieldKind::kArray || event->args[i] == 0) continue;
    auto elems = format::ElementFields(fields[i]);
    for (uint64_t k = 0; k + 1 < event->args[i]; ++k) {
      for (const format::FieldInfo& ef : elems) {
        if (tail < event->args.size()) remap(ef, &event->args[tail]);
        ++tail;
      }
    }
  }
}

bool IsCallback(const format::Event& event) {
  const format::CallInfo* call = format::GetCall(event.call);
  if (call == nullptr) return false;
  return call->domain == format::Domain::kCallback || call->layer == format::Layer::kCoreLayer ||
         call->layer == format::Layer::kKernelCb || call->layer == format::Layer::kDxgkrnl;
}

}  // namespace cltrace::cli
