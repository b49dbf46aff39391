#include "check/rules.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace cltrace::check {
namespace {

constexpr Enforcement T = Enforcement::kTrace;
constexpr Enforcement D = Enforcement::kReplay;
constexpr Enforcement S = Enforcement::kStatic;
constexpr Enforcement I = Enforcement::kInformative;

// Statements are short paraphrases of ddi-spec §5; docs/rules.md has the long form.
constexpr RuleInfo kRules[] = {
    {"R1", "V", T, false, "COMMANDLISTS(_BUILD_2) in the threading caps requires FREETHREADED"},
    {"R2", "S", S, false, "with COMMANDLISTS_BUILD_2 the IC table fills every CL/DC slot"},
    {"R3", "S", S, false, "every DC table fills the non-excludable slots"},
    {"R4", "T", T, false, "the runtime never calls a DC-excludable slot through a DC table"},
    {"R5", "S", T, false, "Create/Open/Destroy/CalcPrivate/Check slots fixed after CreateDevice"},
    {"R5a", "S", S, false, "the Recycle* slots and CalcDeferredContextHandleSize are fixed too"},
    {"R6", "D", D, false, "core-layer callbacks are called through the table, never cached"},
    {"R7", "T/H", T, false,
     "DisableDeferredStagingResourceDestruction only inside IC CreateDevice, never on a DC"},
    {"R8", "D", D, false, "CalcPrivate* and CalcDeferredContextHandleSize are reentrant"},
    {"R9", "-", I, false, "CalcPrivateDeviceSize is exempt from R8"},
    {"R10", "H", T, false, "no two IC-domain calls in flight at once; no two calls on one DC"},
    {"R11", "H", T, false, "Create/DestroyResource of non-shared primaries run in the IC domain"},
    {"R12", "H", T, false,
     "IC-table Create/RecycleCreate CL, CalcPrivateCommandListSize and RecycleCreateDeferred"
     "Context run on the DC's thread, outside the IC domain"},
    {"R13", "H/T", T, false, "RecycleCommandList goes through the DC table with an IC CL handle"},
    {"R14", "H", T, false, "IC RecycleDestroyCommandList/DestroyCommandList are free-threaded"},
    {"R15", "H", T, false, "HCONTEXT callbacks are never concurrent for one HCONTEXT"},
    {"R16", "H", T, false, "pfnRenderCb only inside an IC-domain DDI, never inside a DC call"},
    {"R17", "H/T", T, false,
     "pfnPresentCb only inside PresentDXGI, pfnSetDisplayModeCb only inside SetDisplayModeDXGI"},
    {"R18", "H/T", T, false, "pfnAllocateCb for a shared allocation only inside CreateResource"},
    {"R19", "H", T, false,
     "pfnPerformAmortizedProcessingCb inside the current DDI with that context's core layer"},
    {"R20", "V", T, false, "CreateCommandList sets only E_OUTOFMEMORY or DEVICEREMOVED"},
    {"R21", "T", T, false, "a CL whose CreateCommandList failed is never used or destroyed"},
    {"R22", "V/T", T, false,
     "RecycleCreateCommandList returns S_OK/E_OUTOFMEMORY and never sets OOM via SetErrorCb"},
    {"R23", "V/T", T, false,
     "RecycleCreateDeferredContext returns S_OK/E_OUTOFMEMORY, never sets OOM via SetErrorCb"},
    {"R24", "V", T, false, "CommandListExecute sets only E_OUTOFMEMORY or DEVICEREMOVED"},
    {"R25", "V", T, false,
     "destroys, Flush, QueryBegin/End, RecycleCommandList set only DEVICEREMOVED (DC: +OOM)"},
    {"R26", "V", T, false, "any error AbandonCommandList sets is critical"},
    {"R27", "V/D", T, false,
     "CheckDeferredContextHandleSizes never sets DEVICEREMOVED and keeps its answer"},
    {"R28", "T", T, false, "errors are reported to the core layer of the table's context"},
    {"R29", "T", T, false,
     "after a DC call reported E_OUTOFMEMORY the next Finish abandons instead of creating"},
    {"R30", "V", T, false, "application errors use D3DDDIERR_APPLICATIONERROR, not E_INVALIDARG"},
    {"R31", "T", T, false, "CalcPrivate* and CalcDeferredContextHandleSize never call SetErrorCb"},
    {"R32", "V", T, false, "CheckDeferredContextHandleSizes follows the two-pass protocol"},
    {"R33", "V", T, false,
     "CalcDeferredContextHandleSize returns a size listed by CheckDeferredContextHandleSizes"},
    {"R34", "T", T, false, "CalcDeferredContextHandleSize is never called through a DC table"},
    {"R35", "T", T, false,
     "CalcDeferredContextHandleSize follows every IC creation (CLs: CreateCommandList only)"},
    {"R36", "V", T, false, "CalcPrivateCommandListSize is constant per deferred context"},
    {"R37", "V", T, false, "a CL's DC-local handle size never changes across recycles"},
    {"R38", "info", I, false, "only the handle memory must be recycled"},
    {"R39", "D", D, false, "destroyed handle memory is never touched again"},
    {"R40", "T", T, false, "CommandListExecute only on a Valid command list"},
    {"R41", "T", T, false, "RecycleDestroyCommandList only from Valid while the owning DC lives"},
    {"R42", "T", T, false, "RecycleCommandList only on RecycleDestroyed, through the owning DC"},
    {"R43", "T", T, false,
     "RecycleCreateCommandList only on Recycled, for the DC whose cache holds it"},
    {"R44", "T", T, false,
     "DestroyCommandList from Valid/RecycleDestroyed/Recycled, once, never after a failed create"},
    {"R45", "T", T, false, "no RecycleDestroyed -> Valid shortcut without RecycleCommandList"},
    {"R46", "T", T, false, "the RecycleCommandList loop precedes Create/RecycleCreateCommandList"},
    {"R47", "D", D, false, "a new or recycled DC starts in the cleared state"},
    {"R48", "T", T, false,
     "RecycleCreateDeferredContext only after Abandon/Create/RecycleCreateCommandList; "
     "DC DestroyDevice also on an idle recording DC"},
    {"R49", "D", D, false, "state refresh during Finish reports the documented bindings"},
    {"R50", "D", D, false, "closed local handles that still look bound are never dereferenced"},
    {"R51", "T", T, false, "abandon path order: Abandon, unbinds, closes, recycle/destroy"},
    {"R52", "T", T, false, "queries ended and dynamic resources unmapped before the CL is made"},
    {"R53", "T", T, false, "no DC rendering DDI on a closed or abandoned DC"},
    {"R54", "T", T, false, "the IC handle outlives every DC-local handle of the object"},
    {"R55", "T", T, false, "local resource opened before and closed after its local views"},
    {"R56", "V", T, false,
     "local opens: NULL args for dependency-free objects, HRT slot = IC driver handle"},
    {"R57", "T", T, false, "DC DDIs take only handles open on that DC (RecycleCommandList: IC)"},
    {"R58", "T", T, false, "each recording re-opens on first use, at most once per recording"},
    {"R59", "T", T, false, "DC CommandListExecute: open local CL handle whose IC CL is Valid"},
    {"R60", "D", D, false, "the executing context is cleared after CommandListExecute"},
    {"R61", "T", T, false, "no execution of a CL whose query is only begun on the target"},
    {"R62", "T", T, false, "no execution of a CL whose mapped resource is mapped on the target"},
    {"R63", "T", T, false, "query begin/end pairs never span contexts or a CL boundary"},
    {"R64", "T", T, false,
     "DC maps are discard/no-overwrite on dynamic resources, the first one a discard"},
    {"R65", "T", T, false,
     "QueryGetData, Flush, ResourceIsStagingBusy, staging maps, SetResourceMinLOD never on a DC"},
    {"R66", "D", D, false, "executing a CL shows its last discard contents (renaming)"},
    {"R66a", "D", D, false, "CLs follow Present's back-buffer identity rotation"},
    {"R67", "T", T, false, "pfnDeallocateCb only after the pfnRenderCb that submitted its users"},
    {"R68", "T", T, false, "every Flush deallocates the shared resources destroyed before it"},
    {"R69", "T", T, false, "non-shared primaries are deallocated inside DestroyResource"},
    {"R70", "T", T, false, "no deferred destruction left when IC DestroyDevice returns"},
    {"R71", "T", T, true, "pfnPerformAmortizedProcessingCb at roughly IC submit cadence"},
    {"R72", "T", T, true, "a long DC recording calls pfnPerformAmortizedProcessingCb"},
    {"R73", "T", T, false, "the runtime destroys only objects not bound to any context"},
    {"R74", "T/V", T, false,
     "pfnCreateContextCb before any pfnRenderCb; submissions fit the current buffers"},
    {"R75", "V", T, false, "one fence id per DMA buffer in Patch/SubmitCommand, increasing"},
    {"R76", "T", T, false, "a DMA buffer is patched before it is submitted"},
    {"R77", "T", T, false,
     "ISR: NotifyInterrupt(DMA_COMPLETED) then QueueDpc; DMA before CRTC notifications"},
    {"R78", "V", T, false, "patch-location SplitOffset values are non-decreasing"},
    {"R79", "V", T, false, "DX6 buffer swap flags and vertex-buffer memory placement"},
    {"R80", "V", T, false, "D3dDrawPrimitives2 stays in bounds and reports dwErrorOffset"},
};

static_assert(sizeof(kRules) / sizeof(kRules[0]) <= kMaxRules, "raise kMaxRules");

}  // namespace

absl::Span<const RuleInfo> Rules() { return absl::MakeConstSpan(kRules); }

const RuleInfo* FindRule(absl::string_view id) {
  for (const RuleInfo& r : kRules)
    if (id == r.id) return &r;
  return nullptr;
}

int RuleIndex(const RuleInfo& rule) { return static_cast<int>(&rule - kRules); }

absl::StatusOr<RuleSet> ParseRuleList(absl::string_view list) {
  RuleSet set;
  for (absl::string_view part : absl::StrSplit(list, ',', absl::SkipWhitespace())) {
    part = absl::StripAsciiWhitespace(part);
    std::string upper = absl::AsciiStrToUpper(part);
    // Accept "r40" as well as "R40"; the sub-rule letter stays lower case ("R5a").
    if (!upper.empty() && upper.back() == 'A') upper.back() = 'a';
    const RuleInfo* rule = FindRule(upper);
    if (rule == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("--rules: unknown rule \"", part, "\""));
    }
    set.set(RuleIndex(*rule));
  }
  if (set.none()) return absl::InvalidArgumentError("--rules: empty rule list");
  return set;
}

RuleSet AllTraceRules() {
  RuleSet set;
  for (const RuleInfo& r : kRules)
    if (r.enforcement == Enforcement::kTrace) set.set(RuleIndex(r));
  return set;
}

}  // namespace cltrace::check
