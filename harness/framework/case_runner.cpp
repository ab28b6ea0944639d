// run_case: checks a case's requirements, executes its body and classifies its end.
#include "harness/framework/case_runner.hpp"

#include "harness/driver/driver_error.hpp"
#include "harness/framework/case_context.hpp"

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

namespace {

/// The requirement check; true when the body may run. A query the check needs that the driver
/// refuses fails the case: what the cell supports cannot be decided.
bool requirements_hold(const case_def &def, cell_facts &facts, case_result &r) {
  try {
    const auto unmet = first_unmet(def.needs, facts);
    if (!unmet)
      return true;
    r.result = unmet->failure ? outcome::fail : outcome::not_supported;
    r.message = unmet->message;
    r.requirement = unmet->requirement;
  } catch (const driver_error &e) {
    r.result = outcome::fail;
    r.message = std::string("checking the case's requirements: ") + e.what();
  } catch (const std::exception &e) {
    r.result = outcome::error;
    r.message = std::string("harness error while checking requirements: ") + e.what();
  }
  return false;
}

/// What a driver_error escaping the body means. Every requirement held, so neither
/// CUDA_ERROR_NOT_SUPPORTED nor a missing function is a cell without the feature.
void classify_driver_error(const driver_error &e, case_result &r) {
  r.message = e.what();
  if (e.code() == CUDA_ERROR_OUT_OF_MEMORY) {
    r.result = outcome::resource_error;
    return;
  }
  r.result = outcome::fail;
  if (e.missing_function())
    r.message += " (a function the case's requirements did not name: declare it with uses())";
  else if (e.code() == CUDA_ERROR_NOT_SUPPORTED)
    r.message += " (the case's requirements held, " + e.entry() + " among them: it should work)";
}

void run_body(const case_def &def, case_context &ctx, case_result &r) {
  try {
    def.body(ctx);
    r.result = outcome::pass;
  } catch (const case_failed &e) {
    r.result = outcome::fail;
    r.message = e.what();
  } catch (const driver_error &e) {
    classify_driver_error(e, r);
    if (is_sticky_error(e.code()))
      r.poisoned = true;
  } catch (const std::exception &e) {
    r.result = outcome::error;
    r.message = std::string("harness error: ") + e.what();
  } catch (...) {
    r.result = outcome::error;
    r.message = "harness error: unknown exception";
  }
}

std::string joined(const std::vector<std::string> &items) {
  std::string out;
  for (const auto &i : items)
    out += (out.empty() ? "" : "; ") + i;
  return out;
}

/// A call outside the declaration is the harness's error; a failed clean-up fails a passing case.
void check_calls(driver &d, case_result &r) {
  std::vector<std::string> names;
  for (entry_id id : d.take_undeclared_calls())
    names.emplace_back(info(id).name);
  const std::vector<std::string> cleanups = d.take_cleanup_failures();
  if (!names.empty()) {
    r.result = outcome::error;
    r.message = "harness error: the case called " + joined(names) +
                " without declaring it (case_def::uses)" +
                (r.message.empty() ? "" : "; then: " + r.message);
  }
  if (!cleanups.empty()) {
    if (r.result == outcome::pass)
      r.result = outcome::fail;
    r.message +=
        (r.message.empty() ? "" : "; ") + std::string("clean-up failed: ") + joined(cleanups);
  }
}

} // namespace

case_result run_case(const case_def &def, driver &d, const effective_config &config,
                     cell_facts &facts) {
  case_result r;
  r.id = def.id;
  const auto start = std::chrono::steady_clock::now();
  if (requirements_hold(def, facts, r)) {
    case_context ctx(d, config, def);
    const entry_set declared = def.needs.declared();
    (void)d.take_undeclared_calls();
    (void)d.take_cleanup_failures();
    d.watch_calls(&declared);
    run_body(def, ctx, r);
    d.watch_calls(nullptr);
    check_calls(d, r);
    r.observations = ctx.observations();
    r.poisoned = r.poisoned || ctx.poisoned();
  }
  r.duration_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return r;
}

} // namespace cuparity
