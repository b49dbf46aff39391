// Trace format throughput on a realistic draw stream (format/FORMAT.md §7 has the numbers).
//
// The stream: 1,000,000 DrawIndexed calls from one thread, a scene of a few hundred meshes
// drawn every frame in a stable order, with per-mesh visibility flickering from frame culling;
// IndexCount / StartIndexLocation / BaseVertexLocation per mesh as laid out in shared index and
// vertex buffers; calls 100-300 ns apart with jitter and a frame gap between frames.
//
// BM_EncodeCompress: Append every call to a TraceWriter (synchronous mode: encoding, zstd and
// the chunk framing all on this one core) writing to memory; reports calls/s and bytes/call.
// BM_Decode: TraceReader over the compressed bytes; reports events/s.
// BM_JsonlImport: ParseJsonl over the stream's first 200,000 calls as canonical JSONL (what
// `cltrace import` does per line: RapidJSON, the field readers, position resolution); reports
// lines/s. BM_JsonlProtobufStructOnly: protobuf's JsonStringToMessage into a Struct on the
// same lines, which the import used before, parsing only: the baseline for the ratio.
// Everything runs on the calling thread, so rates are per CPU second (process CPU time), which
// stays meaningful on a shared machine; wall time is printed alongside.
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "benchmark/benchmark.h"
#include "format/jsonl.h"
#include "format/trace_reader.h"
#include "format/trace_writer.h"

namespace cltrace::format {
namespace {

constexpr int kCalls = 1000000;

struct DrawCall {
  uint32_t index_count;
  uint32_t start_index;
  int32_t base_vertex;
  int64_t timestamp_ns;
};

const std::vector<DrawCall>& Stream() {
  static const std::vector<DrawCall>* stream = [] {
    std::mt19937_64 rng(2024);
    struct Mesh {
      uint32_t index_count, start_index;
      int32_t base_vertex;
      bool visible;
    };
    const int kMeshes = 400;
    std::vector<Mesh> meshes;
    uint32_t index_cursor = 0;
    int32_t vertex_cursor = 0;
    std::lognormal_distribution<double> size(6.5, 1.4);  // median ~660 indices
    for (int i = 0; i < kMeshes; ++i) {
      uint32_t n = 3 * std::max<uint32_t>(4, static_cast<uint32_t>(size(rng)) / 3);
      // Every fifth mesh lives in its own buffers (offsets 0); the rest are packed.
      bool own = i % 5 == 0;
      meshes.push_back({n, own ? 0 : index_cursor, own ? 0 : vertex_cursor, rng() % 10 != 0});
      if (!own) {
        index_cursor += n;
        vertex_cursor += static_cast<int32_t>(n / 2 + rng() % 64);
      }
    }
    auto* out = new std::vector<DrawCall>();
    out->reserve(kCalls);
    int64_t ts = 0;
    while (out->size() < static_cast<size_t>(kCalls)) {
      for (Mesh& m : meshes) {
        if (rng() % 100 < 3) m.visible = !m.visible;  // culling changes a little each frame
        if (!m.visible) continue;
        ts += 100 + static_cast<int64_t>(rng() % 201);
        out->push_back({m.index_count, m.start_index, m.base_vertex, ts});
        if (out->size() == static_cast<size_t>(kCalls)) break;
      }
      ts += 6'000'000 + static_cast<int64_t>(rng() % 500'000);  // rest of the frame
    }
    return out;
  }();
  return *stream;
}

TraceWriter::Options BenchOptions(int level, size_t chunk_bytes, uint32_t unit_ns) {
  TraceWriter::Options o;
  o.background = false;  // one core does everything
  o.zstd_level = level;
  o.chunk_bytes = chunk_bytes;
  o.timestamp_unit_ns = unit_ns;
  o.start_unix_ns = 0;
  return o;
}

std::string Encode(const TraceWriter::Options& o) {
  const std::vector<DrawCall>& s = Stream();
  std::string bytes;
  bytes.reserve(8 << 20);
  auto w = TraceWriter::Open(std::make_unique<StringSink>(&bytes), o);
  if (!w.ok()) return "";
  Event e;
  e.call = CallId::kDrawIndexed;
  e.tid = 4242;
  e.args.resize(4);
  e.args[0] = (*w)->InternHandleValue(0x1d2f0a40);
  uint64_t seq = 1;
  for (const DrawCall& d : s) {
    e.seq = seq;
    e.end = seq + 1;
    seq += 2;
    e.timestamp_ns = d.timestamp_ns;
    e.args[1] = d.index_count;
    e.args[2] = d.start_index;
    e.args[3] = static_cast<uint64_t>(static_cast<int64_t>(d.base_vertex));
    (void)(*w)->Append(e);
  }
  (void)(*w)->Close();
  return bytes;
}

// Encodes the stream with `o` in every iteration (the stream is generated before the timing);
// counts calls/s and the bytes per call.
void EncodeLoop(benchmark::State& state, const TraceWriter::Options& o) {
  Stream();
  size_t bytes = 0;
  for (auto _ : state) {
    std::string out = Encode(o);
    bytes = out.size();
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["calls/s"] = benchmark::Counter(static_cast<double>(kCalls) * state.iterations(),
                                                 benchmark::Counter::kIsRate);
  state.counters["bytes/call"] = static_cast<double>(bytes) / kCalls;
}

// Args: zstd level, chunk KiB, timestamp unit (ns).
void BM_EncodeCompress(benchmark::State& state) {
  TraceWriter::Options o =
      BenchOptions(static_cast<int>(state.range(0)), static_cast<size_t>(state.range(1)) << 10,
                   static_cast<uint32_t>(state.range(2)));
  EncodeLoop(state, o);
}
BENCHMARK(BM_EncodeCompress)
    ->ArgNames({"level", "chunk_KiB", "unit_ns"})
    ->Args({3, 1024, 100})  // TraceWriter::Options defaults
    ->Args({1, 1024, 100})
    ->Args({1, 256, 100})
    ->Args({3, 1024, 1})
    ->Unit(benchmark::kMillisecond);

void BM_EncodeOnly(benchmark::State& state) {
  TraceWriter::Options o = BenchOptions(3, 1 << 20, 100);
  o.compress = false;
  EncodeLoop(state, o);
}
BENCHMARK(BM_EncodeOnly)->Unit(benchmark::kMillisecond);

// Args: zstd level, chunk KiB, timestamp unit (ns) of the trace decoded.
void BM_Decode(benchmark::State& state) {
  const std::string bytes = Encode(BenchOptions(static_cast<int>(state.range(0)),
                                                static_cast<size_t>(state.range(1)) << 10,
                                                static_cast<uint32_t>(state.range(2))));
  uint64_t n = 0;
  for (auto _ : state) {
    auto r = TraceReader::OpenBytes(bytes);
    if (!r.ok()) {
      state.SkipWithError("open failed");
      return;
    }
    Event e;
    n = 0;
    while ((*r)->Next(&e)) ++n;
    if (!(*r)->status().ok() || n != static_cast<uint64_t>(kCalls)) {
      state.SkipWithError("decode failed");
      return;
    }
    benchmark::DoNotOptimize(e);
  }
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(n) * state.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Decode)
    ->ArgNames({"level", "chunk_KiB", "unit_ns"})
    ->Args({3, 1024, 100})
    ->Args({1, 1024, 100})
    ->Unit(benchmark::kMillisecond);

constexpr int kJsonlLines = 200000;

// The first kJsonlLines calls of the stream as canonical JSONL (export's form).
const std::string& JsonlText() {
  static const std::string* text = [] {
    auto* out = new std::string();
    const std::string bytes = Encode(BenchOptions(3, 1 << 20, 100));  // OpenBytes keeps a view
    auto r = TraceReader::OpenBytes(bytes);
    if (!r.ok()) return out;
    Event e;
    for (int i = 0; i < kJsonlLines && (*r)->Next(&e); ++i) {
      out->append(EventToJsonl(e, (*r)->handles(), (*r)->strings()));
      out->push_back('\n');
    }
    return out;
  }();
  return *text;
}

void BM_JsonlImport(benchmark::State& state) {
  const std::string& text = JsonlText();
  for (auto _ : state) {
    absl::StatusOr<JsonlTrace> trace = ParseJsonl(text);
    if (!trace.ok() || trace->events.size() != static_cast<size_t>(kJsonlLines)) {
      state.SkipWithError("import failed");
      return;
    }
    benchmark::DoNotOptimize(trace->events.data());
  }
  state.counters["lines/s"] = benchmark::Counter(
      static_cast<double>(kJsonlLines) * state.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_JsonlImport)->Unit(benchmark::kMillisecond);

void BM_JsonlProtobufStructOnly(benchmark::State& state) {
  std::vector<absl::string_view> lines = absl::StrSplit(JsonlText(), '\n', absl::SkipEmpty());
  for (auto _ : state) {
    for (absl::string_view line : lines) {
      google::protobuf::Struct obj;
      auto st = google::protobuf::util::JsonStringToMessage(std::string(line), &obj);
      if (!st.ok()) {
        state.SkipWithError("protobuf parse failed");
        return;
      }
      benchmark::DoNotOptimize(obj);
    }
  }
  state.counters["lines/s"] = benchmark::Counter(
      static_cast<double>(lines.size()) * state.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_JsonlProtobufStructOnly)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace cltrace::format
