// Settings of the runtime model: where the driver comes from, the open questions of the spec
// marked [INF] (each a named setting), and the runtime-misuse modes that make the runtime break
// the protocol on purpose so the reference driver's checks can be exercised.
//
// Thread-safety: plain values, copied into the device at creation.
#ifndef CLTRACE_RUNTIME_OPTIONS_H_
#define CLTRACE_RUNTIME_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "rules/rules.h"
#include "wddm/kernel_stack.h"

namespace cltrace::runtime {

class DdiObserver;

// ddi-spec §3.3: which handle DC::CommandListExecute receives for a nested command list.
enum class NestedExecuteHandle : uint8_t {
  kLocal,  // the context-local command-list handle (default; what the docs imply)
  kIc,     // the IC command-list handle (what D3D11On12 assumes)
};

// Runtime-misuse modes: each breaks exactly one runtime-side rule (ddi-spec §5).
enum class Misuse : uint8_t {
  kNone,
  kR40,  // executes a command list after its final Release (handle RecycleDestroyed)
  kR41,  // RecycleDestroyCommandList although the owning deferred context is gone
  kR44,  // DestroyCommandList twice on one handle (the first full destroy of the run)
  kR45,  // RecycleCreateCommandList on a handle that skipped RecycleCommandList (RD->V)
  kR46,  // drains the recycle list after Create/RecycleCreateCommandList
  kR52,  // FinishCommandList without ending begun queries / unmapping dynamic resources
  kR61,  // ExecuteCommandList without the query-validation of R61
};

absl::string_view MisuseRule(Misuse m);
bool MisuseFromRule(absl::string_view rule, Misuse* m);
// The rules of every misuse mode, in rule order.
std::vector<rules::Rule> MisuseRules();

struct RuntimeOptions {
  // Driver library to dlopen. Empty: $CLTRACE_DRIVER, else the reference driver
  // (libcltrace_refdriver.so next to / in ../lib relative to this runtime or the executable).
  std::string driver_path;

  // [INF] §3.3 nested command lists.
  NestedExecuteHandle nested_execute_handle = NestedExecuteHandle::kLocal;
  // [INF] T7e: after RecycleCreateCommandList fails, still call DestroyCommandList on the handle.
  bool destroy_after_failed_recycle_create = false;
  // [INF] D9e: after RecycleCreateDeferredContext fails, call DC::DestroyDevice on the handle.
  bool destroy_dc_after_failed_recycle = true;
  // [INF] D5e: after Create/RecycleCreateCommandList fails, run the abandon sequence (true) or
  // close the local handles and go straight to the recycle (false).
  bool abandon_after_failed_create = true;
  // [INF] D11: releasing an idle (nothing recorded) deferred context runs AbandonCommandList
  // first (true) or goes straight to DestroyDevice (false).
  bool abandon_before_destroy_idle_dc = true;
  // [INF] §4.6: when a deferred context dies holding recycle-destroyed / cached command-list
  // handles, destroy them before (true) or after (false) its DestroyDevice.
  bool destroy_cached_lists_before_dc = true;

  // Recycling of small command lists (SCL). false: every release is DestroyCommandList and
  // every FinishCommandList a fresh CalcPrivateCommandListSize + CreateCommandList (benchmark).
  bool recycle_command_lists = true;

  // Driver-behaviour probes (ddi-spec §5 "D" checks).
  // R6: swap the callback tables' function pointers at every Flush (IC) / recycle (DC) and
  // flag calls through a stale pointer.
  bool probe_callback_caching = true;
  // R39/R50: poison freed handle memory and keep it quarantined (until two Flush/Present
  // calls later, at most `quarantine_entries` blocks) to catch later writes.
  bool poison_freed_handles = true;
  size_t quarantine_entries = 1u << 16;
  // How many quarantined blocks one Present or Flush checks, oldest first and round-robin from
  // where the last check stopped: every block is still checked, at least when it leaves the
  // quarantine, but a program that presents without flushing no longer rescans every block
  // at every Present (the cost grew with frames squared).
  size_t quarantine_check_entries = 4096;
  // R71: report when this many IC submits pass without pfnPerformAmortizedProcessingCb.
  uint32_t amortized_starvation_submits = 8;

  // Deliberate protocol breaks (tests of the driver's checks).
  Misuse misuse = Misuse::kNone;

  // Flags for CalcPrivateDeviceSize / CreateDevice.
  uint32_t create_device_flags = 0;

  // The device's kernel (gpu::KernelStack, runtime/kernel.h): timing, video memory, and the
  // planted kernel/KMD bugs R75-R78 (`kernel.bug`).
  gpu::KernelStackOptions kernel;
  // Wrappers around this device's kernel-layer tables (runtime/kernel.h), e.g.
  // gpu::KernelTranscript::Wrappers(); innermost of the interposition hooks.
  gpu::TableWrappers kernel_wrappers;
  // Test hook: sees every DDI call and callback as a readable line (runtime/transcript.h).
  DdiObserver* observer = nullptr;
};

}  // namespace cltrace::runtime

#endif  // CLTRACE_RUNTIME_OPTIONS_H_
