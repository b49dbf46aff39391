#include "replayer/internal/session.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ddi/call_traits.h"
#include "ddi/catalog.h"
#include "format/jsonl.h"
#include "replayer/internal/compare.h"

namespace cltrace::replay::internal {
namespace {

using format::CallId;
using format::Event;
using format::FieldInfo;
using format::FieldKind;

thread_local ThreadState* t_current = nullptr;
std::atomic<Session*> g_active{nullptr};

}  // namespace

ThreadState* CurrentThread() { return t_current; }
Session* ActiveSession() { return g_active.load(std::memory_order_acquire); }

Session::Session(const Plan& plan, const ReplayOptions& options, Driver* driver)
    : plan_(plan), options_(options), driver_(driver) {}

Session::~Session() {
  Session* self = this;
  g_active.compare_exchange_strong(self, nullptr);
  if (zero_region_ != nullptr) munmap(zero_region_, kZeroRegionBytes);
  // Memory of handles the driver destroyed is freed. Handles still live when the replay ends
  // (a trace that stops before their destroy, --until, a stop at a divergence) stay allocated
  // on purpose, and so do the runtime-handle addresses: the driver may still hold them in its
  // own registries, and a later replay in this process must not hand out the same addresses
  // for new handles.
  for (Block& b : quarantine_) std::free(b.memory);
  if (live_.empty() && runtime_base_ != 0) {
    munmap(reinterpret_cast<void*>(runtime_base_), runtime_bytes_);
  }
}

bool Session::Init(std::string* error, size_t reserve_ids) {
  slot_count_ = plan_.handles->size();
  slots_ = std::make_unique<Slot[]>(slot_count_);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  runtime_bytes_ = (std::max<size_t>({slot_count_, reserve_ids, 1}) * 16 + page - 1) / page * page;
  void* rt =
      mmap(nullptr, runtime_bytes_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  zero_region_ = mmap(nullptr, kZeroRegionBytes, PROT_READ,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (rt == MAP_FAILED || zero_region_ == MAP_FAILED) {
    if (rt != MAP_FAILED) munmap(rt, runtime_bytes_);
    if (zero_region_ != MAP_FAILED) munmap(zero_region_, kZeroRegionBytes);
    zero_region_ = nullptr;
    *error = "cannot reserve address space for runtime handles";
    return false;
  }
  runtime_base_ = reinterpret_cast<uintptr_t>(rt);
  pending_size_.assign(plan_.tids.size(), -1);
  Session* expected = nullptr;
  if (!g_active.compare_exchange_strong(expected, this)) {
    *error = "another replay is running in this process";
    return false;
  }
  if (options_.kernel == KernelMode::kModel) {
    model_ = std::make_unique<ModelKernel>(
        plan_, this, options_.threads == ThreadMode::kRecorded && plan_.tids.size() > 1,
        kernel_order_override_, options_.kernel_turn_timeout);
  }
  return true;
}

void Session::InitThread(ThreadState* t) {
  t->session = this;
  t->env.arena = &t->arena;
  t->env.handle_raw = [this](uint64_t id) -> uint64_t {
    return id < slot_count_ ? slots_[id].raw.load(std::memory_order_acquire) : 0;
  };
  t->env.handle_id = [this, t](uint64_t raw) { return HandleId(t, raw); };
  t->env.pointer = [this, t](const FieldInfo& f, uint64_t recorded) -> void* {
    if (recorded == 0) return nullptr;
    if (t->call != nullptr) {
      absl::Span<const FieldInfo> fixed = format::Fields(*t->call);
      if (&f >= fixed.data() && &f < fixed.data() + fixed.size()) {
        const uint16_t index = static_cast<uint16_t>(&f - fixed.data());
        for (const auto& [i, p] : t->pointers) {
          if (i == index) return p;
        }
      }
    }
    return zero_region_;
  };
  t->env.element_pointer = [this, t](const FieldInfo& array, size_t element, const FieldInfo&,
                                     uint64_t recorded) -> void* {
    if (recorded == 0) return nullptr;
    // Only pInitialDataUP's elements have a per-element substitute: their pSysMem.
    if (element < t->initial_data.size() && absl::string_view(array.name) == "pInitialDataUP") {
      return t->initial_data[element];
    }
    return zero_region_;
  };
}

// ---- Running the plan --------------------------------------------------------------------

void Session::Run(ReplayResult* result) {
  if (BeginSegment()) RunSegment();
  Finish(result);
}

bool Session::BeginSegment() {
  if (plan_.handles->size() > slot_count_) {
    const size_t n = std::max(plan_.handles->size(), slot_count_ * 2);
    if (n * 16 > runtime_bytes_ && plan_.handles->size() * 16 > runtime_bytes_) {
      std::lock_guard<std::mutex> lock(findings_mu_);
      if (!bad_.has_value() && !plan_.events.empty()) {
        bad_ = BadInput::At(plan_.events.front(),
                            absl::StrCat("more than ", runtime_bytes_ / 16,
                                         " handle ids: the replay reserved no more"));
      }
      fatal_.store(true);
      return false;
    }
    const size_t count = std::min(n, runtime_bytes_ / 16);
    auto grown = std::make_unique<Slot[]>(count);
    for (size_t i = 0; i < slot_count_; ++i) {
      grown[i].raw.store(slots_[i].raw.load());
      grown[i].table.store(slots_[i].table.load());
      grown[i].dxgi.store(slots_[i].dxgi.load());
      grown[i].deferred.store(slots_[i].deferred.load());
    }
    slots_ = std::move(grown);
    slot_count_ = count;
  }
  if (pending_size_.size() < plan_.tids.size()) pending_size_.resize(plan_.tids.size(), -1);
  std::lock_guard<std::mutex> lock(async_mu_);
  async_events_.erase(async_events_.begin(),
                      async_events_.begin() + static_cast<ptrdiff_t>(async_cursor_));
  async_cursor_ = 0;
  for (uint32_t i : plan_.async_callbacks) async_events_.push_back(plan_.events[i]);
  return true;
}

void Session::RunSegment() {
  if (options_.threads == ThreadMode::kSingle || plan_.tids.size() <= 1) {
    RunSingle();
  } else {
    RunRecorded();
  }
}

void Session::ForEachNewDivergence(const std::function<void(Divergence*)>& f) {
  std::lock_guard<std::mutex> lock(findings_mu_);
  for (; history_done_ < divergences_.size(); ++history_done_) f(&divergences_[history_done_]);
}

Session::Footprint Session::footprint() {
  Footprint fp;
  fp.slots = slot_count_;
  {
    std::lock_guard<std::mutex> lock(memory_mu_);
    fp.live = live_.size();
    fp.quarantined = quarantine_.size();
    fp.raw_map = id_of_raw_.size();
  }
  {
    std::lock_guard<std::mutex> lock(async_mu_);
    fp.async = async_events_.size() - async_cursor_;
  }
  std::lock_guard<std::mutex> lock(content_mu_);
  fp.mappings = mappings_.size();
  return fp;
}

void Session::Finish(ReplayResult* result, const std::function<void(Divergence*)>* fill) {
  if (model_ != nullptr) {
    // The kernel work recorded after the last call (the kernel half of device destruction).
    const bool complete = options_.until_seq == 0 && plan_.never_returned_seq == 0 &&
                          !fatal_.load() &&
                          (options_.keep_going || min_divergence_.load() == UINT64_MAX);
    model_->Finish(complete);
  }
  // Callbacks a driver thread made outside any DDI call in the recording but not on replay.
  {
    std::lock_guard<std::mutex> lock(async_mu_);
    if (async_cursor_ < async_events_.size() && !fatal_.load()) {
      const Event& e = async_events_[async_cursor_];
      Diverge(e, CallText(e.call, e.args, /*from_driver=*/false),
              "no callback (the driver made none outside a DDI call)");
    }
  }
  if (fill != nullptr) ForEachNewDivergence(*fill);
  Collect(result);
}

bool Session::Stopping(uint64_t seq) const {
  if (fatal_.load(std::memory_order_acquire)) return true;
  return !options_.keep_going && seq > min_divergence_.load(std::memory_order_acquire);
}

void Session::IssueTop(ThreadState* t, size_t k) {
  const uint32_t i = plan_.top[k];
  t->out_of_turn = false;
  if (Stopping(plan_.events[i].seq)) {
    // Not issued: its kernel turns will never come, so threads waiting for them (calls that
    // started before the stop) are released out of turn instead of timing out into the model.
    if (model_ != nullptr) model_->SkipTop(k);
    return;
  }
  if (model_ != nullptr) model_->DriveBefore(plan_.events[i].seq);
  Issue(t, i);
}

void Session::RunSingle() {
  ThreadState t;
  InitThread(&t);
  t_current = &t;
  for (size_t k = 0; k < plan_.top.size(); ++k) IssueTop(&t, k);
  t_current = nullptr;
}

namespace {

// True for the calls whose Nth the reference driver can fail ("oom:FN=N", --inject): the driver
// counts them in arrival order, so they must arrive in recorded order.
bool IsFaultSite(CallId call) {
  return call == CallId::kCreateCommandList || call == CallId::kRecycleCreateCommandList ||
         call == CallId::kRecycleCreateDeferredContext;
}

}  // namespace

// Calls start in recorded seq order, and a call waits until every call that had returned
// before it started (in the recording) has returned on replay: every order the recording
// proves is kept; calls that overlapped in the recording may overlap again, except the fault
// sites (IsFaultSite), each of which also waits for the one before it to return, so that an
// injected "fail the Nth" fails the recorded Nth.
void Session::RunRecorded() {
  const size_t n = plan_.top.size();
  std::vector<uint32_t> end_order(n);
  for (size_t k = 0; k < n; ++k) end_order[k] = static_cast<uint32_t>(k);
  std::sort(end_order.begin(), end_order.end(), [&](uint32_t a, uint32_t b) {
    return plan_.events[plan_.top[a]].end < plan_.events[plan_.top[b]].end;
  });
  std::vector<uint64_t> ends(n);
  for (size_t k = 0; k < n; ++k) ends[k] = plan_.events[plan_.top[end_order[k]]].end;
  std::vector<uint32_t> need(n);
  for (size_t k = 0; k < n; ++k) {
    const uint64_t seq = plan_.events[plan_.top[k]].seq;
    need[k] = static_cast<uint32_t>(std::lower_bound(ends.begin(), ends.end(), seq) - ends.begin());
  }
  constexpr uint32_t kNoSite = UINT32_MAX;
  std::vector<uint32_t> prev_site(n, kNoSite);
  for (size_t k = 0, last = kNoSite; k < n; ++k) {
    if (!IsFaultSite(plan_.events[plan_.top[k]].call)) continue;
    prev_site[k] = static_cast<uint32_t>(last);
    last = k;
  }
  std::vector<std::vector<uint32_t>> queues(plan_.tids.size());
  std::vector<uint32_t> owner(n + 1, 0);  // the queue (replay thread) of each call
  for (size_t k = 0; k < n; ++k) {
    const uint16_t q = plan_.thread[plan_.top[k]];
    queues[q].push_back(static_cast<uint32_t>(k));
    owner[k] = q;
  }

  // Only the thread owning call `started` can be waiting for the done prefix, and every other
  // thread waits for its turn to start: so each event wakes exactly one thread, through its
  // own gate (a counter bumped after the condition changed, so a wake-up is never lost).
  // Sequentially consistent throughout: a waiter must see a done_prefix stored by a thread
  // that then read an older `started` (store-load ordering).
  std::atomic<uint32_t> started{0};
  std::atomic<uint32_t> done_prefix{0};
  std::unique_ptr<std::atomic<uint8_t>[]> done(new std::atomic<uint8_t>[std::max<size_t>(n, 1)]);
  for (size_t k = 0; k < n; ++k) done[k].store(0, std::memory_order_relaxed);
  std::unique_ptr<std::atomic<uint32_t>[]> gates(
      new std::atomic<uint32_t>[std::max<size_t>(queues.size(), 1)]);
  for (size_t q = 0; q < queues.size(); ++q) gates[q].store(0, std::memory_order_relaxed);
  std::mutex advance_mu;
  auto wake = [&](uint32_t k) {
    if (k >= n) return;
    std::atomic<uint32_t>& gate = gates[owner[k]];
    gate.fetch_add(1);
    gate.notify_one();
  };

  auto worker = [&](uint32_t q) {
    ThreadState t;
    InitThread(&t);
    t_current = &t;
    std::atomic<uint32_t>& gate = gates[q];
    for (uint32_t k : queues[q]) {
      for (;;) {
        const uint32_t g = gate.load();
        if (started.load() == k && done_prefix.load() >= need[k] &&
            (prev_site[k] == kNoSite || done[prev_site[k]].load() != 0)) {
          break;
        }
        gate.wait(g);
      }
      started.store(k + 1);
      wake(k + 1);
      IssueTop(&t, k);
      done[k].store(1, std::memory_order_release);
      {
        std::lock_guard<std::mutex> lock(advance_mu);
        uint32_t d = done_prefix.load(std::memory_order_relaxed);
        while (d < n && done[end_order[d]].load(std::memory_order_acquire) != 0) ++d;
        done_prefix.store(d);
      }
      wake(started.load());
    }
    t_current = nullptr;
  };
  std::vector<std::thread> threads;
  for (uint32_t q = 0; q < queues.size(); ++q) {
    if (!queues[q].empty()) threads.emplace_back(worker, q);
  }
  for (std::thread& th : threads) th.join();
}

// ---- One DDI call -------------------------------------------------------------------------

void* Session::TableFor(const Event& e, const CallMeta& m) {
  if (m.layer == format::Layer::kAdapter) {
    const uint64_t id = e.args[0];
    if (id == 0 || id >= slot_count_) {
      FailInput(e, "the call names no adapter (hAdapter is NULL)");
      return nullptr;
    }
    if (void* table = slots_[id].table.load(std::memory_order_acquire)) return table;
    if (!OpenAdapter(id, e)) return nullptr;
    return slots_[id].table.load(std::memory_order_acquire);
  }
  const uint64_t id = m.table_field >= 0 ? e.args[m.table_field] : 0;
  void* table = nullptr;
  if (id != 0 && id < slot_count_) {
    table = (m.layer == format::Layer::kDxgi ? slots_[id].dxgi : slots_[id].table)
                .load(std::memory_order_acquire);
  }
  if (table == nullptr) {
    FailInput(e, absl::StrCat("hDevice ", id == 0 ? "NULL" : plan_.handles->Token(id),
                              " is not a device or deferred context created earlier"));
  }
  return table;
}

namespace {

// The adapter callbacks the replayer hands OpenAdapter10_2 in the runtime's place: no kernel
// private adapter data (zeroed bytes) and one multisample method.
HRESULT APIENTRY ReplayQueryAdapterInfoCb(HANDLE, const D3DDDICB_QUERYADAPTERINFO* data) {
  if (data == nullptr || (data->pPrivateDriverData == nullptr && data->PrivateDriverDataSize != 0))
    return static_cast<HRESULT>(E_INVALIDARG);
  if (data->PrivateDriverDataSize != 0)
    std::memset(data->pPrivateDriverData, 0, data->PrivateDriverDataSize);
  return S_OK;
}

HRESULT APIENTRY ReplayGetMultisampleMethodListCb(HANDLE, D3DDDICB_GETMULTISAMPLEMETHODLIST* data) {
  if (data == nullptr) return static_cast<HRESULT>(E_INVALIDARG);
  if (data->pMethodList != nullptr && data->MethodCount >= 1) data->pMethodList[0] = {1, 1};
  data->MethodCount = 1;
  return S_OK;
}

const D3DDDI_ADAPTERCALLBACKS* AdapterCallbacks() {
  static constexpr D3DDDI_ADAPTERCALLBACKS kTable = {&ReplayQueryAdapterInfoCb,
                                                     &ReplayGetMultisampleMethodListCb};
  return &kTable;
}

}  // namespace

bool Session::OpenAdapter(uint64_t id, const Event& e) {
  std::lock_guard<std::mutex> lock(tables_mu_);
  if (slots_[id].table.load(std::memory_order_acquire) != nullptr) return true;
  auto adapter = std::make_unique<AdapterState>();
  D3D10DDIARG_OPENADAPTER open{};
  // The runtime's adapter handle: an inaccessible address no handle id uses (odd multiple of 8).
  open.hRTAdapter.handle = reinterpret_cast<void*>(runtime_base_ + id * 16 + 8);
  open.Interface = D3D11_0_DDI_INTERFACE_VERSION;
  open.Version = D3D11_0_DDI_BUILD_VERSION << 16;
  open.pAdapterCallbacks = AdapterCallbacks();
  // The runtime opened the adapter with the interface it then created the device with.
  for (size_t i = IndexOf(&e); i < plan_.events.size(); ++i) {
    const Event& n = plan_.events[i];
    if ((n.call != CallId::kCalcPrivateDeviceSize && n.call != CallId::kCreateDevice) ||
        n.args[0] != id) {
      continue;
    }
    const format::CallInfo& ci = *format::GetCall(n.call);
    const int iface = format::FieldIndex(ci, "Interface");
    const int version = format::FieldIndex(ci, "Version");
    if (iface >= 0 && version >= 0 && n.args[1] != 0) {  // the argument structure is present
      open.Interface = static_cast<UINT>(n.args[iface]);
      open.Version = static_cast<UINT>(n.args[version]);
    }
    break;
  }
  open.pAdapterFuncs_2 = &adapter->funcs;
  const HRESULT hr = driver_->open_adapter()(&open);
  if (hr != S_OK) {
    Fatal(e, "the driver's OpenAdapter10_2 (made before the recording starts) succeeds",
          absl::StrCat("OpenAdapter10_2 returned ", format::HresultToString(hr)));
    return false;
  }
  adapter->handle = open.hAdapter;
  const uint64_t raw = reinterpret_cast<uintptr_t>(open.hAdapter.pDrvPrivate);
  {
    std::lock_guard<std::mutex> mlock(memory_mu_);
    if (raw != 0) id_of_raw_[raw] = id;
  }
  slots_[id].raw.store(raw, std::memory_order_release);
  slots_[id].table.store(&adapter->funcs, std::memory_order_release);
  adapters_.push_back(std::move(adapter));
  return true;
}

void Session::Issue(ThreadState* t, uint32_t i) {
  const Event& e = plan_.events[i];
  const CallMeta& m = CallMetaFor(e.call);
  void* table = TableFor(e, m);
  if (table == nullptr) return;
  void* pfn = *reinterpret_cast<void**>(static_cast<char*>(table) + m.slot_offset);
  if (pfn == nullptr) {
    Diverge(e, absl::StrCat("a call through ", m.info->member),
            absl::StrCat("the driver's table has no ", m.info->member, " (NULL)"));
    return;
  }
  if (!Prepare(t, e, m)) return;
  if (m.content_role == format::ContentRole::kUnmap) WriteMappedContent(e, m, i);
  const uint64_t ic_object = t->ic_object;
  format::ArgVec actual;
  format::ArgVec* const saved_actual = t->env.actual;
  t->env.actual = m.has_outputs ? &actual : nullptr;
  const size_t depth = t->stack.size();
  t->stack.push_back(Frame{i, plan_.first_child[i]});
  absl::StatusOr<int64_t> ret = format::InvokeCall(e.call, pfn, e.args, t->env);
  const Frame frame = t->stack[depth];
  t->stack.resize(depth);
  t->env.actual = saved_actual;
  t->call = nullptr;
  if (!ret.ok()) {
    FailInput(e, std::string(ret.status().message()));
    return;
  }
  // Recorded kernel thunks inside this call that the driver did not make: their turns will
  // never come.
  if (model_ != nullptr) {
    for (int32_t c = frame.cursor; c >= 0; c = plan_.next_sibling[c]) {
      if (plan_.role[c] == Role::kCallback) model_->SkipThunk(static_cast<uint32_t>(c));
    }
  }
  // A callback the recording shows inside this call that the driver did not make.
  for (int32_t c = frame.cursor; c >= 0; c = plan_.next_sibling[c]) {
    if (plan_.role[c] != Role::kCallback) continue;
    const Event& ce = plan_.events[c];
    Diverge(ce, CallText(ce.call, ce.args, /*from_driver=*/false),
            absl::StrCat("no callback (the driver returned from ", m.info->name, ", seq ", e.seq,
                         ", without making it)"));
    break;
  }
  if (m.content_role == format::ContentRole::kMap && m.has_outputs) RememberMapping(e, m, actual);
  AfterCall(e, m, *ret, ic_object);
  if (e.ret != *ret) {
    Diverge(e, absl::StrCat("ret ", RetText(e.call, e.ret)),
            absl::StrCat("ret ", RetText(e.call, *ret)));
  }
  if (m.has_outputs) CompareOutputs(t, e, actual);
  if (depth == 0) {
    // Nothing of this call is referenced any more (nested calls allocate above it).
    t->arena.Reset();
    t->unknown.clear();
  }
}

bool Session::Prepare(ThreadState* t, const Event& e, const CallMeta& m) {
  t->call = m.info;
  t->pointers.clear();
  t->initial_data.clear();
  t->ic_object = 0;
  return EnsureHandles(e, m) && CreateHandle(e, m) && ResolvePointers(t, e, m);
}

bool Session::EnsureHandle(const Event& e, uint64_t id, HandleClass cls, const char* name) {
  switch (cls) {
    case HandleClass::kDriver:
    case HandleClass::kAdapter:
      if (slots_[id].raw.load(std::memory_order_acquire) == 0) {
        FailInput(e, absl::StrCat("handle ", plan_.handles->Token(id), " (", name,
                                  ") is used before any call created it"));
        return false;
      }
      return true;
    case HandleClass::kRuntime:
      RuntimeHandle(id);
      return true;
    case HandleClass::kKernel:
      KernelHandle(id);
      return true;
    case HandleClass::kOther:
      return true;
  }
  return true;
}

bool Session::EnsureHandles(const Event& e, const CallMeta& m) {
  absl::Span<const FieldInfo> fields = format::Fields(*m.info);
  for (const HandleField& h : m.handles) {
    const uint64_t id = e.args[h.index];
    if (id == 0 || h.index == m.create_field) continue;
    if (!EnsureHandle(e, id, h.cls, fields[h.index].name)) return false;
  }
  if (m.array_handles) {
    bool ok = true;
    ForEachField(*m.info, e.args, [&](const FieldInfo& f, size_t index, int array) {
      if (!ok || array < 0 || f.kind != FieldKind::kHandle || e.args[index] == 0) return;
      ok = EnsureHandle(e, e.args[index], ClassOfHandleType(f.type_index), f.name);
    });
    if (!ok) return false;
  }
  return true;
}

int64_t Session::CreatedHandleSize(const Event& e, const CallMeta& m) {
  const uint64_t dev = e.args[0];
  const bool dc_table = m.layer == format::Layer::kDevice && dev < slot_count_ &&
                        slots_[dev].deferred.load(std::memory_order_acquire);
  int64_t size = -1;
  if (dc_table && m.rt_field >= 0) {
    const uint64_t ic = e.args[m.rt_field];
    {
      std::lock_guard<std::mutex> lock(memory_mu_);
      auto it = local_size_.find(ic);
      if (it != local_size_.end()) size = it->second;
    }
    if (size < 0) {
      FailInput(e, absl::StrCat("context-local open of ", plan_.handles->Token(ic),
                                ": no CalcDeferredContextHandleSize was answered for it"));
    }
    return size;
  }
  int64_t& pending = pending_size_[plan_.thread[IndexOf(&e)]];
  size = pending;
  pending = -1;
  if (size < 0) {
    const uint64_t id = e.args[m.create_field];
    FailInput(e,
              absl::StrCat("creates ", plan_.handles->Token(id), " (",
                           format::Fields(*m.info)[m.create_field].name,
                           ") but no CalcPrivate*Size was answered before it on thread ", e.tid));
  }
  return size;
}

void Session::InstallTables(CallId call, Slot& s) {
  if (call == CallId::kCreateDevice) {
    auto tables = std::make_unique<DeviceTables>();
    s.table.store(&tables->funcs, std::memory_order_release);
    s.dxgi.store(&tables->dxgi, std::memory_order_release);
    s.deferred.store(false, std::memory_order_release);
    std::lock_guard<std::mutex> lock(tables_mu_);
    devices_.push_back(std::move(tables));
  } else if (call == CallId::kCreateDeferredContext) {
    auto table = std::make_unique<D3D11DDI_DEVICEFUNCS>();
    std::memset(table.get(), 0, sizeof(D3D11DDI_DEVICEFUNCS));
    s.table.store(table.get(), std::memory_order_release);
    s.dxgi.store(nullptr, std::memory_order_release);
    s.deferred.store(true, std::memory_order_release);
    std::lock_guard<std::mutex> lock(tables_mu_);
    dc_tables_.push_back(std::move(table));
  } else {
    s.table.store(nullptr, std::memory_order_release);
    s.dxgi.store(nullptr, std::memory_order_release);
    s.deferred.store(false, std::memory_order_release);
  }
}

bool Session::CreateHandle(const Event& e, const CallMeta& m) {
  // A created handle gets fresh memory of the size the driver asked for.
  if (m.create_field < 0 || e.args[m.create_field] == 0) return true;
  const uint64_t id = e.args[m.create_field];
  const int64_t size = CreatedHandleSize(e, m);
  if (size < 0) return false;
  if (static_cast<uint64_t>(size) > kMaxHandleBytes) {
    Fatal(e, absl::StrCat("handle memory of at most ", kMaxHandleBytes, " bytes"),
          absl::StrCat("the driver asked for ", size, " bytes"));
    return false;
  }
  if (AllocateHandle(id, static_cast<size_t>(size)) == nullptr) {
    Fatal(e, absl::StrCat(size, " bytes of handle memory"), "out of memory");
    return false;
  }
  InstallTables(e.call, slots_[id]);
  return true;
}

bool Session::ResolvePointers(ThreadState* t, const Event& e, const CallMeta& m) {
  if (m.content_role == format::ContentRole::kInitialData && e.content != 0) {
    InitialDataSource(t, e);
  }
  // Pointer arguments: never a recorded address.
  for (const PointerField& p : m.pointers) {
    const uint64_t v = e.args[p.index];
    if (v == 0) continue;
    void* sub = zero_region_;
    switch (p.role) {
      case PointerRole::kInputData:
        // The bytes the application handed the driver, when the trace has them.
        if (p.index == m.sysmem_field && e.content != 0) sub = UploadSource(t, e);
        break;
      case PointerRole::kDeviceFuncs:
      case PointerRole::kDxgiFuncs: {
        const uint64_t id = m.create_field >= 0 ? e.args[m.create_field] : 0;
        sub = id == 0 ? nullptr
                      : (p.role == PointerRole::kDeviceFuncs ? slots_[id].table : slots_[id].dxgi)
                            .load(std::memory_order_acquire);
        break;
      }
      case PointerRole::kKernelCallbacks:
        sub = const_cast<D3DDDI_DEVICECALLBACKS*>(kernel_callbacks());
        break;
      case PointerRole::kCoreCallbacks:
        sub = const_cast<D3D11DDI_CORELAYER_DEVICECALLBACKS*>(core_callbacks());
        break;
      case PointerRole::kContextFuncs: {
        const uint64_t id = m.context_field >= 0 ? e.args[m.context_field] : 0;
        sub = id == 0 || !slots_[id].deferred.load(std::memory_order_acquire)
                  ? nullptr
                  : slots_[id].table.load(std::memory_order_acquire);
        if (sub == nullptr) {
          FailInput(e, "p11ContextFuncs given for a handle that is not a deferred context");
          return false;
        }
        break;
      }
      case PointerRole::kRelocatedFuncs: {
        // The replay's own copy of the context's table (it never moves).
        const uint64_t id = e.args[0];
        sub = id == 0 || id >= slot_count_ ? nullptr
                                           : slots_[id].table.load(std::memory_order_acquire);
        if (sub == nullptr) {
          FailInput(e, "pDeviceFunctions given for a handle that has no function table");
          return false;
        }
        break;
      }
      case PointerRole::kIcObject: {
        auto it = plan_.id_of_value.find(v);
        const uint64_t raw = it == plan_.id_of_value.end()
                                 ? 0
                                 : slots_[it->second].raw.load(std::memory_order_acquire);
        if (raw == 0) {
          FailInput(e, absl::StrFormat("pICObject 0x%x names no handle the replay created", v));
          return false;
        }
        sub = reinterpret_cast<void*>(raw);
        t->ic_object = it->second;
        break;
      }
    }
    t->pointers.emplace_back(p.index, sub);
  }
  return true;
}

void Session::AfterCall(const Event& e, const CallMeta& m, int64_t ret, uint64_t ic_object) {
  if (m.calc_private) pending_size_[plan_.thread[IndexOf(&e)]] = ret;
  if (m.calc_local_size && ic_object != 0) {
    std::lock_guard<std::mutex> lock(memory_mu_);
    local_size_[ic_object] = ret;
  }
  if (m.destroy_field >= 0 && e.args[m.destroy_field] != 0) Quarantine(e.args[m.destroy_field]);
}

}  // namespace cltrace::replay::internal
