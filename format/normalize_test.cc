// format/normalize.h: two recordings that differ only in addresses, thread ids, timestamps,
// pid and paths normalise to the same bytes; what the call sequence determines is kept.
#include "format/normalize.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ddi/catalog.h"
#include "format/trace_writer.h"
#include "gtest/gtest.h"

namespace cltrace::format {
namespace {

// One run's varying parts.
struct Run {
  uint64_t base;  // where the "heap" is
  uint32_t tid_a, tid_b;
  uint32_t pid;
  int64_t time;  // clock offset
  std::string dir;
};

// A small recording: a device, a flush on two threads, a CalcDeferredContextHandleSize whose
// pICObject names a resource handle, a kernel handle that fits 32 bits, an annotation that
// prints an address, a content blob.
std::string Record(const Run& r, bool position_runs) {
  TraceWriter::Options o;
  o.background = false;
  o.position_runs = position_runs;
  o.start_unix_ns = 1700000000000000000 + r.time;
  o.writer.set_name("cltrace-recorder");
  o.process.set_pid(r.pid);
  o.process.set_executable(r.dir + "/cltrace-workload");
  o.process.add_argv(r.dir + "/cltrace-workload");
  o.process.add_argv("smallcl");
  o.process.set_driver(r.dir + "/libcltrace_refdriver.so");
  std::string bytes;
  auto w = TraceWriter::Open(std::make_unique<StringSink>(&bytes), o);
  EXPECT_TRUE(w.ok()) << w.status();
  const uint64_t device = (*w)->InternHandleValue(r.base + 0x100);
  const uint64_t resource = (*w)->InternHandleValue(r.base + 0x880);
  const uint64_t kernel = (*w)->InternHandleValue(0x40000001);
  const CallInfo* calc = FindCall("CalcDeferredContextHandleSize");
  const CallInfo* flush = FindCall("Flush");
  EXPECT_NE(calc, nullptr);
  EXPECT_NE(flush, nullptr);
  auto make = [&](const CallInfo* ci, uint64_t seq, uint32_t tid) {
    Event e;
    e.call = IdOf(*ci);
    e.seq = seq;
    e.end = seq + 1;
    e.tid = tid;
    e.timestamp_ns = r.time + static_cast<int64_t>(seq) * 37;
    e.args.assign(Fields(*ci).size(), 0);
    e.args[0] = device;
    return e;
  };
  std::vector<Event> events;
  Event e = make(flush, 1, r.tid_a);
  e.annotation = (*w)->InternString(
      absl::StrCat("note: table at 0x", absl::Hex(r.base + 0x40), " and 0x10 kept"));
  events.push_back(e);
  e = make(calc, 3, r.tid_b);
  e.args[FieldIndex(*calc, "pICObject")] = r.base + 0x880;
  events.push_back(e);
  e = make(flush, 5, r.tid_a);
  e.args[0] = resource;
  e.content = (*w)->InternContent("bytes");
  events.push_back(e);
  e = make(flush, 7, r.tid_b);
  e.args[0] = kernel;
  events.push_back(e);
  // File order is not seq order in a multi-threaded recording.
  std::reverse(events.begin(), events.end());
  for (const Event& ev : events) EXPECT_TRUE((*w)->Append(ev).ok());
  EXPECT_TRUE((*w)->Close().ok());
  return bytes;
}

std::string TempPath(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/normalize_", getpid(), "_", name);
}

void WriteFile(const std::string& path, const std::string& bytes) {
  FILE* f = fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  fwrite(bytes.data(), 1, bytes.size(), f);
  fclose(f);
}

// Normalises `bytes` through the file API; returns the output bytes.
std::string NormalizeBytes(const std::string& bytes, const std::string& name) {
  const std::string in = TempPath(name + ".in"), out = TempPath(name + ".out");
  WriteFile(in, bytes);
  absl::Status s = NormalizeTraceFile(in, out);
  EXPECT_TRUE(s.ok()) << s;
  std::string result;
  if (FILE* f = fopen(out.c_str(), "rb")) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0) result.append(buf, n);
    fclose(f);
  }
  unlink(in.c_str());
  unlink(out.c_str());
  return result;
}

const Run kRunA{0x55d0c3a01000, 14709, 14711, 14709, 123456, "/work/a/build/bin"};
const Run kRunB{0x5612fe000000, 901, 77, 4242, 999, "/home/u/b/bin"};

TEST(NormalizeTest, RecordingsDifferingOnlyInLayoutAndTimesBecomeTheSameBytes) {
  for (bool v2 : {false, true}) {
    SCOPED_TRACE(v2 ? "version 2" : "version 1");
    const std::string a = Record(kRunA, v2), b = Record(kRunB, v2);
    ASSERT_NE(a, b);
    EXPECT_EQ(NormalizeBytes(a, "a"), NormalizeBytes(b, "b"));
  }
}

TEST(NormalizeTest, KeepsTheCallsAndRenumbersByFirstAppearance) {
  const std::string out = NormalizeBytes(Record(kRunA, true), "keep");
  const std::string path = TempPath("keep.cltrace");
  WriteFile(path, out);
  auto t = ReadAllSorted(path);
  unlink(path.c_str());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->header.format_version(), 2u);
  EXPECT_EQ(t->header.process().pid(), 0u);
  EXPECT_EQ(t->header.start_unix_ns(), 0);
  EXPECT_EQ(t->header.process().executable(), "cltrace-workload");
  ASSERT_EQ(t->header.process().argv_size(), 2);
  EXPECT_EQ(t->header.process().argv(0), "cltrace-workload");
  EXPECT_EQ(t->header.process().argv(1), "smallcl");
  EXPECT_EQ(t->header.process().driver(), "libcltrace_refdriver.so");
  EXPECT_EQ(t->header.writer().name(), "cltrace-recorder");

  ASSERT_EQ(t->events.size(), 4u);
  const CallInfo* calc = FindCall("CalcDeferredContextHandleSize");
  std::vector<uint64_t> seqs, tids;
  for (const Event& e : t->events) {
    seqs.push_back(e.seq);
    tids.push_back(e.tid);
    EXPECT_EQ(e.timestamp_ns, static_cast<int64_t>(e.seq) * t->header.timestamp_unit_ns());
  }
  EXPECT_EQ(seqs, (std::vector<uint64_t>{1, 3, 5, 7}));
  EXPECT_EQ(tids, (std::vector<uint64_t>{1, 2, 1, 2}));
  auto token = [&](const Event& e) { return std::string(t->handles.Token(e.args[0])); };
  // The annotation's address is the first one seen, then the device, then the pointer field.
  EXPECT_EQ(t->strings.Token(t->events[0].annotation),
            "note: table at 0x7e0000001000 and 0x10 kept");
  EXPECT_EQ(token(t->events[0]), "0x7e0000002000");
  EXPECT_EQ(t->events[1].args[FieldIndex(*calc, "pICObject")], 0x7e0000003000u);
  // The resource handle is the address pICObject named: the same number.
  EXPECT_EQ(token(t->events[2]), "0x7e0000003000");
  EXPECT_EQ(t->contents.Token(t->events[2].content), "bytes");
  // A 32-bit kernel handle is kept.
  EXPECT_EQ(token(t->events[3]), "0x40000001");
}

TEST(NormalizeTest, IsIdempotent) {
  const std::string once = NormalizeBytes(Record(kRunB, true), "once");
  EXPECT_EQ(NormalizeBytes(once, "twice"), once);
}

TEST(NormalizeTest, TornTraceIsRefused) {
  const std::string bytes = Record(kRunA, false);
  const std::string in = TempPath("torn.in"), out = TempPath("torn.out");
  // Cut inside the last chunk (before the index and footer).
  WriteFile(in, bytes.substr(0, bytes.size() / 2 + 40));
  absl::Status s = NormalizeTraceFile(in, out);
  unlink(in.c_str());
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(access(out.c_str(), F_OK), -1) << "no output for a refused input";
}

TEST(NormalizeTest, MissingInputIsAnError) {
  EXPECT_FALSE(NormalizeTraceFile("/nonexistent/in.cltrace", TempPath("never.out")).ok());
}

}  // namespace
}  // namespace cltrace::format
