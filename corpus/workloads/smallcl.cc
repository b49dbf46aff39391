// smallcl: the seeds' "small command list" case. Several threads each own a deferred context
// and finish single-copy command lists at high frequency; the immediate context executes and
// releases them (so handles are recycle-destroyed while their deferred context lives and come
// back through RecycleCommandList / RecycleCreateCommandList). Each thread's last list
// outlives its deferred context (DestroyCommandList path). The copied resources are released
// while the immediate context still has unsubmitted copies of them (deferred destruction).
#include <cstdint>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"
#include "corpus/workloads/scenarios.h"
#include "corpus/workloads/util.h"

namespace cltrace::workloads {

using runtime::CommandList;
using runtime::Device;
using runtime::DeviceContext;
using runtime::Resource;

namespace {

constexpr int kListsPerThreadPerFrame = 16;
constexpr size_t kQueueDepth = 8;
// Lockstep: lists the immediate context leaves queued at the end of its turn.
constexpr size_t kLockstepLag = kQueueDepth - 1;

// long: lists of kLongDrawsPerList draws; the default frame count makes about 100 million
// recorded calls with the default four threads.
constexpr int kLongListsPerThreadPerFrame = 16;
constexpr int kLongDrawsPerList = 32;
constexpr int kLongDefaultFrames = 22200;

// The smallcl loop: `threads` deferred contexts each record `lists_per_frame` lists per frame
// with `record` (the list's content; `i` counts the thread's lists) and finish them; the
// immediate context executes and releases them and presents `backbuffer` after every frame's
// worth. Each thread's last list outlives its deferred context.
absl::Status RunListStream(Device* device, const ScenarioOptions& o, int lists_per_frame,
                           absl::FunctionRef<void(DeviceContext* dc, int t, int i)> record,
                           Resource* backbuffer) {
  const int threads = o.threads < 1 ? 1 : o.threads;
  const int64_t lists_per_thread = int64_t{o.frames} * lists_per_frame;
  DeviceContext* ic = device->GetImmediateContext();

  // Lockstep: the workers and the immediate context take turns in round-robin order (a
  // worker finishes one list per turn; the immediate context executes the queued lists but
  // the last kLockstepLag, so lists stay in flight and new handles are still created).
  const int consumer = threads;
  ListQueue queue(o.lockstep ? SIZE_MAX : kQueueDepth);
  Turns turns(threads + 1, o.lockstep);
  std::vector<absl::Status> results(threads);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      turns.Begin(t);
      DeviceContext* dc = nullptr;
      if (HRESULT hr = device->CreateDeferredContext(0, &dc); hr != S_OK) {
        results[t] = Failed("CreateDeferredContext", hr);
        queue.Push(nullptr);
        turns.Leave(t);
        return;
      }
      turns.End(t);
      CommandList* last = nullptr;
      for (int64_t i = 0; i < lists_per_thread; ++i) {
        turns.Begin(t);
        record(dc, t, static_cast<int>(i % (int64_t{1} << 30)));
        CommandList* cl = nullptr;
        HRESULT hr = dc->FinishCommandList(FALSE, &cl);
        // Injected out-of-memory or device removal: the list is lost, recording goes on.
        if (hr == static_cast<HRESULT>(E_OUTOFMEMORY) ||
            hr == static_cast<HRESULT>(DXGI_ERROR_DEVICE_REMOVED)) {
          turns.End(t);
          continue;
        }
        if (hr != S_OK) {
          results[t] = Failed("FinishCommandList", hr);
          break;
        }
        if (i + 1 == lists_per_thread) {
          last = cl;
        } else {
          queue.Push(cl);
          turns.End(t);
        }
      }
      turns.Begin(t);  // (still held after a failure or the last list)
      dc->Release();
      if (last != nullptr) queue.Push(last);  // outlives its deferred context
      queue.Push(nullptr);
      turns.Leave(t);
    });
  }

  int ended = 0;
  int64_t executed = 0;
  const int64_t per_frame = int64_t{threads} * lists_per_frame;
  while (ended < threads) {
    turns.Begin(consumer);
    // Lockstep: the workers are done once the immediate context is the only party left.
    const bool drain = turns.OnlyLeft(consumer);
    while (ended < threads && (!o.lockstep || drain || queue.Size() > kLockstepLag)) {
      CommandList* cl = queue.Pop();
      if (cl == nullptr) {
        ++ended;
        continue;
      }
      ic->ExecuteCommandList(cl, FALSE);
      cl->Release();
      if (++executed % per_frame == 0) device->Present(backbuffer);
    }
    turns.End(consumer);
  }
  for (std::thread& w : workers) w.join();
  for (const absl::Status& s : results) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RunSmallCl(Device* device, const ScenarioOptions& o) {
  const int threads = o.threads < 1 ? 1 : o.threads;
  DeviceContext* ic = device->GetImmediateContext();

  std::vector<Resource*> src(threads), dst(threads);
  for (int t = 0; t < threads; ++t) {
    auto s = MakeBuffer(device, 256, D3D10_DDI_USAGE_DEFAULT, D3D10_DDI_BIND_SHADER_RESOURCE);
    auto d = MakeBuffer(device, 256, D3D10_DDI_USAGE_DEFAULT, D3D10_DDI_BIND_SHADER_RESOURCE);
    if (!s.ok()) return s.status();
    if (!d.ok()) return d.status();
    src[t] = *s;
    dst[t] = *d;
  }
  auto backbuffer = MakeTexture(device, 64, 64, D3D10_DDI_BIND_RENDER_TARGET, 0, /*primary=*/true);
  if (!backbuffer.ok()) return backbuffer.status();

  absl::Status result = RunListStream(
      device, o, kListsPerThreadPerFrame,
      [&](DeviceContext* dc, int t, int) { dc->CopyResource(dst[t], src[t]); }, *backbuffer);
  // A last round of copies on the immediate context, still unsubmitted below.
  for (int t = 0; t < threads; ++t) ic->CopyResource(dst[t], src[t]);

  // Released while the IC still holds unsubmitted copies of them: their destruction is
  // deferred until the Flush has submitted that work (R67); the Flush frees them (R68). The
  // destination buffers go after the last Flush: DestroyDevice must finish them (R70).
  for (int t = 0; t < threads; ++t) src[t]->Release();
  ic->Flush();
  for (int t = 0; t < threads; ++t) dst[t]->Release();
  device->Present(*backbuffer);
  (*backbuffer)->Release();
  return result;
}

int LongDefaultFrames() { return kLongDefaultFrames; }

absl::Status RunLong(Device* device, const ScenarioOptions& o) {
  DeviceContext* ic = device->GetImmediateContext();
  auto backbuffer = MakeTexture(device, 64, 64, D3D10_DDI_BIND_RENDER_TARGET, 0, /*primary=*/true);
  if (!backbuffer.ok()) return backbuffer.status();
  // The benchmark stream's draws (bench/recorder_bench.cc BM_RecordStream): call i is
  // DrawIndexed(36 + (i % 7) * 3, (i * 36) % 65536, (i / 100) % 1000).
  absl::Status result = RunListStream(
      device, o, kLongListsPerThreadPerFrame,
      [](DeviceContext* dc, int, int list) {
        for (int k = 0; k < kLongDrawsPerList; ++k) {
          const uint32_t i = static_cast<uint32_t>(list) * kLongDrawsPerList + k;
          dc->DrawIndexed(36 + (i % 7) * 3, (i * 36) % 65536,
                          static_cast<int32_t>((i / 100) % 1000));
        }
      },
      *backbuffer);
  ic->Flush();
  device->Present(*backbuffer);
  (*backbuffer)->Release();
  return result;
}

}  // namespace cltrace::workloads
