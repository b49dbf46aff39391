// cltrace-normalize IN.cltrace OUT.cltrace: rewrites a recording so that two recordings of one
// deterministic run are the same bytes (addresses, thread ids, timestamps, pid and paths
// derived from the call sequence; format/normalize.h). scripts/make-corpus.sh runs it on
// every trace of corpus/traces.
//
// Exit status: 0 written, 2 bad usage or an input that cannot be normalised (the reason on
// standard error, naming the file and offset or seq).
#include <cstdio>
#include <string>

#include "format/normalize.h"

int main(int argc, char** argv) {
  if (argc != 3 || argv[1][0] == '-') {
    const bool help =
        argc == 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h");
    std::fprintf(help ? stdout : stderr,
                 "usage: cltrace-normalize IN.cltrace OUT.cltrace\n"
                 "Rewrites IN with addresses, thread ids, timestamps, pid and paths derived from\n"
                 "the call sequence (format/normalize.h), so that recordings of one deterministic\n"
                 "run are byte-identical.\n");
    return help ? 0 : 2;
  }
  absl::Status s = cltrace::format::NormalizeTraceFile(argv[1], argv[2]);
  if (!s.ok()) {
    std::fprintf(stderr, "cltrace-normalize: %s\n", std::string(s.message()).c_str());
    return 2;
  }
  return 0;
}
