# Writes tests/replay/small_cl.jsonl (see tests/replay/README.md) and, with `--names`,
# corpus/jsonl/recycle_session.jsonl: the same trace with the resources and the command list
# named "src", "dst" and "cl1" instead of by value (pICObject takes a handle's token).
#   python3 tests/replay/make_small_cl.py tests/replay/small_cl.jsonl
#   python3 tests/replay/make_small_cl.py --names corpus/jsonl/recycle_session.jsonl
# The values marked as
# the reference driver's answers (sizes, callback arguments, command lengths) must match the
# driver the trace is replayed into.
import json
import sys

# The reference driver's answers this trace records.
DEVICE_SIZE = 9024          # CalcPrivateDeviceSize
RESOURCE_SIZE = 152         # CalcPrivateResourceSize (256-byte buffer)
DC_SIZE = 9176              # CalcPrivateDeferredContextSize
CL_SIZE = 392               # CalcPrivateCommandListSize
LOCAL_SIZE = 32             # CalcDeferredContextHandleSize, CheckDeferredContextHandleSizes
ENGINE_AFFINITY = 1         # CreateContextCb input
ALLOC_PRIVATE_SIZE = 24     # AllocateCb pAllocationInfo[].PrivateDriverDataSize input
FLUSH_COMMAND_LENGTH = 904  # RenderCb inside Flush
FLUSH_PATCH_LOCATIONS = 4

out = []
seq = [0]
def call(tid, fn, args, ret=None, parent=None, kids=()):
    seq[0] += 10
    s = seq[0]
    d = {"seq": s, "tid": tid, "fn": fn, "args": args}
    if ret is not None: d["ret"] = ret
    if parent: d["parent"] = parent
    out.append(d)
    for k in kids:
        k(s)
    return s
def cb(fn, args, ret=None, kids=()):
    def f(parent):
        tid = [o for o in out if o["seq"] == parent][0]["tid"]
        call(tid, fn, args, ret, parent, kids)
    return f
def ddi(fn, args, ret=None, kids=()):
    return cb(fn, args, ret, kids)

IC = "ic"; DC = "dc1"
hs = [{"DriverPrivateSize":LOCAL_SIZE}] + [{"HandleType":t,"DriverPrivateSize":LOCAL_SIZE} for t in [
 "D3D10DDI_HT_SHADERRESOURCEVIEW","D3D10DDI_HT_RENDERTARGETVIEW","D3D10DDI_HT_DEPTHSTENCILVIEW",
 "D3D10DDI_HT_SHADER","D3D10DDI_HT_ELEMENTLAYOUT","D3D10DDI_HT_BLENDSTATE","D3D10DDI_HT_DEPTHSTENCILSTATE",
 "D3D10DDI_HT_RASTERIZERSTATE","D3D10DDI_HT_SAMPLERSTATE","D3D10DDI_HT_QUERY","D3D11DDI_HT_COMMANDLIST",
 "D3D11DDI_HT_UNORDEREDACCESSVIEW"]]
buf = {"ResourceDimension":"D3D10DDIRESOURCE_BUFFER","BindFlags":"D3D10_DDI_BIND_SHADER_RESOURCE","MipLevels":1,"ArraySize":1,"SampleDesc.Count":1,"pMipInfoList":[{"TexelWidth":256,"TexelHeight":1,"TexelDepth":1,"PhysicalWidth":256,"PhysicalHeight":1,"PhysicalDepth":1}]}
def refresh(core, dev):
    return [cb("StateOmRenderTargetsCb", {"hRuntimeDevice": core}, kids=[ddi("SetRenderTargets", {"hDevice": dev, "RTVNumbertoUnbind": 8, "UAVIndex": 8})]),
            cb("StateIaVertexBufCb", {"hRuntimeDevice": core, "Count": 4294967295}),
            cb("StateVsShaderCb", {"hRuntimeDevice": core}, kids=[ddi("VsSetShader", {"hDevice": dev})])]

call(1, "GetCaps", {"hAdapter":"adapter","Type":"D3D11DDICAPS_THREADING","pData":"0x1000","pInfo":[5],"DataSize":4}, "S_OK")
call(1, "CalcPrivateDeviceSize", {"hAdapter":"adapter","Interface":720897,"Version":4}, DEVICE_SIZE)
call(1, "CreateDevice", {"hAdapter":"adapter","hRTDevice":"rtdev","Interface":720897,"Version":4,"pKTCallbacks":"0x2000","p11DeviceFuncs":"0x3000","hDrvDevice":IC,"pDXGIBaseDDI":"0x4000","hRTCoreLayer":"rtcore.ic","p11UMCallbacks":"0x5000"}, "S_OK",
     kids=[cb("CreateContextCb", {"hDevice":"rtdev","EngineAffinity":ENGINE_AFFINITY,"hContext":"0x1","pCommandBuffer":"0xb0000","CommandBufferSize":65536,"pAllocationList":"0xb1000","AllocationListSize":512,"pPatchLocationList":"0xb2000","PatchLocationListSize":512}, "S_OK"),
           cb("DisableDeferredStagingResourceDestruction", {"hRuntimeDevice":"rtcore.ic"})])
call(1, "CheckDeferredContextHandleSizes", {"hDevice":IC,"pHSizesOut":13})
call(1, "CheckDeferredContextHandleSizes", {"hDevice":IC,"pHSizes":13,"pHSizesOut":13,"pHandleSize":hs})
for n, (h, rt, alloc) in enumerate([("0xa001","rtsrc","0x1"),("0xa002","rtdst","0x2")]):
    call(1, "CalcPrivateResourceSize", dict(hDevice=IC, **buf), RESOURCE_SIZE)
    call(1, "CreateResource", dict(hDevice=IC, **buf, hResource=h, hRTResource=rt),
         kids=[cb("AllocateCb", {"hDevice":"rtdev","hResource":rt,"hKMResource":alloc,"NumAllocations":1,"pAllocationInfo":[{"hAllocation":alloc,"PrivateDriverDataSize":ALLOC_PRIVATE_SIZE}]}, "S_OK")])
    call(1, "CalcDeferredContextHandleSize", {"hDevice":IC,"pICObject":h}, LOCAL_SIZE)
call(2, "CalcPrivateDeferredContextSize", {"pCalcPrivateDeferredContextSize":True,"hDevice":IC}, DC_SIZE)
call(2, "CreateDeferredContext", {"hDevice":IC,"p11ContextFuncs":"0x6000","hDrvContext":DC,"hRTCoreLayer":"rtcore.dc1","p11UMCallbacks":"0x7000"})
def record_copy():
    call(2, "CreateResource", {"hDevice":DC,"pCreateResource":None,"hResource":"dc1.dst","hRTResource":"0xa002"})
    call(2, "CreateResource", {"hDevice":DC,"pCreateResource":None,"hResource":"dc1.src","hRTResource":"0xa001"})
    call(2, "ResourceCopy", {"hDevice":DC,"hDstResource":"dc1.dst","hSrcResource":"dc1.src"})
def close_and_recycle_dc():
    call(2, "DestroyResource", {"hDevice":DC,"hResource":"dc1.src"})
    call(2, "DestroyResource", {"hDevice":DC,"hResource":"dc1.dst"})
    call(2, "RecycleCreateDeferredContext", {"hDevice":IC,"p11ContextFuncs":"0x6000","hDrvContext":DC,"hRTCoreLayer":"rtcore.dc1","p11UMCallbacks":"0x7000"}, "S_OK", kids=refresh("rtcore.dc1", DC))
record_copy()
call(2, "CalcPrivateCommandListSize", {"hDevice":IC,"hDeferredContext":DC}, CL_SIZE)
call(2, "CreateCommandList", {"hDevice":IC,"hDeferredContext":DC,"hCommandList":"0xc001","hRTCommandList":"rtcl1"}, kids=refresh("rtcore.dc1", DC))
call(2, "CalcDeferredContextHandleSize", {"hDevice":IC,"HandleType":"D3D11DDI_HT_COMMANDLIST","pICObject":"0xc001"}, LOCAL_SIZE)
close_and_recycle_dc()
call(1, "CommandListExecute", {"hDevice":IC,"hCommandList":"0xc001"}, kids=refresh("rtcore.ic", IC))
call(1, "RecycleDestroyCommandList", {"hDevice":IC,"hCommandList":"0xc001"})
record_copy()
call(2, "RecycleCommandList", {"hDevice":DC,"hCommandList":"0xc001"})
call(2, "RecycleCreateCommandList", {"hDevice":IC,"hDeferredContext":DC,"hCommandList":"0xc001","hRTCommandList":"rtcl2"}, "S_OK", kids=refresh("rtcore.dc1", DC))
close_and_recycle_dc()
call(1, "CommandListExecute", {"hDevice":IC,"hCommandList":"0xc001"}, kids=refresh("rtcore.ic", IC))
call(2, "AbandonCommandList", {"hDevice":DC})
call(2, "DestroyDevice", {"hDevice":DC})
call(1, "DestroyCommandList", {"hDevice":IC,"hCommandList":"0xc001"})
core = "rtcore.ic"
def st(fn, extra=None, kid=None):
    a = {"hRuntimeDevice": core}
    if extra: a.update(extra)
    return cb(fn, a, kids=[ddi(kid[0], dict(hDevice=IC, **kid[1]))] if kid else [])
ALL = {"Count": 4294967295}
call(1, "Flush", {"hDevice":IC}, 1, kids=[
    cb("RenderCb", {"hDevice":"rtdev","CommandLength":FLUSH_COMMAND_LENGTH,"NumAllocations":2,"NumPatchLocations":FLUSH_PATCH_LOCATIONS,"pNewCommandBuffer":"0xb3000","NewCommandBufferSize":65536,"NewCommandBufferSizeOut":65536,"pNewAllocationList":"0xb4000","NewAllocationListSize":512,"NewAllocationListSizeOut":512,"pNewPatchLocationList":"0xb5000","NewPatchLocationListSize":512,"NewPatchLocationListSizeOut":512,"hContext":"0x1"}, "S_OK"),
    cb("PerformAmortizedProcessingCb", {"hRuntimeDevice": core}),
    st("StateIaInputLayoutCb", kid=("IaSetInputLayout", {})),
    st("StateIaVertexBufCb", ALL),
    st("StateIaIndexBufCb", kid=("IaSetIndexBuffer", {})),
    st("StateIaPrimitiveTopologyCb", kid=("IaSetTopology", {})),
    st("StateVsShaderCb", kid=("VsSetShader", {})),
    st("StatePsShaderCb", kid=("PsSetShader", {})),
    st("StateVsConstBufCb", ALL), st("StatePsConstBufCb", ALL), st("StatePsSrvCb", ALL), st("StatePsSamplerCb", ALL),
    st("StateOmRenderTargetsCb", kid=("SetRenderTargets", {"RTVNumbertoUnbind": 8, "UAVIndex": 8})),
    st("StateOmBlendStateCb", kid=("SetBlendState", {"pBlendFactor": [1, 1, 1, 1], "SampleMask": 4294967295})),
    st("StateOmDepthStateCb", kid=("SetDepthStencilState", {})),
    st("StateRsRastStateCb", kid=("SetRasterizerState", {})),
    st("StateRsViewportsCb", kid=("SetViewports", {"ClearViewports": 16})),
    st("StateRsScissorCb", kid=("SetScissorRects", {"ClearScissorRects": 16}))])
call(1, "DestroyResource", {"hDevice":IC,"hResource":"0xa001"})
call(1, "DestroyResource", {"hDevice":IC,"hResource":"0xa002"})
call(1, "DestroyDevice", {"hDevice":IC}, kids=[
    cb("DeallocateCb", {"hDevice":"rtdev","NumAllocations":1,"HandleList":["0x1"]}, "S_OK"),
    cb("DeallocateCb", {"hDevice":"rtdev","NumAllocations":1,"HandleList":["0x2"]}, "S_OK"),
    cb("DestroyContextCb", {"hDevice":"rtdev","hContext":"0x1"}, "S_OK")])
call(1, "CloseAdapter", {"hAdapter":"adapter"}, "S_OK")
out.sort(key=lambda d: d["seq"])
names = sys.argv[1] == "--names"
with open(sys.argv[-1], "w") as f:
    for d in out:
        line = json.dumps(d, separators=(",", ":"))
        if names:
            for value, name in (("0xa001", "src"), ("0xa002", "dst"), ("0xc001", "cl1")):
                line = line.replace('"%s"' % value, '"%s"' % name)
        f.write(line + "\n")
