// Occupancy calculator over the sim's fixed kernel figures (32 registers/thread, no static
// shared memory) and an sm_90 SM: 2048 threads, 32 blocks, 64K registers, 228 KiB shared memory.
#include "api.hpp"

namespace cuparity::sim {

// blocks = min(32 blocks, 2048 / threads, 65536 / (threads * 32 regs),
//              233472 / (dynamic smem + 1 KiB reserved per block)), threads rounded up to a warp.
int blocks_per_sm(const function_state &f, int block_size, std::size_t dynamic_smem) {
  if (block_size <= 0 || block_size > 1024 ||
      dynamic_smem > static_cast<std::size_t>(f.max_dynamic_shared))
    return 0;
  const int threads = (block_size + 31) / 32 * 32;
  int blocks = std::min(32, 2048 / threads);
  blocks = std::min(blocks, 65536 / (threads * sim_num_regs));
  if (dynamic_smem > 0)
    blocks = std::min(blocks, static_cast<int>(233472 / (dynamic_smem + 1024)));
  return blocks;
}

} // namespace cuparity::sim

using namespace cuparity::sim;

namespace {

CUresult max_active_blocks(int *numBlocks, CUfunction func, int blockSize, size_t smem,
                           unsigned flags) {
  if (CUresult r = check_init())
    return r;
  if (numBlocks == nullptr || blockSize <= 0 || (flags & ~CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE))
    return CUDA_ERROR_INVALID_VALUE;
  auto f = find_function(func);
  if (!f)
    return CUDA_ERROR_INVALID_HANDLE;
  *numBlocks = blocks_per_sm(*f, blockSize, smem);
  return CUDA_SUCCESS;
}

CUresult max_potential_block_size(int *minGridSize, int *blockSize, CUfunction func,
                                  CUoccupancyB2DSize b2d, size_t smem, int limit, unsigned flags) {
  if (CUresult r = check_init())
    return r;
  if (minGridSize == nullptr || blockSize == nullptr || limit < 0 ||
      (flags & ~CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE))
    return CUDA_ERROR_INVALID_VALUE;
  auto f = find_function(func);
  if (!f)
    return CUDA_ERROR_INVALID_HANDLE;
  const int top = limit == 0 ? 1024 : std::min(limit, 1024);
  int best_size = 0;
  int best_blocks = 0;
  // From the largest block size down, keeping the first that maximises resident threads.
  for (int size = top; size > 0; size = (size - 1) / 32 * 32) {
    const std::size_t dyn = b2d != nullptr ? b2d(size) : smem;
    const int blocks = blocks_per_sm(*f, size, dyn);
    if (blocks * size > best_blocks * best_size) {
      best_size = size;
      best_blocks = blocks;
    }
  }
  *blockSize = best_size;
  *minGridSize = best_blocks * sim_sm_count;
  return CUDA_SUCCESS;
}

} // namespace

CUPARITY_SIM_API(cuOccupancyMaxActiveBlocksPerMultiprocessor,
                 (int *numBlocks, CUfunction func, int blockSize, size_t dynamicSMemSize),
                 (numBlocks, func, blockSize, dynamicSMemSize), bump(numBlocks)) {
  return max_active_blocks(numBlocks, func, blockSize, dynamicSMemSize, 0);
}
CUPARITY_SIM_API(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags,
                 (int *numBlocks, CUfunction func, int blockSize, size_t dynamicSMemSize,
                  unsigned int flags),
                 (numBlocks, func, blockSize, dynamicSMemSize, flags), bump(numBlocks)) {
  return max_active_blocks(numBlocks, func, blockSize, dynamicSMemSize, flags);
}
CUPARITY_SIM_API(cuOccupancyMaxPotentialBlockSize,
                 (int *minGridSize, int *blockSize, CUfunction func,
                  CUoccupancyB2DSize blockSizeToDynamicSMemSize, size_t dynamicSMemSize,
                  int blockSizeLimit),
                 (minGridSize, blockSize, func, blockSizeToDynamicSMemSize, dynamicSMemSize,
                  blockSizeLimit),
                 bump(blockSize)) {
  return max_potential_block_size(minGridSize, blockSize, func, blockSizeToDynamicSMemSize,
                                  dynamicSMemSize, blockSizeLimit, 0);
}
CUPARITY_SIM_API(cuOccupancyMaxPotentialBlockSizeWithFlags,
                 (int *minGridSize, int *blockSize, CUfunction func,
                  CUoccupancyB2DSize blockSizeToDynamicSMemSize, size_t dynamicSMemSize,
                  int blockSizeLimit, unsigned int flags),
                 (minGridSize, blockSize, func, blockSizeToDynamicSMemSize, dynamicSMemSize,
                  blockSizeLimit, flags),
                 bump(blockSize)) {
  return max_potential_block_size(minGridSize, blockSize, func, blockSizeToDynamicSMemSize,
                                  dynamicSMemSize, blockSizeLimit, flags);
}
