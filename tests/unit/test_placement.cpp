// Placing cells on GPUs: balance by cost, determinism, the workers each GPU gets, and simulated
// two-device runs that put each cell where the placement says, with each GPU's share of -j.
#include "harness/protocol/results.hpp"
#include "harness/run/placement.hpp"
#include "run_processes.hpp"
#include "run_support.hpp"

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <thread>

using namespace cuparity;

namespace {

using placement = std::vector<std::vector<std::size_t>>;

std::vector<placement::value_type> queues(const std::vector<gpu_share> &shares) {
  std::vector<std::vector<std::size_t>> out;
  for (const auto &s : shares)
    out.push_back(s.cells);
  return out;
}

std::vector<double> loads(const placement &p, const std::vector<double> &costs) {
  std::vector<double> out;
  for (const auto &q : p) {
    double sum = 0;
    for (std::size_t i : q)
      sum += costs[i];
    out.push_back(sum);
  }
  return out;
}

/// Every index of `n` cells in exactly one queue.
bool each_placed_once(const placement &p, std::size_t n) {
  std::vector<std::size_t> all;
  for (const auto &q : p)
    all.insert(all.end(), q.begin(), q.end());
  std::sort(all.begin(), all.end());
  std::vector<std::size_t> expected(n);
  std::iota(expected.begin(), expected.end(), std::size_t{0});
  return all == expected;
}

} // namespace

TEST_CASE("placement balances GPUs by cost where round-robin would not", "[placement]") {
  // Sorted, these are 4 3 3 2 2 2: dealt out in turn they give 9 and 7; by load, 8 and 8.
  const std::vector<double> costs{2, 3, 2, 4, 2, 3};
  const placement p = place_by_cost(costs, {1, 1});
  CHECK(loads(p, costs) == std::vector<double>{8, 8});
  CHECK(p == placement{{3, 0, 2}, {1, 5, 4}});
  CHECK(each_placed_once(p, costs.size()));
  // One long cell: it gets a GPU to itself, the rest share the other.
  const std::vector<double> skewed{1, 1, 10, 1, 1, 1};
  CHECK(place_by_cost(skewed, {1, 1}) == placement{{2}, {0, 1, 3, 4, 5}});
}

TEST_CASE("each GPU's queue runs its costliest cells first", "[placement]") {
  const std::vector<double> costs{0.5, 3, 1, 2, 0.25, 2, 4, 1};
  for (const auto &q : place_by_cost(costs, {1, 1, 1})) {
    INFO("queue of " << q.size());
    CHECK(std::is_sorted(q.begin(), q.end(),
                         [&](std::size_t a, std::size_t b) { return costs[a] > costs[b]; }));
  }
}

TEST_CASE("placement is deterministic: equal costs alternate, ties to the lowest GPU",
          "[placement]") {
  // More cells than an insertion sort handles, so an unstable sort would show.
  const std::vector<double> equal(40, 0.05);
  placement expected(2);
  for (std::size_t i = 0; i < equal.size(); ++i)
    expected[i % 2].push_back(i);
  CHECK(place_by_cost(equal, {1, 1}) == expected);
  CHECK(place_by_cost(std::vector<double>(3, 1.0), {1, 1, 1}) == placement{{0}, {1}, {2}});
  CHECK(place_by_cost({1.0}, {1, 1, 1}) == placement{{0}, {}, {}});
  // The same costs always give the same placement.
  std::mt19937 gen(7);
  std::uniform_real_distribution<double> cost(0.05, 3.0);
  std::vector<double> random(25);
  for (auto &c : random)
    c = cost(gen);
  CHECK(place_by_cost(random, {2, 2}) == place_by_cost(random, {2, 2}));
}

TEST_CASE("every cell is placed exactly once, on any number of GPUs", "[placement]") {
  std::mt19937 gen(11);
  std::uniform_real_distribution<double> cost(0.05, 3.0);
  for (std::size_t n : {0, 1, 2, 5, 18, 37})
    for (std::size_t gpus : {1, 2, 3, 8}) {
      std::vector<double> costs(n);
      for (auto &c : costs)
        c = cost(gen);
      INFO(n << " cells on " << gpus << " GPUs");
      const auto shares = place_cells(costs, gpus, 12);
      CHECK(shares.size() == gpus);
      CHECK(each_placed_once(queues(shares), n));
      // Longest processing time first on GPUs with equal workers: no GPU ends up more than one
      // cell's cost above another.
      if (gpus > 1 && n > 0 && 12 % gpus == 0) {
        const auto l = loads(queues(shares), costs);
        CHECK(*std::max_element(l.begin(), l.end()) - *std::min_element(l.begin(), l.end()) <=
              *std::max_element(costs.begin(), costs.end()) + 1e-9);
      }
    }
}

TEST_CASE("-j is split over the GPUs as evenly as possible, at least one worker each",
          "[placement]") {
  CHECK(split_workers(12, 2) == std::vector<int>{6, 6});
  CHECK(split_workers(5, 2) == std::vector<int>{3, 2});
  CHECK(split_workers(7, 3) == std::vector<int>{3, 2, 2});
  CHECK(split_workers(1, 2) == std::vector<int>{1, 1});
  CHECK(split_workers(2, 3) == std::vector<int>{1, 1, 1});
  CHECK(split_workers(4, 1) == std::vector<int>{4});
  CHECK(split_workers(4, 0) == std::vector<int>{4}); // no GPU named: one queue
  CHECK(split_workers(0, 2) == std::vector<int>{1, 1});
  const auto shares = place_cells(std::vector<double>(4, 1.0), 3, 2);
  REQUIRE(shares.size() == 3);
  CHECK(shares[0].workers == 1);
  CHECK(shares[1].workers == 1);
  CHECK(shares[2].workers == 1);
}

TEST_CASE("a GPU with fewer workers gets proportionally less to do", "[placement]") {
  // -j 3 over two GPUs: 2 workers and 1, so 4 equal cells and 2.
  const std::vector<double> equal(6, 1.0);
  const auto shares = place_cells(equal, 2, 3);
  REQUIRE(shares.size() == 2);
  CHECK(shares[0].workers == 2);
  CHECK(shares[1].workers == 1);
  CHECK(shares[0].cells == std::vector<std::size_t>{0, 1, 3, 4});
  CHECK(shares[1].cells == std::vector<std::size_t>{2, 5});
}

TEST_CASE("one GPU or none: every cell in the order given, with all the workers", "[placement]") {
  const std::vector<double> unsorted{1, 3, 2, 0.5};
  for (std::size_t gpus : {0, 1}) {
    const auto shares = place_cells(unsorted, gpus, 5);
    REQUIRE(shares.size() == 1);
    CHECK(shares[0].cells == std::vector<std::size_t>{0, 1, 2, 3});
    CHECK(shares[0].workers == 5);
  }
  CHECK(place_cells({}, 1, 0)[0].workers == 1);
}

TEST_CASE("place_work costs a cell by its cases", "[placement]") {
  // The registry of this test binary is empty: each case costs as an ordinary one.
  cell a, b, c;
  const std::vector<work_cell> work{
      {&a, {"x.a.one"}}, {&b, {"x.a.one", "x.a.two", "x.a.three"}}, {&c, {"x.a.one", "x.a.two"}}};
  const auto shares = place_work(work, 2, 2);
  REQUIRE(shares.size() == 2);
  CHECK(shares[0].cells == std::vector<std::size_t>{1});
  CHECK(shares[1].cells == std::vector<std::size_t>{2, 0});
}

namespace {

// Cases of no cost of their own (case_def's default), so this test binary, whose case registry
// is empty, costs them as the executable does.
const char *six_cells = R"(
[matrix]
cases = ["binding.errors.shape", "context.current.none", "stream.query.not_ready",
         "alloc.copy.dtod", "alloc.errors.zero"]
[axes]
NUMBA_CUDA_USE_NVIDIA_BINDING = ["0", "1"]
CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM = ["0", "1", false]
)";

struct two_device_run {
  nlohmann::json summary;
  std::map<std::string, std::string> device;     ///< cell -> CUDA_VISIBLE_DEVICES it ran with
  std::map<std::string, std::string> first_uuid; ///< cell -> UUID of its device 0, as it saw it
  std::map<std::string, std::vector<std::string>> cases; ///< cell -> its case records, in order
};

/// The matrix on a simulated host of two devices, spread over both with --gpus all.
two_device_run run_on_two_devices(const std::string &dir, std::vector<std::string> extra) {
  const std::string m = test::write_file(dir + "/m.toml", six_cells);
  std::vector<std::string> args{"run", m, "--out", dir + "/out", "--gpus", "all"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto res = test::run_cuparity(args, test::with_sim_driver({{"CUPARITY_SIM_DEVICES", "2"}}));
  INFO(res.out << res.err);
  REQUIRE(res.exit_code == 0);
  two_device_run run;
  run.summary = test::read_summary_json(dir + "/out");
  for (const auto &c : run.summary["cells"])
    run.device[c["id"].get<std::string>()] = c["device"].get<std::string>();
  for (const auto &r : read_results(dir + "/out/results.jsonl").records) {
    const std::string cell_id = r.value("cell", "");
    if (r["type"] == "cell")
      run.first_uuid[cell_id] = r["driver"]["devices"].at(0)["uuid"].get<std::string>();
    if (r["type"] == "case")
      run.cases[cell_id].push_back(r["case"].get<std::string>());
  }
  return run;
}

/// The plan as the runner orders it (matrix order, then by cost), from what the run recorded.
std::vector<work_cell> recorded_work(const two_device_run &run, std::vector<cell> &storage) {
  storage.clear();
  for (const auto &c : run.summary["cells"])
    storage.push_back(cell{c["id"].get<std::string>()});
  std::vector<work_cell> work;
  for (const auto &c : storage)
    if (run.cases.count(c.id))
      work.push_back({&c, run.cases.at(c.id)});
  order_by_cost(work);
  return work;
}

/// The CUDA_VISIBLE_DEVICES a process runs with; "" once it has gone.
std::string visible_devices_of(int pid) {
  const std::string env = test::read_proc_file("/proc/" + std::to_string(pid) + "/environ");
  const std::string key = std::string(1, '\0') + "CUDA_VISIBLE_DEVICES=";
  const std::size_t at = ('\0' + env).find(key);
  if (at == std::string::npos)
    return "";
  const std::size_t begin = at + key.size() - 1;
  return env.substr(begin, env.find('\0', begin) - begin);
}

} // namespace

TEST_CASE("two simulated devices: each cell once, on the GPU its placement gave it",
          "[placement][runner]") {
  const std::string dir = test::fresh_dir("cuparity-placement-tests", "two_devices");
  SECTION("the whole matrix at -j 4: every pair once, three cells on each device") {
    const auto run = run_on_two_devices(dir, {"-j", "4"});
    std::set<std::pair<std::string, std::string>> pairs;
    std::size_t records = 0;
    for (const auto &[cell_id, cases] : run.cases)
      for (const auto &case_id : cases) {
        pairs.insert({cell_id, case_id});
        ++records;
      }
    CHECK(records == 30);
    CHECK(pairs.size() == 30);
    CHECK(run.summary["results"].size() == 30);
    std::map<std::string, int> per_device;
    for (const auto &[cell_id, device] : run.device)
      ++per_device[device];
    CHECK(per_device == std::map<std::string, int>{{"0,1", 3}, {"1,0", 3}});
    // The simulated driver honours CUDA_VISIBLE_DEVICES: a cell's device 0 is the host device
    // its list names first (the UUID's last byte is the host's ordinal).
    for (const auto &[cell_id, device] : run.device) {
      INFO(cell_id << " on " << device);
      const std::string uuid = run.first_uuid.at(cell_id);
      CHECK(uuid.substr(uuid.size() - 2) == "0" + device.substr(0, 1));
    }
  }
  SECTION("a shard's unequal cells at -j 3: on each device the cells the placement gave it") {
    // Shard 0/4 of the 30 pairs leaves the six cells 2, 1, 1, 1, 2 and 1 cases.
    const auto run = run_on_two_devices(dir, {"-j", "3", "--shard", "0/4"});
    std::vector<cell> storage;
    const std::vector<work_cell> work = recorded_work(run, storage);
    REQUIRE(work.size() == 6);
    CHECK(planned_cases(work) == 8);
    const auto shares = place_work(work, 2, 3);
    REQUIRE(shares.size() == 2);
    const std::vector<std::string> devices{"0,1", "1,0"};
    for (std::size_t g = 0; g < 2; ++g) {
      CHECK(!shares[g].cells.empty());
      for (std::size_t i : shares[g].cells) {
        INFO(work[i].c->id);
        CHECK(run.device.at(work[i].c->id) == devices[g]);
      }
    }
  }
}

TEST_CASE("two simulated devices at -j 4: each GPU runs two cells at a time",
          "[placement][runner]") {
  const std::string dir = test::fresh_dir("cuparity-placement-tests", "workers");
  const std::string m = test::write_file(dir + "/m.toml", R"(
[matrix]
cases = ["context.current.none", "alloc.errors.zero"]
[axes]
NUMBA_CUDA_USE_NVIDIA_BINDING = ["0", "1"]
CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM = ["0", "1"]
# Each cuInit takes 0.3 s: a GPU's cells stay alive long enough to be seen side by side.
CUPARITY_SIM_FAULTS = ["cuInit:delay_ns=300000000"]
)");
  const std::string marker = test::new_run_marker("placement-workers");
  std::atomic<bool> done{false};
  process_result res;
  std::thread runner([&] {
    res = test::run_cuparity({"run", m, "--out", dir + "/out", "--gpus", "all", "-j", "4"},
                             test::with_sim_driver({{"CUPARITY_SIM_DEVICES", "2"},
                                                    {test::run_marker_variable, marker}}));
    done = true;
  });
  std::map<std::string, std::size_t> most; // a cell's devices -> most such cells alive at once
  while (!done) {
    std::map<std::string, std::size_t> alive;
    for (int pid : test::marked_processes(marker))
      if (test::command_line(pid).find(" cell ") != std::string::npos)
        if (const std::string devices = visible_devices_of(pid); !devices.empty())
          ++alive[devices];
    for (const auto &[devices, n] : alive)
      most[devices] = std::max(most[devices], n);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  runner.join();
  INFO(res.out << res.err);
  REQUIRE(res.exit_code == 0);
  CHECK(most == std::map<std::string, std::size_t>{{"0,1", 2}, {"1,0", 2}});
}
