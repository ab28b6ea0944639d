// Contexts: primary contexts with reference counts, created contexts and the per-thread stack.
#include "api.hpp"

namespace cuparity::sim {

std::vector<context *> &thread_stack() {
  thread_local std::vector<context *> stack;
  return stack;
}

context *primary_context(int device) {
  // One object per possible ordinal, made once; it stays inactive until the first retain.
  static context *primaries[64] = {};
  static std::once_flag once;
  std::call_once(once, [] {
    for (int i = 0; i < 64; ++i) {
      primaries[i] = new_context(i, 0, true);
      primaries[i]->state.store(context::life::inactive);
    }
  });
  return primaries[device];
}

void teardown_context(context *c) {
  synchronize_context(c);
  drop_context_streams(c);
  free_context_memory(c);
  unload_context_modules(c);
  std::lock_guard lock(g_state_mutex);
  c->peers.clear();
  c->epoch.fetch_add(1);
}

namespace {

// CU_CTX_SCHED_* is a 3-bit value (0, 1, 2 or 4); the other bits are independent flags.
bool valid_ctx_flags(unsigned flags) {
  if ((flags & ~static_cast<unsigned>(CU_CTX_FLAGS_MASK)) != 0)
    return false;
  const unsigned sched = flags & CU_CTX_SCHED_MASK;
  return sched == CU_CTX_SCHED_AUTO || sched == CU_CTX_SCHED_SPIN || sched == CU_CTX_SCHED_YIELD ||
         sched == CU_CTX_SCHED_BLOCKING_SYNC;
}

CUresult create_context(CUcontext *pctx, unsigned flags, CUdevice dev) {
  if (CUresult r = check_init())
    return r;
  if (pctx == nullptr || !valid_ctx_flags(flags))
    return CUDA_ERROR_INVALID_VALUE;
  if (!valid_device(dev))
    return CUDA_ERROR_INVALID_DEVICE;
  context *c = new_context(dev, flags, false);
  thread_stack().push_back(c);
  *pctx = to_handle(c);
  return CUDA_SUCCESS;
}

CUresult check_affinity(const CUexecAffinityParam *params, int count) {
  if (count < 0 || (count > 0 && params == nullptr))
    return CUDA_ERROR_INVALID_VALUE;
  for (int i = 0; i < count; ++i) {
    if (params[i].type != CU_EXEC_AFFINITY_TYPE_SM_COUNT)
      return CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY;
    // Accepted and ignored: the sim has no SM partitioning to apply it to.
  }
  return CUDA_SUCCESS;
}

CUresult device_of(CUcontext ctx, CUdevice *device) {
  if (CUresult r = check_init())
    return r;
  if (device == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  context *c = nullptr;
  if (CUresult r = ctx == nullptr ? current_context(c) : checked_context(ctx, c))
    return r;
  *device = c->device;
  return CUDA_SUCCESS;
}

CUresult synchronize(CUcontext ctx) {
  if (CUresult r = check_init())
    return r;
  context *c = nullptr;
  if (CUresult r = ctx == nullptr ? current_context(c) : checked_context(ctx, c))
    return r;
  synchronize_context(c);
  return CUDA_SUCCESS;
}

CUresult destroy_context(CUcontext ctx) {
  if (CUresult r = check_init())
    return r;
  context *c = from_handle(ctx);
  // Primary contexts are released, not destroyed (unverified which code libcuda returns).
  if (c == nullptr || c->primary || c->state.load() != context::life::alive)
    return CUDA_ERROR_INVALID_CONTEXT;
  teardown_context(c);
  c->state.store(context::life::destroyed);
  auto &stack = thread_stack();
  if (!stack.empty() && stack.back() == c)
    stack.pop_back();
  return CUDA_SUCCESS;
}

CUresult push_context(CUcontext ctx) {
  if (CUresult r = check_init())
    return r;
  context *c = nullptr;
  if (CUresult r = checked_context(ctx, c))
    return r;
  thread_stack().push_back(c);
  return CUDA_SUCCESS;
}

CUresult pop_context(CUcontext *pctx) {
  if (CUresult r = check_init())
    return r;
  auto &stack = thread_stack();
  if (stack.empty())
    return CUDA_ERROR_INVALID_CONTEXT;
  if (pctx != nullptr)
    *pctx = to_handle(stack.back());
  stack.pop_back();
  return CUDA_SUCCESS;
}

CUresult primary_release(CUdevice dev) {
  if (CUresult r = check_init())
    return r;
  if (!valid_device(dev))
    return CUDA_ERROR_INVALID_DEVICE;
  context *p = primary_context(dev);
  {
    std::lock_guard lock(g_state_mutex);
    // Releasing more often than retained: unverified which code libcuda returns.
    if (p->primary_refcount == 0)
      return CUDA_ERROR_INVALID_CONTEXT;
    if (--p->primary_refcount > 0)
      return CUDA_SUCCESS;
  }
  teardown_context(p);
  p->state.store(context::life::inactive);
  return CUDA_SUCCESS;
}

CUresult primary_reset(CUdevice dev) {
  if (CUresult r = check_init())
    return r;
  if (!valid_device(dev))
    return CUDA_ERROR_INVALID_DEVICE;
  context *p = primary_context(dev);
  teardown_context(p);
  std::lock_guard lock(g_state_mutex);
  p->primary_refcount = 0;
  p->state.store(context::life::inactive);
  return CUDA_SUCCESS;
}

CUresult primary_set_flags(CUdevice dev, unsigned flags, bool allow_active) {
  if (CUresult r = check_init())
    return r;
  if (!valid_device(dev))
    return CUDA_ERROR_INVALID_DEVICE;
  if (!valid_ctx_flags(flags))
    return CUDA_ERROR_INVALID_VALUE;
  context *p = primary_context(dev);
  std::lock_guard lock(g_state_mutex);
  // The 7000 ABI refused to change an active primary context; the 11000 ABI allows it.
  if (!allow_active && p->primary_refcount > 0)
    return CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE;
  p->flags = flags;
  return CUDA_SUCCESS;
}

} // namespace
} // namespace cuparity::sim

using namespace cuparity::sim;

// ---- primary context

CUPARITY_SIM_API(cuDevicePrimaryCtxRetain, (CUcontext * pctx, CUdevice dev), (pctx, dev), (void)0) {
  if (CUresult r = check_init())
    return r;
  if (pctx == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  if (!valid_device(dev))
    return CUDA_ERROR_INVALID_DEVICE;
  context *p = primary_context(dev);
  std::lock_guard lock(g_state_mutex);
  if (p->primary_refcount++ == 0)
    p->state.store(context::life::alive);
  *pctx = to_handle(p);
  return CUDA_SUCCESS;
}

CUPARITY_SIM_API(cuDevicePrimaryCtxRelease, (CUdevice dev), (dev), (void)0) {
  return primary_release(dev);
}
CUPARITY_SIM_API(cuDevicePrimaryCtxRelease_v2, (CUdevice dev), (dev), (void)0) {
  return primary_release(dev);
}
CUPARITY_SIM_API(cuDevicePrimaryCtxReset, (CUdevice dev), (dev), (void)0) {
  return primary_reset(dev);
}
CUPARITY_SIM_API(cuDevicePrimaryCtxReset_v2, (CUdevice dev), (dev), (void)0) {
  return primary_reset(dev);
}
CUPARITY_SIM_API(cuDevicePrimaryCtxSetFlags, (CUdevice dev, unsigned int flags), (dev, flags),
                 (void)0) {
  return primary_set_flags(dev, flags, false);
}
CUPARITY_SIM_API(cuDevicePrimaryCtxSetFlags_v2, (CUdevice dev, unsigned int flags), (dev, flags),
                 (void)0) {
  return primary_set_flags(dev, flags, true);
}

CUPARITY_SIM_API(cuDevicePrimaryCtxGetState, (CUdevice dev, unsigned int *flags, int *active),
                 (dev, flags, active), bump(flags)) {
  if (CUresult r = check_init())
    return r;
  if (flags == nullptr || active == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  if (!valid_device(dev))
    return CUDA_ERROR_INVALID_DEVICE;
  context *p = primary_context(dev);
  std::lock_guard lock(g_state_mutex);
  *flags = p->flags;
  *active = p->primary_refcount > 0 ? 1 : 0;
  return CUDA_SUCCESS;
}

// ---- created contexts

CUPARITY_SIM_API(cuCtxCreate, (CUcontext * pctx, unsigned int flags, CUdevice dev),
                 (pctx, flags, dev), (void)0) {
  return create_context(pctx, flags, dev);
}
CUPARITY_SIM_API(cuCtxCreate_v2, (CUcontext * pctx, unsigned int flags, CUdevice dev),
                 (pctx, flags, dev), (void)0) {
  return create_context(pctx, flags, dev);
}
CUPARITY_SIM_API(cuCtxCreate_v3,
                 (CUcontext * pctx, CUexecAffinityParam *paramsArray, int numParams,
                  unsigned int flags, CUdevice dev),
                 (pctx, paramsArray, numParams, flags, dev), (void)0) {
  if (CUresult r = check_init())
    return r;
  if (CUresult r = check_affinity(paramsArray, numParams))
    return r;
  return create_context(pctx, flags, dev);
}
// A NULL or zeroed params struct behaves like _v2 (what cuda-samples rely on); CIG (sharing a
// graphics API's context) has no CPU meaning and reports CUDA_ERROR_NOT_SUPPORTED.
CUPARITY_SIM_API(cuCtxCreate_v4,
                 (CUcontext * pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags,
                  CUdevice dev),
                 (pctx, ctxCreateParams, flags, dev), (void)0) {
  if (CUresult r = check_init())
    return r;
  if (ctxCreateParams != nullptr) {
    if (ctxCreateParams->cigParams != nullptr)
      return CUDA_ERROR_NOT_SUPPORTED;
    if (CUresult r = check_affinity(ctxCreateParams->execAffinityParams,
                                    ctxCreateParams->numExecAffinityParams))
      return r;
  }
  return create_context(pctx, flags, dev);
}

CUPARITY_SIM_API(cuCtxDestroy, (CUcontext ctx), (ctx), (void)0) {
  return destroy_context(ctx);
}
CUPARITY_SIM_API(cuCtxDestroy_v2, (CUcontext ctx), (ctx), (void)0) {
  return destroy_context(ctx);
}
CUPARITY_SIM_API(cuCtxPushCurrent, (CUcontext ctx), (ctx), (void)0) {
  return push_context(ctx);
}
CUPARITY_SIM_API(cuCtxPushCurrent_v2, (CUcontext ctx), (ctx), (void)0) {
  return push_context(ctx);
}
CUPARITY_SIM_API(cuCtxPopCurrent, (CUcontext * pctx), (pctx), (void)0) {
  return pop_context(pctx);
}
CUPARITY_SIM_API(cuCtxPopCurrent_v2, (CUcontext * pctx), (pctx), (void)0) {
  return pop_context(pctx);
}

CUPARITY_SIM_API(cuCtxGetCurrent, (CUcontext * pctx), (pctx), (void)0) {
  if (CUresult r = check_init())
    return r;
  if (pctx == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  const auto &stack = thread_stack();
  *pctx = stack.empty() ? nullptr : to_handle(stack.back());
  return CUDA_SUCCESS;
}

CUPARITY_SIM_API(cuCtxSetCurrent, (CUcontext ctx), (ctx), (void)0) {
  if (CUresult r = check_init())
    return r;
  auto &stack = thread_stack();
  if (ctx == nullptr) {
    if (!stack.empty())
      stack.pop_back();
    return CUDA_SUCCESS;
  }
  context *c = nullptr;
  if (CUresult r = checked_context(ctx, c))
    return r;
  if (stack.empty())
    stack.push_back(c);
  else
    stack.back() = c;
  return CUDA_SUCCESS;
}

CUPARITY_SIM_API(cuCtxGetDevice, (CUdevice * device), (device), bump(device)) {
  return device_of(nullptr, device);
}
// CUDA 13: a new function (not an ABI revision) taking the context to ask about; NULL = current.
CUPARITY_SIM_API(cuCtxGetDevice_v2, (CUdevice * device, CUcontext ctx), (device, ctx),
                 bump(device)) {
  return device_of(ctx, device);
}

CUPARITY_SIM_API(cuCtxSynchronize, (void), (), (void)0) {
  return synchronize(nullptr);
}
CUPARITY_SIM_API(cuCtxSynchronize_v2, (CUcontext ctx), (ctx), (void)0) {
  return synchronize(ctx);
}

CUPARITY_SIM_API(cuCtxEnablePeerAccess, (CUcontext peerContext, unsigned int Flags),
                 (peerContext, Flags), (void)0) {
  if (CUresult r = check_init())
    return r;
  context *self = nullptr;
  if (CUresult r = current_context(self))
    return r;
  if (Flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  context *peer = nullptr;
  if (CUresult r = checked_context(peerContext, peer))
    return r;
  if (peer->device == self->device)
    return CUDA_ERROR_INVALID_DEVICE;
  std::lock_guard lock(g_state_mutex);
  if (!self->peers.insert(peer->device).second)
    return CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
  return CUDA_SUCCESS;
}

CUPARITY_SIM_API(cuCtxDisablePeerAccess, (CUcontext peerContext), (peerContext), (void)0) {
  if (CUresult r = check_init())
    return r;
  context *self = nullptr;
  if (CUresult r = current_context(self))
    return r;
  context *peer = nullptr;
  if (CUresult r = checked_context(peerContext, peer))
    return r;
  std::lock_guard lock(g_state_mutex);
  if (self->peers.erase(peer->device) == 0)
    return CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
  return CUDA_SUCCESS;
}

// Least priority 0, greatest -5 (numerically lower is higher priority), as on sm_90.
CUPARITY_SIM_API(cuCtxGetStreamPriorityRange, (int *leastPriority, int *greatestPriority),
                 (leastPriority, greatestPriority), bump(leastPriority)) {
  if (CUresult r = check_init())
    return r;
  if (leastPriority != nullptr)
    *leastPriority = 0;
  if (greatestPriority != nullptr)
    *greatestPriority = -5;
  return CUDA_SUCCESS;
}
