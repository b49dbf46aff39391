// cltrace record -o OUT.cltrace [--driver LIB] -- PROGRAM [ARGS...]: runs a program with the
// recorder shim (build/lib/libcltrace_shim.so) between its runtime and its driver.
//
// record is the recording service: it creates the recording region (recorder/README.md), hands
// it to the program ($CLTRACE_REGION: an inherited memfd), and drains it while the program
// runs and after it ended, however it ended: the shim only writes records into the region.
//
// The runtime model loads its driver from $CLTRACE_DRIVER; record points that at the shim and
// hands the real driver to the shim through $CLTRACE_SHIM_DRIVER (recorder/README.md lists the
// shim's variables). The program's exit status is propagated (128 + N for a program killed by
// signal N); the recorder's statistics go to standard error.
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "cli/args.h"
#include "cli/verb.h"
#include "recorder/recorder.h"

extern char** environ;

namespace cltrace::cli {
namespace {

constexpr char kUsage[] =
    "usage: cltrace record -o OUT.cltrace [--driver LIB] [--flush-ms N]\n"
    "                      [--timestamps derived|clock] -- PROGRAM [ARGS...]\n"
    "\n"
    "Runs PROGRAM with the recorder shim in place of its user-mode driver (the runtime model\n"
    "loads its driver from $CLTRACE_DRIVER) and writes every DDI call and callback to OUT.\n"
    "\n"
    "  -o, --output FILE   the trace to write\n"
    "  --driver LIB        the real driver (default: $CLTRACE_DRIVER if set, else the\n"
    "                      reference driver next to the shim)\n"
    "  --flush-ms N        write buffered calls at least every N ms (default 1000; 0: only when\n"
    "                      chunks fill, at exit and on fatal signals)\n"
    "  --timestamps MODE   derived (default; no clock read per call) or clock\n"
    "\n"
    "Recorder statistics (calls, bytes, producer waits, write failures, calls lost) are printed\n"
    "on standard error when the program ends. record drains the program's recording region\n"
    "itself, so a program killed in any way (SIGKILL included) leaves every call it completed\n"
    "in the trace; calls it was inside are counted as lost (the trace's holes). A trace that\n"
    "cannot be written never stops the program: if\n"
    "OUT cannot be created (no such directory, no permission, no space for its header) the\n"
    "program runs unrecorded and record then fails; a write failing later leaves the trace\n"
    "written up to it and is reported with the calls not written.\n"
    "\n"
    "Attach mode (started by the shim when a program loads it without record):\n"
    "  cltrace record --attach fd:N --watch-fd M --pid P -o OUT [--driver LIB] [--flush-ms N]\n"
    "        [--timestamps MODE] [--stats FILE] [--zstd-level L]\n"
    "drains the region inherited as fd N until fd M reports the end of process P, writes OUT,\n"
    "and the statistics as `key value` lines to FILE; exit 0, or 2 if OUT could not be written.\n"
    "\n"
    "exit: the program's exit status (128+N if it was killed by signal N) when a trace was\n"
    "recorded; 2 on bad usage, if the program could not be started, if OUT could not be\n"
    "created or the driver could not be loaded, or if the program never loaded a driver\n"
    "through $CLTRACE_DRIVER (nothing to record: not a program of the runtime); the message\n"
    "then gives the program's own exit status\n";

std::string Absolute(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof(cwd)) == nullptr) return path;
  return absl::StrCat(cwd, "/", path);
}

// The service's statistics as `key value` pairs (empty: the program never opened a driver).
std::map<std::string, std::string> StatsMap(const recorder::Stats& st) {
  std::map<std::string, std::string> m;
  if (!st.driver_opened) return m;
  if (!st.driver_error.empty()) {
    m["driver_error"] = st.driver_error;
    return m;
  }
  if (!st.output_error.empty()) {
    m["output_error"] = st.output_error;
    return m;
  }
  auto num = [&](const char* k, uint64_t v) { m[k] = absl::StrCat(v); };
  num("calls", st.calls + st.calls_in_flight);
  num("events", st.events_written);
  num("bytes", st.bytes_written);
  num("waits", st.producer_waits);
  num("wait_ns", st.producer_wait_ns);
  num("write_failures", st.write_failures);
  num("discarded", st.events_discarded);
  num("in_flight", st.calls_in_flight);
  num("lost", st.calls_lost);
  num("threads", st.threads);
  num("adapters", st.adapters_opened);
  num("background_cpu_ns", st.background_cpu_ns);
  num("contents", st.contents);
  num("content_bytes", st.content_bytes);
  num("contents_skipped", st.contents_skipped);
  if (!st.first_content_skip.empty()) m["content_skip"] = st.first_content_skip;
  if (!st.first_error.empty()) m["error"] = st.first_error;
  return m;
}

uint64_t Number(const std::map<std::string, std::string>& stats, const std::string& key) {
  uint64_t v = 0;
  auto it = stats.find(key);
  if (it != stats.end() && absl::SimpleAtoi(it->second, &v)) return v;
  return 0;
}

void PrintStats(const std::map<std::string, std::string>& stats, const std::string& output,
                std::ostream& err) {
  const uint64_t calls = Number(stats, "calls");
  const uint64_t events = Number(stats, "events");
  const uint64_t bytes = Number(stats, "bytes");
  const uint64_t adapters = Number(stats, "adapters");
  err << absl::StrFormat(
      "cltrace record: %d calls recorded (+%d OpenAdapter10_2, not a catalog call), %d written "
      "to %s: %d bytes (%.2f bytes/call), %d threads\n",
      calls, adapters, events, output, bytes, events ? static_cast<double>(bytes) / events : 0.0,
      Number(stats, "threads"));
  err << absl::StrFormat(
      "cltrace record: producer waits %d (%.3f ms), write failures %d, calls not written %d, "
      "calls in flight at the end %d, calls lost: %d, service %.1f ms CPU\n",
      Number(stats, "waits"), Number(stats, "wait_ns") / 1e6, Number(stats, "write_failures"),
      Number(stats, "discarded"), Number(stats, "in_flight"), Number(stats, "lost"),
      Number(stats, "background_cpu_ns") / 1e6);
  err << absl::StrFormat("cltrace record: content captured for %d calls (%d bytes)",
                         Number(stats, "contents"), Number(stats, "content_bytes"));
  if (const uint64_t skipped = Number(stats, "contents_skipped"); skipped != 0) {
    auto why = stats.find("content_skip");
    err << absl::StrFormat(", not for %d (first: %s)", skipped,
                           why != stats.end() ? why->second : std::string("?"));
  }
  err << "\n";
  if (auto it = stats.find("error"); it != stats.end()) {
    err << "cltrace record: " << it->second << "\n";
  }
}

// The program's environment: ours without the driver and shim variables, then the shim as its
// driver, told where the real driver, the trace and the statistics go.
std::vector<std::string> ShimEnvironment(const std::string& shim, const std::string& driver,
                                         const std::string& region,
                                         const std::optional<std::string>& timestamps) {
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    absl::string_view kv(*e);
    if (absl::StartsWith(kv, "CLTRACE_DRIVER=") || absl::StartsWith(kv, "CLTRACE_SHIM_") ||
        absl::StartsWith(kv, "CLTRACE_REGION=")) {
      continue;
    }
    env_strings.emplace_back(kv);
  }
  env_strings.push_back(absl::StrCat("CLTRACE_DRIVER=", Absolute(shim)));
  if (!driver.empty())
    env_strings.push_back(absl::StrCat("CLTRACE_SHIM_DRIVER=", Absolute(driver)));
  env_strings.push_back(absl::StrCat("CLTRACE_REGION=", region));
  if (timestamps.has_value()) {
    env_strings.push_back(absl::StrCat("CLTRACE_SHIM_TIMESTAMPS=", *timestamps));
  }
  return env_strings;
}

// Runs the program with `env_strings`, calls `started(pid)` once it runs, and waits for it
// (*status). Returns the exit code when it could not be started (reported), nothing when it
// ran.
std::optional<int> RunProgram(std::vector<std::string>& program,
                              std::vector<std::string>& env_strings,
                              const std::function<void(pid_t)>& started, int* status,
                              std::ostream& err) {
  std::vector<char*> envp, argv;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  for (std::string& s : program) argv.push_back(s.data());
  argv.push_back(nullptr);

  // A pipe closed on a successful exec tells a failed exec apart from the program's own exit.
  int exec_pipe[2];
  if (pipe2(exec_pipe, O_CLOEXEC) != 0) {
    err << "cltrace record: pipe: " << std::strerror(errno) << "\n";
    return kExitBadInput;
  }
  const pid_t pid = fork();
  if (pid < 0) {
    err << "cltrace record: fork: " << std::strerror(errno) << "\n";
    return kExitBadInput;
  }
  if (pid == 0) {
    close(exec_pipe[0]);
    execvpe(argv[0], argv.data(), envp.data());
    const int e = errno;
    (void)!write(exec_pipe[1], &e, sizeof(e));
    _exit(127);
  }
  close(exec_pipe[1]);
  int exec_errno = 0;
  const bool exec_failed =
      read(exec_pipe[0], &exec_errno, sizeof(exec_errno)) == sizeof(exec_errno);
  close(exec_pipe[0]);
  if (!exec_failed) started(pid);
  // Like a shell: the program handles Ctrl-C; we wait for it.
  struct sigaction ignore {
  }, old_int{}, old_quit{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGQUIT, &ignore, &old_quit);
  while (waitpid(pid, status, 0) < 0 && errno == EINTR) {
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);
  if (exec_failed) {
    err << "cltrace record: cannot run " << program[0] << ": " << std::strerror(exec_errno) << "\n";
    return kExitBadInput;
  }
  return std::nullopt;
}

// What the shim's statistics and the program's wait status make of the recording: the report
// on `err` and record's exit code.
int ReportRecording(const std::map<std::string, std::string>& stats, int status,
                    const std::string& program, const std::string& output, std::ostream& err) {
  const std::string status_text =
      WIFEXITED(status)     ? absl::StrCat("exit status ", WEXITSTATUS(status))
      : WIFSIGNALED(status) ? absl::StrCat("killed by signal ", WTERMSIG(status), " (",
                                           strsignal(WTERMSIG(status)), ")")
                            : std::string("stopped");
  if (stats.empty()) {
    // The shim writes its statistics file as soon as the program loads it.
    err << "cltrace record: " << program
        << " never loaded a driver through $CLTRACE_DRIVER: no trace was recorded and " << output
        << " was not written (the program ended with " << status_text << ")\n";
    return kExitBadInput;
  }
  if (auto it = stats.find("output_error"); it != stats.end()) {
    err << "cltrace record: the trace could not be created: " << it->second << "; " << program
        << " ran without recording (it ended with " << status_text << ")\n";
    return kExitBadInput;
  }
  if (auto it = stats.find("driver_error"); it != stats.end()) {
    err << "cltrace record: the driver could not be loaded: " << it->second
        << "; no trace was recorded (" << program << " ended with " << status_text << ")\n";
    return kExitBadInput;
  }
  if (stats.count("calls") != 0) {
    PrintStats(stats, output, err);
  } else if (auto it = stats.find("error"); it != stats.end()) {
    err << "cltrace record: " << it->second << "\n";
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) {
    err << "cltrace record: " << program << " was " << status_text
        << "; the trace holds every call it completed before it\n";
    return 128 + WTERMSIG(status);
  }
  return kExitBadInput;
}

// Attach mode: the service of a program that loaded the shim without `cltrace record`.
int RunAttached(const ParsedArgs& parsed, const std::string& output, std::ostream& err) {
  recorder::Options o;
  o.region = *parsed.Option("--attach");
  uint64_t pid = 0, watch_fd = 0;
  if (!absl::SimpleAtoi(parsed.Option("--pid").value_or(""), &pid) ||
      !absl::SimpleAtoi(parsed.Option("--watch-fd").value_or(""), &watch_fd)) {
    err << "cltrace record: --attach needs --pid and --watch-fd\n";
    return kExitBadInput;
  }
  o.pid = static_cast<uint32_t>(pid);
  o.output_path = Absolute(output);
  o.driver_path = parsed.Option("--driver").value_or("");
  if (auto v = parsed.Option("--flush-ms")) (void)absl::SimpleAtoi(*v, &o.flush_period_ms);
  if (auto v = parsed.Option("--zstd-level")) (void)absl::SimpleAtoi(*v, &o.zstd_level);
  o.timestamps = parsed.Option("--timestamps").value_or("derived") == "clock"
                     ? recorder::TimestampMode::kClock
                     : recorder::TimestampMode::kDerived;
  if (std::ifstream cmdline(absl::StrCat("/proc/", pid, "/cmdline")); cmdline) {
    std::string arg;
    while (std::getline(cmdline, arg, '\0')) o.argv.push_back(arg);
  }
  absl::StatusOr<std::unique_ptr<recorder::Recorder>> service =
      recorder::Recorder::Start(std::move(o));
  if (!service.ok()) {
    err << "cltrace record: the recording service could not start: " << service.status() << "\n";
    return kExitBadInput;
  }
  // The program holds the other end: end of file (or an error) once it ended, however.
  char buf[64];
  while (true) {
    const ssize_t n = read(static_cast<int>(watch_fd), buf, sizeof(buf));
    if (n == 0 || (n < 0 && errno != EINTR)) break;
  }
  const recorder::Stats st = (*service)->Stop();
  const std::map<std::string, std::string> stats = StatsMap(st);
  if (auto path = parsed.Option("--stats")) {
    std::ofstream f(*path);
    for (const auto& [k, v] : stats) f << k << " " << v << "\n";
  }
  if (!st.output_error.empty()) {
    err << "cltrace shim: not recording: " << st.output_error << "\n";
    return kExitBadInput;
  }
  if (!st.first_error.empty()) {
    err << "cltrace shim: trace incomplete: " << st.first_error << " (" << st.calls_lost
        << " calls lost)\n";
  }
  return 0;
}

int RunRecord(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  // Everything after `--` is the program and its arguments, untouched.
  std::vector<std::string> ours, program;
  bool after = false;
  for (const std::string& a : args) {
    if (!after && a == "--") {
      after = true;
    } else {
      (after ? program : ours).push_back(a);
    }
  }
  ArgSpec spec = ArgSpec("record", kUsage)
                     .Options({"--output", "--driver", "--flush-ms", "--timestamps", "--attach",
                               "--watch-fd", "--pid", "--stats", "--zstd-level"})
                     .Alias("-o", "--output")
                     .Positional(0, 0);
  ParsedArgs parsed;
  if (std::optional<int> done = ParseVerbArgs(ours, spec, &parsed, out, err)) return *done;
  auto usage_error = [&](const std::string& msg) {
    err << "cltrace record: " << msg << "\n"
        << std::string(kUsage, std::strchr(kUsage, '\n')) << "\n";
    return kExitBadInput;
  };
  std::optional<std::string> output = parsed.Option("--output");
  if (!output.has_value() || output->empty()) return usage_error("-o OUT.cltrace is required");
  if (parsed.Option("--attach").has_value()) return RunAttached(parsed, *output, err);
  if (program.empty()) return usage_error("no program given after '--'");
  std::optional<std::string> flush_ms = parsed.Option("--flush-ms");
  if (flush_ms.has_value()) {
    absl::StatusOr<uint64_t> n = ParseCount("--flush-ms", *flush_ms);
    if (!n.ok()) return usage_error(std::string(n.status().message()));
  }
  std::optional<std::string> timestamps = parsed.Option("--timestamps");
  if (timestamps.has_value() && *timestamps != "derived" && *timestamps != "clock") {
    return usage_error("--timestamps must be 'derived' or 'clock'");
  }

  // $CLTRACE_SHIM overrides the shim beside this tool.
  const std::string shim = FindBesideTool("CLTRACE_SHIM", "libcltrace_shim.so");
  if (shim.empty()) {
    err << "cltrace record: libcltrace_shim.so not found next to this tool (set CLTRACE_SHIM)\n";
    return kExitBadInput;
  }
  std::string driver = parsed.Option("--driver").value_or("");
  if (driver.empty()) {
    const char* env = getenv("CLTRACE_DRIVER");
    if (env != nullptr && env[0] != '\0' && Absolute(env) != Absolute(shim)) driver = env;
  }

  // The region the program's threads record into; this process drains it.
  int64_t buffer_kb = 1024;
  if (const char* kb = getenv("CLTRACE_SHIM_BUFFER_KB"); kb != nullptr) {
    if (!absl::SimpleAtoi(kb, &buffer_kb) || buffer_kb < 8) buffer_kb = 1024;
  }
  absl::StatusOr<std::string> region =
      recorder::CreateRecordingRegion(/*max_threads=*/256, static_cast<size_t>(buffer_kb) * 1024);
  if (!region.ok()) {
    err << "cltrace record: cannot create the recording region: " << region.status().message()
        << "\n";
    return kExitBadInput;
  }

  std::vector<std::string> env_strings = ShimEnvironment(shim, driver, *region, timestamps);
  out.flush();
  err.flush();
  int status = 0;
  std::unique_ptr<recorder::Recorder> service;
  std::string service_error;
  auto start_service = [&](pid_t pid) {
    recorder::Options o;
    o.region = *region;
    o.pid = static_cast<uint32_t>(pid);
    o.output_path = Absolute(*output);
    if (flush_ms.has_value()) (void)absl::SimpleAtoi(*flush_ms, &o.flush_period_ms);
    o.timestamps = timestamps.value_or("derived") == "clock" ? recorder::TimestampMode::kClock
                                                             : recorder::TimestampMode::kDerived;
    o.driver_path = driver.empty()
                        ? Absolute(shim.substr(0, shim.rfind('/') + 1) + "libcltrace_refdriver.so")
                        : Absolute(driver);
    o.argv = program;
    absl::StatusOr<std::unique_ptr<recorder::Recorder>> r = recorder::Recorder::Start(std::move(o));
    if (r.ok()) {
      service = std::move(*r);
    } else {
      service_error = r.status().ToString();
    }
  };
  std::optional<int> failed = RunProgram(program, env_strings, start_service, &status, err);
  if (failed.has_value()) return *failed;
  if (service == nullptr) {
    err << "cltrace record: the recording service could not start: " << service_error << "\n";
    return kExitBadInput;
  }
  // The program is gone: drain what it committed, count what it was inside, close the trace.
  const std::map<std::string, std::string> stats = StatsMap(service->Stop());
  return ReportRecording(stats, status, program[0], *output, err);
}

const VerbRegistrar kRecord({"record", "run a program with the recorder shim and write its trace",
                             kUsage, RunRecord});

}  // namespace
}  // namespace cltrace::cli
