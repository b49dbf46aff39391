#include "corpus/apitrace/command.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "corpus/apitrace/dump_parser.h"
#include "corpus/apitrace/player.h"
#include "corpus/workloads/model_layers.h"

namespace cltrace::apitrace {
namespace {

constexpr char kUsage[] = "usage: cltrace-workload apitrace FILE [--strict] [--driver LIB]\n";

int Usage(const std::string& message) {
  std::fprintf(stderr, "cltrace-workload: %s\n%s", message.c_str(), kUsage);
  return 2;
}

// A binary apitrace capture: snappy ("at"), gzip, brotli/zlib framing, or any NUL byte in the
// first bytes (the text dump has none).
bool LooksBinary(const std::string& head, const std::string& path) {
  if (absl::EndsWith(path, ".trace")) return true;
  if (head.size() >= 2 && head[0] == 'a' && head[1] == 't') return true;
  for (char c : head) {
    if (c == '\0') return true;
  }
  return false;
}

std::string ShellQuote(const std::string& s) {
  return absl::StrCat("'", absl::StrReplaceAll(s, {{"'", "'\\''"}}), "'");
}

bool HaveApitrace() { return std::system("command -v apitrace >/dev/null 2>&1") == 0; }

}  // namespace

int RunApitraceCommand(const std::vector<std::string>& args) {
  std::string file;
  PlayOptions options;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--strict") {
      options.strict = true;
    } else if (a == "--driver") {
      if (i + 1 >= args.size()) return Usage("--driver needs a library path");
      options.runtime.driver_path = args[++i];
    } else if (a == "--help" || a == "-h") {
      std::printf("%s", kUsage);
      return 0;
    } else if (!a.empty() && a[0] == '-') {
      return Usage(absl::StrCat("unknown option ", a));
    } else if (file.empty()) {
      file = a;
    } else {
      return Usage("only one capture file");
    }
  }
  if (file.empty()) return Usage("apitrace needs a capture file");

  std::ifstream in(file, std::ios::binary);
  if (!in) return Usage(absl::StrCat("cannot read ", file));
  std::string head(64, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  in.close();
  const std::string dir = file.find('/') == std::string::npos
                              ? std::string(".")
                              : file.substr(0, file.rfind('/') == 0 ? 1 : file.rfind('/'));
  options.blob_dir = dir;
  std::string scratch;
  std::string dump_path = file;  // the text dump played, read line by line
  if (LooksBinary(head, file)) {
    if (!HaveApitrace()) {
      std::fprintf(stderr,
                   "cltrace-workload: %s is a binary apitrace capture; converting it needs the "
                   "`apitrace dump` tool: apt-get install apitrace (or pass the text of "
                   "`apitrace dump --blobs --thread-ids=yes FILE`)\n",
                   file.c_str());
      return 2;
    }
    char tmpl[] = "/tmp/cltrace_apitrace_XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return Usage("cannot create a scratch directory");
    scratch = tmpl;
    char cwd[4096];
    std::string abs = file;
    if (file[0] != '/' && getcwd(cwd, sizeof(cwd)) != nullptr) abs = absl::StrCat(cwd, "/", file);
    dump_path = absl::StrCat(scratch, "/dump.txt");
    const std::string command = absl::StrCat(
        "cd ", ShellQuote(scratch), " && apitrace dump --blobs --thread-ids=yes --color=never ",
        ShellQuote(abs), " >", ShellQuote(dump_path));
    const int status = std::system(command.c_str());
    std::ifstream d(dump_path, std::ios::binary);
    if (status != 0 || !d || d.peek() == std::ifstream::traits_type::eof()) {
      (void)!std::system(absl::StrCat("rm -rf ", ShellQuote(scratch)).c_str());
      std::fprintf(stderr, "cltrace-workload: `apitrace dump` could not read %s\n", file.c_str());
      return 2;
    }
    options.blob_dir = scratch;
  }

  absl::StatusOr<std::unique_ptr<DumpFileSource>> source = DumpFileSource::Open(dump_path);
  if (!source.ok()) {
    if (!scratch.empty()) (void)!std::system(absl::StrCat("rm -rf ", ShellQuote(scratch)).c_str());
    return Usage(std::string(source.status().message()));
  }
  // A malformed line is found before anything is played (the player's first pass reads the
  // whole dump): bad input, exit 2, as the status says.
  absl::StatusOr<PlayReport> report = Play(source->get(), options);
  if (!scratch.empty()) (void)!std::system(absl::StrCat("rm -rf ", ShellQuote(scratch)).c_str());
  if (!report.ok() && absl::StartsWith(report.status().message(), "line ") &&
      absl::StrContains(report.status().message(), ", column ")) {
    std::fprintf(stderr, "cltrace-workload: %s: %s\n", file.c_str(),
                 std::string(report.status().message()).c_str());
    return 2;
  }

  if (report.ok()) {
    std::printf("apitrace: played %llu of %llu calls on %d thread%s\n",
                static_cast<unsigned long long>(report->played),
                static_cast<unsigned long long>(report->calls), report->threads,
                report->threads == 1 ? "" : "s");
    for (const Skipped& s : report->skipped) {
      std::printf("not played: %s x %llu (first at line %lld): %s\n", s.name.c_str(),
                  static_cast<unsigned long long>(s.count), static_cast<long long>(s.first_line),
                  s.reason.c_str());
    }
    for (const Skipped& s : report->substitutes) {
      std::printf("substituted: %s x %llu (first at line %lld): %s\n", s.name.c_str(),
                  static_cast<unsigned long long>(s.count), static_cast<long long>(s.first_line),
                  s.reason.c_str());
    }
  } else {
    std::fprintf(stderr, "cltrace-workload: %s: %s\n", file.c_str(),
                 std::string(report.status().message()).c_str());
  }
  return workloads::PrintViolationsAndCalls(report.ok(), stdout);
}

}  // namespace cltrace::apitrace
