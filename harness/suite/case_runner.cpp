// run_case: executes a case body and classifies its end.
#include "harness/suite/case_runner.hpp"

#include "harness/driver/driver_error.hpp"
#include "harness/suite/case_context.hpp"

#include <chrono>

namespace cuparity {

bool is_sticky_error(CUresult code) noexcept {
  switch (code) {
  case CUDA_ERROR_ILLEGAL_ADDRESS:
  case CUDA_ERROR_LAUNCH_TIMEOUT:
  case CUDA_ERROR_HARDWARE_STACK_ERROR:
  case CUDA_ERROR_ILLEGAL_INSTRUCTION:
  case CUDA_ERROR_MISALIGNED_ADDRESS:
  case CUDA_ERROR_INVALID_ADDRESS_SPACE:
  case CUDA_ERROR_INVALID_PC:
  case CUDA_ERROR_LAUNCH_FAILED:
  case CUDA_ERROR_ECC_UNCORRECTABLE:
  case CUDA_ERROR_CONTEXT_IS_DESTROYED:
    return true;
  default:
    return false;
  }
}

case_result run_case(const case_def &def, driver &d, const effective_config &config) {
  case_result r;
  r.id = def.id;
  case_context ctx(d, config, def);
  auto start = std::chrono::steady_clock::now();
  try {
    def.body(ctx);
    r.result = outcome::pass;
  } catch (const case_failed &e) {
    r.result = outcome::fail;
    r.message = e.what();
  } catch (const case_not_supported &e) {
    r.result = outcome::not_supported;
    r.message = e.what();
  } catch (const driver_error &e) {
    r.message = e.what();
    if (e.code() == CUDA_ERROR_OUT_OF_MEMORY)
      r.result = outcome::resource_error;
    else if (e.code() == CUDA_ERROR_NOT_SUPPORTED && !e.missing_function())
      r.result = outcome::not_supported;
    else if (e.not_bound()) // the captured package binds no such function: nothing to check
      r.result = outcome::not_supported;
    else
      r.result = outcome::fail;
    if (is_sticky_error(e.code()))
      r.poisoned = true;
  } catch (const std::exception &e) {
    r.result = outcome::error;
    r.message = std::string("harness error: ") + e.what();
  } catch (...) {
    r.result = outcome::error;
    r.message = "harness error: unknown exception";
  }
  r.duration_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  r.observations = ctx.observations();
  r.poisoned = r.poisoned || ctx.poisoned();
  return r;
}

} // namespace cuparity
