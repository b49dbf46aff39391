// libFuzzer target: arbitrary bytes as the text `apitrace dump` prints
// (corpus/apitrace/dump_parser.h), the input of `cltrace-workload apitrace FILE`.
//
// Beyond "no crash, no sanitizer report, no unbounded recursion": every rejection names its
// line and column, and the streaming parser, the line-by-line DumpStream and ParseDump agree on
// the calls read.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "corpus/apitrace/dump_parser.h"

namespace {

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cltrace::apitrace;
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<std::vector<Call>> all = ParseDump(text);
  DumpParser parser(text);
  Call call;
  size_t n = 0;
  while (parser.Next(&call)) {
    Check(!call.name.empty() && call.line >= 1);
    ++n;
  }
  // The line-by-line reader `cltrace-workload apitrace` plays from reads the same.
  std::istringstream in{std::string(text)};
  DumpStream stream(&in);
  size_t streamed = 0;
  while (stream.Next(&call)) {
    Check(all.ok() ? streamed < all->size() && (*all)[streamed].line == call.line &&
                         (*all)[streamed].name == call.name
                   : true);
    ++streamed;
  }
  Check(stream.status() == parser.status() && streamed == n);
  if (all.ok()) {
    Check(parser.status().ok() && n == all->size());
  } else {
    Check(!parser.status().ok() && parser.status() == all.status());
    Check(absl::StartsWith(all.status().message(), "line "));
    Check(absl::StrContains(all.status().message(), ", column "));
  }
  return 0;
}
