#include "cli/trace_input.h"

#include <sys/stat.h>

#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "cli/progress.h"
#include "cli/verb.h"
#include "ddi/catalog.h"

namespace cltrace::cli {

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

absl::StatusOr<TraceInput> ReadTrace(const std::string& path, bool salvage) {
  format::LoadOptions options;
  options.salvage = salvage;
  return format::LoadTrace(path, options);
}

int FailVerb(std::ostream& err, absl::string_view verb, absl::string_view what,
             absl::string_view message) {
  err << "cltrace " << verb << ": " << what << ": " << message << "\n";
  return kExitBadInput;
}

std::optional<TraceInput> ReadVerbTrace(absl::string_view verb, const std::string& path,
                                        bool salvage, std::ostream& err) {
  absl::StatusOr<TraceInput> in = ReadTrace(path, salvage);
  if (!in.ok()) {
    FailVerb(err, verb, path, in.status().message());
    return std::nullopt;
  }
  return *std::move(in);
}

bool ReportedReadError(absl::string_view verb, const std::string& path, const TraceInput& in,
                       absl::string_view context, std::ostream& out, std::ostream& err) {
  if (in.error.ok()) return false;
  out.flush();
  FailVerb(err, verb, path, absl::StrCat(in.error.message(), context));
  return true;
}

int RunVerbOnTrace(absl::string_view verb, const std::vector<std::string>& args,
                   const ArgSpec& spec, std::ostream& out, std::ostream& err,
                   const std::function<int(const ParsedArgs&, const TraceInput&)>& work) {
  ParsedArgs parsed;
  if (std::optional<int> done = ParseVerbArgs(args, spec, &parsed, out, err)) return *done;
  const std::string& path = parsed.positional[0];
  std::optional<TraceInput> in = ReadVerbTrace(verb, path, parsed.Flag("--salvage"), err);
  if (!in) return kExitBadInput;
  const int code = work(parsed, *in);
  if (ReportedReadError(verb, path, *in, "", out, err)) return kExitBadInput;
  return code;
}

int ExitAfterReading(absl::string_view verb, const std::string& path, const TraceInput& in,
                     absl::string_view context, int status, std::ostream& out, std::ostream& err) {
  if (ReportedReadError(verb, path, in, context, out, err)) return kExitBadInput;
  const auto& s = in.stats;
  if (status == kExitOk &&
      (s.corrupt_chunks_skipped || s.bytes_skipped || s.events_skipped || s.definitions_skipped))
    return kExitProblems;
  return status;
}

std::unique_ptr<format::SeqStream> OpenVerbStream(absl::string_view verb, const std::string& path,
                                                  const format::SeqStreamOptions& options,
                                                  std::ostream& err) {
  absl::StatusOr<std::unique_ptr<format::SeqStream>> s = format::SeqStream::Open(path, options);
  if (!s.ok()) {
    FailVerb(err, verb, path, s.status().message());
    return nullptr;
  }
  return *std::move(s);
}

bool ReportedStreamError(absl::string_view verb, const std::string& path,
                         const format::SeqStream& in, absl::string_view context, std::ostream& out,
                         std::ostream& err) {
  if (in.status().ok()) return false;
  out.flush();
  FailVerb(err, verb, path, absl::StrCat(in.status().message(), context));
  return true;
}

int ExitAfterStreaming(absl::string_view verb, const std::string& path, const format::SeqStream& in,
                       absl::string_view context, int status, std::ostream& out,
                       std::ostream& err) {
  if (ReportedStreamError(verb, path, in, context, out, err)) return kExitBadInput;
  const format::TraceReader::Stats s = in.reader_stats();
  if (status == kExitOk &&
      (s.corrupt_chunks_skipped || s.bytes_skipped || s.events_skipped || s.definitions_skipped))
    return kExitProblems;
  return status;
}

check::TraceReplay ReplayOf(const std::string& path, bool salvage) {
  return [path, salvage](const std::function<void(const format::Event&)>& visit) -> absl::Status {
    format::SeqStreamOptions options;
    options.salvage = salvage;
    options.gaps = false;
    absl::StatusOr<std::unique_ptr<format::SeqStream>> s = format::SeqStream::Open(path, options);
    if (!s.ok()) return s.status();
    format::Event e;
    while ((*s)->Next(&e)) visit(e);
    return (*s)->status();
  };
}

int StreamVerbOnTrace(
    absl::string_view verb, const std::vector<std::string>& args, const ArgSpec& spec,
    std::ostream& out, std::ostream& err,
    const std::function<StreamWork(const ParsedArgs&, const format::SeqStream&)>& start) {
  ParsedArgs parsed;
  if (std::optional<int> done = ParseVerbArgs(args, spec, &parsed, out, err)) return *done;
  const std::string& path = parsed.positional[0];
  format::SeqStreamOptions options;
  options.salvage = parsed.Flag("--salvage");
  options.gaps = false;
  std::unique_ptr<format::SeqStream> in = OpenVerbStream(verb, path, options, err);
  if (in == nullptr) return kExitBadInput;
  StreamWork work = start(parsed, *in);
  absl::Status add_error;
  {
    Progress progress(verb, parsed.Flag("--quiet"));
    format::Event e;
    while (in->Next(&e)) {
      progress.Update(in->delivered(), in->expected_events(),
                      static_cast<double>(in->position()) /
                          static_cast<double>(std::max<uint64_t>(1, in->file_size())));
      if (add_error.ok()) add_error = work.add(e);
      if (work.done && work.done()) break;
    }
  }
  const int code = work.finish(add_error);
  if (ReportedStreamError(verb, path, *in, "", out, err)) return kExitBadInput;
  return code;
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
