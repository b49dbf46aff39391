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
#include <mutex>
#include <optional>
#include <queue>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "check/check_trace.h"
#include "cli/args.h"
#include "cli/check_output.h"
#include "cli/verb.h"
#include "format/seq_stream.h"
#include "recorder/recorder.h"

extern char** environ;

namespace cltrace::cli {
namespace {

// The drainer's nice value (recorder::Options::drain_nice): it runs in the time the recorded
// program leaves. `long --threads 4` on 2 cores, 9M calls: 4.8 s wall at nice 0, 4.0 s at 10
// (unrecorded: 2.6 s).
constexpr int kDrainNice = 10;

constexpr char kUsage[] =
    "usage: cltrace record -o OUT.cltrace [--driver LIB] [--flush-ms N] [--check]\n"
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
    "  --check             judge the calls against the contract rules while the program runs:\n"
    "                      each violation is printed on standard error as it happens, in the\n"
    "                      line format of `cltrace check` (a call nested in one still running\n"
    "                      is judged when that one returns); a last line counts the findings\n"
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
    "recorded, except that with --check a program that exited 0 gives 1 if violations were\n"
    "found; 2 on bad usage, if the program could not be started, if OUT could not be\n"
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

// --check: the contract checker fed from the service's stream of drained calls. The drainer
// hands over one thread's events at a time; an event goes to the checker once every position
// below its seq is accounted for (the seq or end of an event received), so the checker sees
// the calls in seq order, as `cltrace check` does. A call nested in one still running waits
// for that call's record. Each new violation is printed at once, in check's line format;
// Finish takes the rest (holes of a killed program included) once the trace is closed.
class LiveCheck : public recorder::EventObserver {
 public:
  LiveCheck(const std::string& trace_path, std::ostream& err) : path_(trace_path), err_(err) {
    options_.strings = &strings_;  // R5: the recorder's table-rewrite notes
    // Look-ahead (GuessDc, for contexts a trace never created) and the findings' exit
    // positions across holes read the trace back, which is only possible once it is closed.
    check::TraceReplay replay =
        [this](const std::function<void(const format::Event&)>& visit) -> absl::Status {
      if (!closed_) return absl::FailedPreconditionError("the trace is still being written");
      format::SeqStreamOptions o;
      o.gaps = false;
      absl::StatusOr<std::unique_ptr<format::SeqStream>> in = format::SeqStream::Open(path_, o);
      if (!in.ok()) return in.status();
      format::Event e;
      while ((*in)->Next(&e)) visit(e);
      return (*in)->status();
    };
    checker_ = std::make_unique<check::StreamCheck>(options_, handles_, replay,
                                                    /*may_have_holes=*/true);
  }

  void OnHandle(uint64_t id, uint64_t raw_value) override {
    if (handles_.InternValue(raw_value) != id && error_.ok())
      error_ = absl::InternalError(absl::StrCat("handle id ", id, " out of step"));
  }
  void OnString(uint64_t id, absl::string_view text) override {
    if (id == strings_.size()) strings_.Intern(text);
  }
  void OnEvents(absl::Span<const format::Event> events) override {
    for (const format::Event& e : events) {
      Account(e.seq);
      if (e.end != 0) Account(e.end);
      highest_ = std::max({highest_, e.seq, e.end});
      pending_.push(e);
    }
    Release(/*all=*/false);
  }

  // After the service stopped and the trace is closed: judges what is left, prints the
  // violations not printed yet and returns the result (as `cltrace check` on the trace).
  check::CheckResult Finish() {
    closed_ = true;
    // Not printed yet: a call after a hole (a killed program's calls in flight) may be about a
    // handle whose history crosses it, which the verdict withholds. Calls judged live had
    // every position below them, so nothing printed live is withheld.
    Release(/*all=*/true);
    // The positions never accounted for are the trace's holes (FORMAT.md §5.5).
    format::PositionGaps gaps;
    gaps.highest = highest_;
    for (uint64_t p = next_; p <= highest_; ++p) {
      if (accounted_.contains(p)) continue;
      ++gaps.missing;
      if (gaps.first_missing == 0) gaps.first_missing = p;
      if (!gaps.holes.empty() && gaps.holes.back().second + 1 == p) {
        gaps.holes.back().second = p;
      } else {
        gaps.holes.emplace_back(p, p);
      }
    }
    check::CheckResult result = checker_->Finish(gaps);
    // Those printed live are not printed again (a finding withheld across a hole was).
    for (const check::Violation& v : result.violations) {
      auto it = printed_.find(Key(v));
      if (it != printed_.end() && it->second > 0) {
        --it->second;
      } else {
        Print(v);
      }
    }
    return result;
  }
  const absl::Status& error() const { return error_; }
  uint64_t printed() const { return lines_; }

 private:
  struct Later {
    bool operator()(const format::Event& a, const format::Event& b) const { return a.seq > b.seq; }
  };

  void Account(uint64_t position) {
    if (position != next_) {
      accounted_.insert(position);
      return;
    }
    ++next_;
    while (accounted_.erase(next_) != 0) ++next_;
  }

  // Hands the checker every pending event whose predecessors are all in (or all of them).
  void Release(bool all) {
    while (!pending_.empty() && (all || pending_.top().seq < next_)) {
      if (error_.ok()) error_ = checker_->Add(pending_.top());
      pending_.pop();
    }
    if (all) return;
    const check::CheckResult& so_far = checker_->findings();
    for (; seen_ < so_far.violations.size(); ++seen_) Print(so_far.violations[seen_]);
  }

  using FindingKey = std::tuple<uint64_t, std::string, uint64_t, std::string>;
  static FindingKey Key(const check::Violation& v) {
    return {v.seq, std::string(v.id()), v.handle, v.message};
  }

  void Print(const check::Violation& v) {
    if (!closed_) ++printed_[Key(v)];
    ++lines_;
    // One write per line: the program's own output interleaves with whole lines only.
    err_ << check::FormatViolation(v, handles_) + "\n" << std::flush;
  }

  const std::string path_;
  std::ostream& err_;
  format::TokenTable handles_, strings_;
  check::CheckOptions options_;
  std::unique_ptr<check::StreamCheck> checker_;
  bool closed_ = false;
  absl::Status error_;
  // Positions: every one below next_ is accounted for; accounted_ holds those above it.
  uint64_t next_ = 1;
  uint64_t highest_ = 0;
  absl::flat_hash_set<uint64_t> accounted_;
  std::priority_queue<format::Event, std::vector<format::Event>, Later> pending_;
  size_t seen_ = 0;
  std::map<FindingKey, uint64_t> printed_;  // printed while the program ran
  uint64_t lines_ = 0;
};

// Attach mode: the service of a program that loaded the shim without `cltrace record`.
int RunAttached(const ParsedArgs& parsed, const std::string& output, std::ostream& err) {
  recorder::Options o;
  o.region = *parsed.Option("--attach");
  o.drain_nice = kDrainNice;
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
                     .Flags({"--check"})
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
  std::unique_ptr<LiveCheck> live;
  if (parsed.Flag("--check")) live = std::make_unique<LiveCheck>(Absolute(*output), err);
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
    o.observer = live.get();
    o.drain_nice = kDrainNice;
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
  if (live == nullptr) return ReportRecording(stats, status, program[0], *output, err);
  // --check: the rest of the verdict, now that the trace is closed.
  const check::CheckResult result = live->Finish();
  const int code = ReportRecording(stats, status, program[0], *output, err);
  if (stats.count("calls") == 0) return code;  // nothing recorded, nothing judged
  if (!live->error().ok()) {
    err << "cltrace record: --check could not judge the recording: " << live->error().message()
        << " (run cltrace check " << *output << ")\n";
    return code == kExitOk ? kExitBadInput : code;
  }
  err << "cltrace record: check: " << result.calls << " calls, " << result.violations.size()
      << " violations, " << result.warnings.size() << " warnings";
  if (result.dropped_findings) err << " (" << result.dropped_findings << " more not listed)";
  if (!result.warnings.empty()) err << " (cltrace check " << *output << " lists the warnings)";
  err << "\n";
  const bool found = !result.violations.empty() || result.dropped_findings != 0;
  return code == kExitOk && found ? kExitProblems : code;
}

const VerbRegistrar kRecord(
    {"record", "run a program with the recorder shim, write its trace (--check: judge it live)",
     kUsage, RunRecord});

}  // namespace
}  // namespace cltrace::cli
