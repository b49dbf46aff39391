#include "inspector/model.h"

#include <algorithm>
#include <deque>
#include <iterator>
#include <thread>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "ddi/catalog.h"
#include "format/seq_stream.h"
#include "inspector/loader.h"

namespace cltrace::inspector {

using check::HandleRole;
using check::State;
using format::CallId;
using format::Event;

absl::string_view RowKindName(RowKind k) {
  // Indexed by the enumerator's value (declaration order).
  static constexpr absl::string_view kNames[] = {"command list", "deferred context",
                                                 "local handle"};
  const size_t i = static_cast<size_t>(k);
  return i < std::size(kNames) ? kNames[i] : "?";
}

namespace {

uint64_t TransitionKey(HandleRole role, State from, State to, CallId call, bool dc_table) {
  return (static_cast<uint64_t>(role) << 40) | (static_cast<uint64_t>(from) << 32) |
         (static_cast<uint64_t>(to) << 24) | (static_cast<uint64_t>(dc_table) << 16) |
         static_cast<uint64_t>(call);
}

}  // namespace

// Turns the checker's transitions into rows while the checker runs.
class ModelBuilder : public check::TransitionObserver {
 public:
  explicit ModelBuilder(TraceModel* m) : m_(m) {}

  void OnTransition(const check::TransitionEvent& t) override {
    if (t.role == HandleRole::kImmediateContext || t.role == HandleRole::kObject) return;
    CountTransition(t);
    std::vector<int>& by_lifetime = row_by_lifetime_[static_cast<int>(t.role)];
    if (t.lifetime >= by_lifetime.size())
      by_lifetime.resize(t.lifetime + 1 + by_lifetime.size() / 2, -1);
    int r = by_lifetime[t.lifetime];
    if (r < 0) {
      r = RowFor(t);
      by_lifetime[t.lifetime] = r;
      ++rows_[r].lifetimes;
    }
    Row& row = rows_[r];
    if (t.role == HandleRole::kCommandList && t.context != 0) row.context = t.context;
    if (!row.spans.empty()) {
      Span& last = row.spans.back();
      if (last.to == 0) last.to = t.seq;
      // Two state changes of one row at one call: the later one is what the call left.
      if (last.from >= t.seq) row.spans.pop_back();
    }
    Span s;
    s.from = t.seq;
    s.to = IsTerminal(t.to) ? t.seq + 1 : 0;
    s.state = t.to;
    s.dc_table = t.dc_table;
    s.cause = t.call;
    s.lifetime = t.lifetime;
    row.spans.push_back(s);
  }

  void OnDeviceCall(const Event& e, bool dc_table) override {
    if (dc_table) {
      m_->calls_->SetDcTable(e.seq);
      ++m_->dc_table_calls_;
    }
    if (e.call == CallId::kCommandListExecute)
      ++(dc_table ? m_->nested_executes_ : m_->ic_executes_);
  }

  // Closes open spans, orders rows and fills the model.
  void Finish(uint64_t end_seq) {
    for (Row& row : rows_) {
      if (!row.spans.empty() && row.spans.back().to == 0) row.spans.back().to = end_seq;
    }
    auto first = [](const Row& r) { return r.spans.empty() ? ~uint64_t{0} : r.spans.front().from; };
    std::vector<int> cls, dcs;
    absl::flat_hash_map<uint64_t, std::vector<int>> locals_of;
    for (int i = 0; i < static_cast<int>(rows_.size()); ++i) {
      switch (rows_[i].kind) {
        case RowKind::kCommandList:
          cls.push_back(i);
          break;
        case RowKind::kDeferredContext:
          dcs.push_back(i);
          break;
        case RowKind::kLocal:
          locals_of[rows_[i].context].push_back(i);
          break;
      }
    }
    // Locals on a DC the trace never showed being created still get a DC row to sit under.
    for (auto& [dc, list] : locals_of) {
      if (!dc_row_.contains(dc)) {
        Row row;
        row.kind = RowKind::kDeferredContext;
        row.handle = dc;
        dc_row_[dc] = static_cast<int>(rows_.size());
        dcs.push_back(static_cast<int>(rows_.size()));
        rows_.push_back(std::move(row));
      }
    }
    auto by_first = [&](int a, int b) {
      return std::make_tuple(first(rows_[a]), rows_[a].handle, a) <
             std::make_tuple(first(rows_[b]), rows_[b].handle, b);
    };
    std::sort(cls.begin(), cls.end(), by_first);
    std::sort(dcs.begin(), dcs.end(), by_first);
    std::vector<int> order = cls;
    for (int d : dcs) {
      order.push_back(d);
      auto it = locals_of.find(rows_[d].handle);
      if (it == locals_of.end()) continue;
      std::sort(it->second.begin(), it->second.end(), by_first);
      order.insert(order.end(), it->second.begin(), it->second.end());
    }
    m_->rows_.reserve(order.size());
    int current_dc = -1;
    for (int i : order) {
      Row& row = rows_[i];
      const int index = static_cast<int>(m_->rows_.size());
      switch (row.kind) {
        case RowKind::kCommandList:
          row.label = m_->Token(row.handle);
          break;
        case RowKind::kDeferredContext:
          row.label = m_->Token(row.handle);
          row.group = index;
          current_dc = index;
          break;
        case RowKind::kLocal:
          row.label = absl::StrCat(m_->Token(row.handle), " -> ", m_->Token(row.ic_handle));
          row.group = current_dc;
          break;
      }
      m_->span_count_ += row.spans.size();
      m_->rows_.push_back(std::move(row));
    }
    for (int i = 0; i < static_cast<int>(m_->rows_.size()); ++i) {
      const Row& row = m_->rows_[i];
      if (row.kind != RowKind::kLocal) m_->row_of_handle_.try_emplace(row.handle, i);
    }
    for (int i = 0; i < static_cast<int>(m_->rows_.size()); ++i)
      m_->row_of_handle_.try_emplace(m_->rows_[i].handle, i);
    FlagTransitions();
    m_->transitions_ = std::move(transitions_);
    std::sort(m_->transitions_.begin(), m_->transitions_.end(),
              [](const TransitionCount& a, const TransitionCount& b) {
                return std::tie(a.role, a.first_seq) < std::tie(b.role, b.first_seq);
              });
  }

 private:
  void CountTransition(const check::TransitionEvent& t) {
    // A one-entry cache in front of the hash map: a trace repeats the same few transitions,
    // and this runs for every one of them (millions).
    uint64_t key = TransitionKey(t.role, t.from, t.to, t.call, t.dc_table);
    const size_t slot = (key ^ (key >> 24) ^ (key >> 40)) & (kCacheSlots - 1);
    if (cache_key_[slot] == key) {
      ++transitions_[cache_index_[slot]].count;
      return;
    }
    auto [it, inserted] = transition_index_.try_emplace(key, transitions_.size());
    cache_key_[slot] = key;
    cache_index_[slot] = it->second;
    if (inserted) {
      TransitionCount c;
      c.role = t.role;
      c.from = t.from;
      c.to = t.to;
      c.call = t.call;
      c.dc_table = t.dc_table;
      c.first_seq = t.seq;
      transitions_.push_back(c);
    }
    ++transitions_[it->second].count;
  }

  int RowFor(const check::TransitionEvent& t) {
    std::pair<uint64_t, uint64_t> key;
    switch (t.role) {
      case HandleRole::kCommandList:
        key = {t.handle, ~uint64_t{0}};
        break;
      case HandleRole::kDeferredContext:
        key = {t.handle, ~uint64_t{1}};
        break;
      default:
        key = {t.handle, t.context};
        break;
    }
    auto [it, inserted] = row_index_.try_emplace(key, static_cast<int>(rows_.size()));
    if (!inserted) return it->second;
    Row row;
    row.handle = t.handle;
    switch (t.role) {
      case HandleRole::kCommandList:
        row.kind = RowKind::kCommandList;
        break;
      case HandleRole::kDeferredContext:
        row.kind = RowKind::kDeferredContext;
        dc_row_[t.handle] = it->second;
        break;
      default:
        row.kind = RowKind::kLocal;
        row.context = t.context;
        row.ic_handle = t.ic_handle;
        break;
    }
    rows_.push_back(std::move(row));
    return it->second;
  }

  // Marks the transitions a checker error was reported at (the call and handle of an error
  // are where the illegal step shows on the handle's row).
  void FlagTransitions() {
    absl::flat_hash_map<uint64_t, std::vector<int>> rows_of;
    for (const check::Violation& v : m_->violations_)
      if (v.severity == check::Severity::kError && v.handle != 0) rows_of[v.handle];
    if (rows_of.empty()) return;
    for (int r = 0; r < static_cast<int>(m_->rows_.size()); ++r) {
      auto it = rows_of.find(m_->rows_[r].handle);
      if (it != rows_of.end()) it->second.push_back(r);
    }
    for (const check::Violation& v : m_->violations_) {
      if (v.severity != check::Severity::kError || v.handle == 0) continue;
      for (int r : rows_of[v.handle]) {
        const Row& row = m_->rows_[r];
        int i = m_->SpanIndexAt(r, v.seq);
        if (i < 0 || row.spans[i].from != v.seq) continue;
        const Span& s = row.spans[i];
        State from = (i > 0 && row.spans[i - 1].lifetime == s.lifetime) ? row.spans[i - 1].state
                                                                        : State::kNone;
        HandleRole role = row.kind == RowKind::kCommandList       ? HandleRole::kCommandList
                          : row.kind == RowKind::kDeferredContext ? HandleRole::kDeferredContext
                                                                  : HandleRole::kLocal;
        auto t = transition_index_.find(TransitionKey(role, from, s.state, s.cause, s.dc_table));
        if (t != transition_index_.end()) transitions_[t->second].flagged = true;
      }
    }
  }

  TraceModel* m_;
  std::vector<Row> rows_;
  std::vector<int> row_by_lifetime_[5];
  absl::flat_hash_map<std::pair<uint64_t, uint64_t>, int> row_index_;
  absl::flat_hash_map<uint64_t, int> dc_row_;
  absl::flat_hash_map<uint64_t, size_t> transition_index_;
  static constexpr size_t kCacheSlots = 64;
  uint64_t cache_key_[kCacheSlots] = {};  // key 0 is never a transition (from == to == kNone)
  size_t cache_index_[kCacheSlots] = {};
  std::vector<TransitionCount> transitions_;
};

// One pass over the calls in seq order: the call index, the counts and the checker (whose
// transitions the builder turns into rows).
class ModelPass {
 public:
  ModelPass(TraceModel* m, const BuildOptions& options)
      : m_(m), builder_(m), checker_(options.check) {
    checker_.set_observer(&builder_);
    call_counts_.assign(format::Calls().size(), 0);
  }

  void Begin(const format::TokenTable& handles, check::TraceReplay replay) {
    checker_.Begin(handles, std::move(replay));
  }

  absl::Status Add(const Event& e, uint64_t chunk) {
    if (count_ == 0) m_->first_seq_ = e.seq;
    ++count_;
    // The index first: the checker's observer marks DC-table calls by their seq.
    m_->calls_->Add(e, chunk);
    const size_t c = static_cast<size_t>(e.call);
    if (c < call_counts_.size()) ++call_counts_[c];
    // Traces come in runs of one thread; skip the hash lookup inside a run.
    if (last_count_ == nullptr || e.tid != last_tid_) {
      last_tid_ = e.tid;
      last_count_ = &threads_[e.tid];
    }
    ++*last_count_;
    max_pos_ = std::max({max_pos_, e.seq, e.end});
    return checker_.Add(e);
  }

  void Finish() {
    check::CheckResult check = checker_.Finish();
    m_->calls_->Finish();
    m_->call_counts_ = std::move(call_counts_);
    m_->thread_counts_.assign(threads_.begin(), threads_.end());
    std::sort(m_->thread_counts_.begin(), m_->thread_counts_.end());
    m_->end_seq_ = max_pos_ + 1;
    m_->errors_ = check.violations.size();
    m_->dropped_findings_ = check.dropped_findings;
    m_->violations_ = std::move(check.violations);
    m_->violations_.insert(m_->violations_.end(), std::make_move_iterator(check.warnings.begin()),
                           std::make_move_iterator(check.warnings.end()));
    std::stable_sort(m_->violations_.begin(), m_->violations_.end(),
                     [](const check::Violation& a, const check::Violation& b) {
                       return std::tie(a.seq, a.severity) < std::tie(b.seq, b.severity);
                     });
    builder_.Finish(m_->end_seq_);
  }

 private:
  TraceModel* m_;
  ModelBuilder builder_;
  check::Checker checker_;
  uint64_t count_ = 0;
  std::vector<uint64_t> call_counts_;
  absl::flat_hash_map<uint32_t, uint64_t> threads_;
  uint32_t last_tid_ = 0;
  uint64_t* last_count_ = nullptr;
  uint64_t max_pos_ = 0;
};

TraceModel::~TraceModel() = default;

absl::StatusOr<std::unique_ptr<TraceModel>> TraceModel::Build(TraceData data,
                                                              const BuildOptions& options,
                                                              const ProgressFn& progress) {
  std::unique_ptr<TraceModel> m(new TraceModel());
  std::vector<Event> events = std::move(data.events);
  data.events = std::vector<Event>();
  m->data_ = std::move(data);
  m->calls_ =
      std::make_unique<CallIndex>(events.size() > options.coarse_above, options.coarse_block_calls);
  {
    ModelPass pass(m.get(), options);
    pass.Begin(m->data_.handles,
               [&events](const std::function<void(const Event&)>& visit) -> absl::Status {
                 for (const Event& e : events) visit(e);
                 return absl::OkStatus();
               });
    for (size_t i = 0; i < events.size(); ++i) {
      if (absl::Status st = pass.Add(events[i], 0); !st.ok()) return st;
      if (progress && (i & 0xffff) == 0)
        progress(0.95f * static_cast<float>(i) / static_cast<float>(events.size()));
    }
    pass.Finish();
  }
  m->calls_->AttachEvents(std::move(events));
  if (progress) progress(1.0f);
  return m;
}

namespace {

// Open's second thread: it decodes the stream into batches of events that go over a short
// queue to the thread that checks and indexes them (two threads, as the machine has two
// cores). The checker reads handle tokens (for its messages) while the stream may be defining
// more, so each batch carries the definitions it brings (ids are assigned in file order:
// definitions come before the events that use them).
class DecodeQueue {
 public:
  static constexpr size_t kBatch = 8192;
  struct Batch {
    std::vector<Event> events = std::vector<Event>(kBatch);
    std::vector<uint64_t> chunks = std::vector<uint64_t>(kBatch);
    size_t n = 0;
    std::vector<std::pair<uint64_t, std::string>> definitions;
    float position = 0;
  };

  explicit DecodeQueue(format::SeqStream* in) : in_(*in), decoder_([this] { Decode(); }) {}
  ~DecodeQueue() { Stop(); }

  // The next batch in stream order, or nullptr once the stream ended (status in the stream).
  std::unique_ptr<Batch> Take() {
    absl::MutexLock lock(&mu_);
    auto ready = [&] { return !full_.empty() || decoded_; };
    mu_.Await(absl::Condition(&ready));
    if (full_.empty()) return nullptr;
    std::unique_ptr<Batch> b = std::move(full_.front());
    full_.pop_front();
    return b;
  }
  // Gives a taken batch back for reuse.
  void Recycle(std::unique_ptr<Batch> b) {
    absl::MutexLock lock(&mu_);
    spare_.push_back(std::move(b));
  }
  // Stops decoding (the checker failed, or every batch was taken) and joins the thread.
  void Stop() {
    {
      absl::MutexLock lock(&mu_);
      stop_ = true;
    }
    if (decoder_.joinable()) decoder_.join();
  }

 private:
  static constexpr size_t kQueued = 4;

  void Decode() {
    uint64_t defined = 1;  // id 0 is NULL in every table
    const float size = static_cast<float>(std::max<uint64_t>(1, in_.file_size()));
    while (true) {
      std::unique_ptr<Batch> b;
      {
        absl::MutexLock lock(&mu_);
        auto room = [&] { return stop_ || full_.size() < kQueued; };
        mu_.Await(absl::Condition(&room));
        if (stop_) break;
        if (!spare_.empty()) {
          b = std::move(spare_.front());
          spare_.pop_front();
        }
      }
      if (b == nullptr) b = std::make_unique<Batch>();
      b->n = 0;
      b->definitions.clear();
      while (b->n < kBatch && in_.Next(&b->events[b->n])) b->chunks[b->n++] = in_.chunk_ordinal();
      const format::TokenTable& h = in_.handles();
      for (; defined < h.size(); ++defined)
        b->definitions.emplace_back(defined, std::string(h.Token(defined)));
      b->position = std::min(0.99f, static_cast<float>(in_.position()) / size);
      const bool last = b->n < kBatch;
      absl::MutexLock lock(&mu_);
      full_.push_back(std::move(b));
      if (last) break;
    }
    absl::MutexLock lock(&mu_);
    decoded_ = true;
  }

  format::SeqStream& in_;
  absl::Mutex mu_;
  std::deque<std::unique_ptr<Batch>> full_, spare_;
  bool decoded_ = false;  // the stream ended (status in `in_`)
  bool stop_ = false;     // stop decoding
  std::thread decoder_;   // last: starts once the rest is constructed
};

}  // namespace

absl::StatusOr<std::unique_ptr<TraceModel>> TraceModel::Open(const std::string& path,
                                                             const BuildOptions& options,
                                                             const ProgressFn& progress) {
  format::SeqStreamOptions stream_options;
  stream_options.salvage = options.salvage;
  stream_options.gaps = false;
  absl::StatusOr<std::unique_ptr<format::SeqStream>> opened =
      format::SeqStream::Open(path, stream_options);
  if (!opened.ok()) return opened.status();
  format::SeqStream& in = **opened;
  if (in.format() != TraceFileFormat::kCltrace) {
    opened->reset();
    absl::StatusOr<TraceData> data = ReadTraceFile(path, {}, options.salvage, /*prefix=*/false);
    if (!data.ok()) return data.status();
    return Build(*std::move(data), options, progress);
  }
  // Without an index the count is not known up front: the densest traces take ~2.5 bytes a
  // call, so the file size bounds it.
  const uint64_t expected = in.expected_events() != 0 ? in.expected_events() : in.file_size() / 2;
  std::unique_ptr<TraceModel> m(new TraceModel());
  m->calls_ =
      std::make_unique<CallIndex>(expected > options.coarse_above, options.coarse_block_calls);
  {
    DecodeQueue queue(&in);
    format::TokenTable handles;
    ModelPass pass(m.get(), options);
    const bool salvage = options.salvage;
    pass.Begin(
        handles, [path, salvage](const std::function<void(const Event&)>& visit) -> absl::Status {
          format::SeqStreamOptions o;
          o.salvage = salvage;
          o.gaps = false;
          absl::StatusOr<std::unique_ptr<format::SeqStream>> s = format::SeqStream::Open(path, o);
          if (!s.ok()) return s.status();
          Event e;
          while ((*s)->Next(&e)) visit(e);
          return (*s)->status();
        });
    absl::Status failed;
    while (failed.ok()) {
      std::unique_ptr<DecodeQueue::Batch> b = queue.Take();
      if (b == nullptr) break;
      for (const auto& [id, token] : b->definitions) {
        if (!handles.Define(id, token)) {
          failed = absl::InternalError(absl::StrCat("handle id ", id, " defined out of order"));
          break;
        }
      }
      for (size_t i = 0; i < b->n && failed.ok(); ++i)
        failed = pass.Add(b->events[i], b->chunks[i]);
      if (progress) progress(b->position);
      queue.Recycle(std::move(b));
    }
    queue.Stop();
    if (!failed.ok()) return failed;
    if (!in.status().ok()) return in.status();
    // Every definition is read now; the rows' labels name handles.
    TraceData& d = m->data_;
    d.path = path;
    d.format = in.format();
    d.file_size = in.file_size();
    d.handles = handles;  // the checker still reads its table in Finish
    d.strings = in.strings();
    d.contents = in.contents();
    d.torn_tail = in.torn_tail();
    d.stats = in.reader_stats();
    pass.Finish();
  }
  opened->reset();
  if (absl::Status st = m->calls_->AttachFile(path, options.salvage); !st.ok()) return st;
  if (progress) progress(1.0f);
  return m;
}

std::string TraceModel::Token(uint64_t handle) const {
  if (handle == 0) return "NULL";
  absl::string_view t = data_.handles.Token(handle);
  return t.empty() ? std::string("?") : std::string(t);
}

int TraceModel::FindRow(absl::string_view token) const {
  int64_t id = data_.handles.Find(token);
  return id <= 0 ? -1 : RowOfHandle(static_cast<uint64_t>(id));
}

int TraceModel::RowOfHandle(uint64_t handle) const {
  auto it = row_of_handle_.find(handle);
  return it == row_of_handle_.end() ? -1 : it->second;
}

int TraceModel::SpanIndexAt(int row, uint64_t seq) const {
  if (row < 0 || row >= static_cast<int>(rows_.size())) return -1;
  const std::vector<Span>& s = rows_[row].spans;
  auto it = std::upper_bound(s.begin(), s.end(), seq,
                             [](uint64_t v, const Span& sp) { return v < sp.from; });
  if (it == s.begin()) return -1;
  --it;
  return seq < it->to ? static_cast<int>(it - s.begin()) : -1;
}

const Span* TraceModel::SpanAt(int row, uint64_t seq) const {
  int i = SpanIndexAt(row, seq);
  return i < 0 ? nullptr : &rows_[row].spans[i];
}

std::optional<uint64_t> TraceModel::NextTransition(int row, uint64_t seq) const {
  if (row < 0 || row >= static_cast<int>(rows_.size())) return std::nullopt;
  const std::vector<Span>& s = rows_[row].spans;
  auto it = std::upper_bound(s.begin(), s.end(), seq,
                             [](uint64_t v, const Span& sp) { return v < sp.from; });
  if (it == s.end()) return std::nullopt;
  return it->from;
}

std::optional<uint64_t> TraceModel::PrevTransition(int row, uint64_t seq) const {
  if (row < 0 || row >= static_cast<int>(rows_.size())) return std::nullopt;
  const std::vector<Span>& s = rows_[row].spans;
  auto it = std::lower_bound(s.begin(), s.end(), seq,
                             [](const Span& sp, uint64_t v) { return sp.from < v; });
  if (it == s.begin()) return std::nullopt;
  return std::prev(it)->from;
}

int64_t TraceModel::EventAt(uint64_t seq) const { return calls_->Find(seq); }

int64_t TraceModel::EventAtOrBefore(uint64_t seq) const { return calls_->FindAtOrBefore(seq); }

size_t TraceModel::call_count() const { return calls_->size(); }

bool TraceModel::ViaDcTable(size_t i) const { return calls_->DcTable(i); }

CallRecord TraceModel::Call(size_t i) const { return calls_->Get(i); }

absl::StatusOr<std::shared_ptr<const format::Event>> TraceModel::DecodeEvent(size_t i) const {
  return calls_->Decode(i);
}

bool TraceModel::fine_index() const { return !calls_->coarse(); }

uint64_t TraceModel::call_storage_bytes() const { return calls_->bytes(); }

std::string TraceModel::CallLabel(size_t i) const {
  const CallRecord r = Call(i);
  const format::CallInfo* ci = format::GetCall(r.call);
  absl::string_view name = ci ? absl::string_view(ci->name) : absl::string_view("?");
  return r.dc_table ? absl::StrCat("DC::", name) : std::string(name);
}

std::vector<size_t> TraceModel::Children(size_t i) const {
  std::vector<size_t> out;
  const CallRecord p = Call(i);
  const size_t n = call_count();
  // Nested calls lie between the entry and the exit; a call that never returned bounds
  // nothing, so look a bounded distance ahead for calls naming it.
  const size_t limit = p.end == 0 ? std::min(n, i + 100000) : n;
  for (size_t j = i + 1; j < limit; ++j) {
    const CallRecord c = Call(j);
    if (p.end != 0 && c.seq > p.end) break;
    if (c.parent == p.seq) out.push_back(j);
  }
  return out;
}

int TraceModel::NextViolation(uint64_t seq) const {
  if (violations_.empty()) return -1;
  auto it = std::upper_bound(violations_.begin(), violations_.end(), seq,
                             [](uint64_t s, const check::Violation& v) { return s < v.seq; });
  return it == violations_.end() ? 0 : static_cast<int>(it - violations_.begin());
}

int TraceModel::PrevViolation(uint64_t seq) const {
  if (violations_.empty()) return -1;
  auto it = std::lower_bound(violations_.begin(), violations_.end(), seq,
                             [](const check::Violation& v, uint64_t s) { return v.seq < s; });
  return it == violations_.begin() ? static_cast<int>(violations_.size()) - 1
                                   : static_cast<int>(it - violations_.begin()) - 1;
}

std::vector<int> TraceModel::ViolationsAt(uint64_t seq) const {
  std::vector<int> out;
  auto it = std::lower_bound(violations_.begin(), violations_.end(), seq,
                             [](const check::Violation& v, uint64_t s) { return v.seq < s; });
  for (; it != violations_.end() && it->seq == seq; ++it)
    out.push_back(static_cast<int>(it - violations_.begin()));
  return out;
}

}  // namespace cltrace::inspector
