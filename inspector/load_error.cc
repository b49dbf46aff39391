#include "inspector/load_error.h"

#include <cctype>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace cltrace::inspector {
namespace {

// The number after the first "WORD " in `s` ("offset 300" -> 300).
std::optional<uint64_t> NumberAfter(absl::string_view s, absl::string_view word) {
  for (size_t at = s.find(word); at != absl::string_view::npos; at = s.find(word, at + 1)) {
    size_t i = at + word.size();
    while (i < s.size() && (s[i] == ' ' || s[i] == '=')) ++i;
    size_t j = i;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
    uint64_t v;
    if (j > i && absl::SimpleAtoi(s.substr(i, j - i), &v)) return v;
  }
  return std::nullopt;
}

}  // namespace

LoadErrorText DescribeLoadError(const absl::Status& status, const std::string& path, bool salvage) {
  LoadErrorText t;
  const absl::string_view msg = status.message();
  t.detail = std::string(msg);
  t.offset = NumberAfter(msg, "offset");
  t.line = NumberAfter(msg, "line");
  switch (status.code()) {
    case absl::StatusCode::kNotFound:
      t.headline = absl::StrCat(path, ": no such file");
      break;
    case absl::StatusCode::kDataLoss:
      t.headline = t.offset ? absl::StrCat(path, " is damaged at offset ", *t.offset)
                            : absl::StrCat(path, " is damaged");
      // --salvage skips damaged chunks; a damaged file header (the catalog, the definitions
      // before the first chunk) it cannot skip.
      t.salvage_may_help = !salvage && absl::StrContains(msg, "chunk");
      if (t.salvage_may_help) {
        t.hint =
            "Open it with --salvage to skip the corrupt chunks and show the rest (as cltrace "
            "check --salvage does), or use the button below.";
      } else if (salvage) {
        t.hint =
            "--salvage could not read past this point (cltrace check --salvage stops here "
            "too).";
      } else {
        t.hint = "The damage is outside the chunks --salvage can skip; the file cannot be shown.";
      }
      break;
    case absl::StatusCode::kInvalidArgument:
      t.headline = t.line     ? absl::StrCat(path, ": bad JSONL at line ", *t.line)
                   : t.offset ? absl::StrCat(path, ": not readable at offset ", *t.offset)
                              : absl::StrCat(path, ": not a trace cltrace can read");
      t.hint = "cltrace check names the same place; a JSONL trace can be fixed in a text editor.";
      break;
    default:
      t.headline = absl::StrCat("cannot open ", path);
      break;
  }
  return t;
}

std::string SalvageNotice(const TraceData& data) {
  const format::TraceReader::Stats& s = data.stats;
  if (s.corrupt_chunks_skipped == 0 && s.bytes_skipped == 0 && s.events_skipped == 0) return "";
  std::string out = absl::StrCat("salvaged: ", s.corrupt_chunks_skipped, " corrupt ",
                                 s.corrupt_chunks_skipped == 1 ? "chunk" : "chunks", " (",
                                 s.bytes_skipped, " bytes) skipped");
  if (s.events_skipped > 0) absl::StrAppend(&out, ", ", s.events_skipped, " unknown calls dropped");
  absl::StrAppend(&out, "; the calls in them are missing from this view");
  return out;
}

}  // namespace cltrace::inspector
