// The environment facts (runner/device/environment_facts.hpp): one list for
// `attnsweep env`, the worker's probe and the store. A fact round-trips through
// its JSON, an unknown value is null by its rule, and every stored fact is a
// column of the table the list says it is stored in.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "runner/device/environment_facts.hpp"

namespace attnsweep {
namespace {

// Every fact of EnvironmentInfo known, grouped by how its unknown value is
// spelled (UnknownWhen), which the tests below take one of each away from.
EnvironmentInfo every_fact_known() {
  EnvironmentInfo e;
  // Texts, unknown when empty.
  e.device_name = "NVIDIA H200";
  e.torch_version = "2.11.0";
  e.cuda_version = "13.0";
  e.cuda_runtime_version = "13.0";
  e.cudnn_version = "91900";
  e.driver_version = "580.159.04";
  e.hostname = "node7";
  e.gpu_uuid = "GPU-c30f95ff-3fc3-2cc9-15e6-1651b7278f34";
  e.container_image = "attnsweep:0.1.0";
  // Always known.
  e.device = Device::cuda(1);
  e.cuda_device_count = 2;
  e.env_vars = {{"CUDA_VISIBLE_DEVICES", "1"}, {"NVIDIA_TF32_OVERRIDE", "0"}};
  // Counts, sizes, clocks and temperatures, unknown when 0 (or less).
  e.sm_count = 132;
  e.device_memory_bytes = 150109880320;
  e.l2_cache_bytes = 62914560;
  e.sm_clock_max_mhz = 1980;
  e.power_limit_w = 700;
  e.sm_clock_start_mhz = 345;
  e.mem_clock_start_mhz = 3201;
  e.temperature_start_c = 34;
  // Unknown when -1: 0 is a fact, not unknown.
  e.other_processes_start = 0;
  e.gpu_utilization_start_pct = 0;
  // Unknown without the SM clock (sm_clock_start_mhz); every bit of 64 survives.
  e.clock_event_reasons_start = 0x8000000000000001ULL;
  return e;
}

std::set<std::string> columns_of(const std::string& table) {
  std::ifstream file(ATTNSWEEP_SOURCE_DIR "/runner/storage/schema.sql");
  const std::string schema{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
  SQLite::Database db(":memory:", SQLite::OPEN_READWRITE);
  db.exec(schema);
  SQLite::Statement query(db, "SELECT name FROM pragma_table_info(?)");
  query.bind(1, table);
  std::set<std::string> names;
  while (query.executeStep()) names.insert(query.getColumn(0).getString());
  return names;
}

TEST(EnvironmentFacts, EveryFactRoundTripsThroughItsJson) {
  const EnvironmentInfo known = every_fact_known();
  const nlohmann::json json = environment_to_json(known);
  EXPECT_EQ(json.size(), environment_facts().size());
  EXPECT_EQ(json.at("device"), "cuda:1");
  EXPECT_EQ(json.at("sm_count"), 132);
  EXPECT_EQ(json.at("other_processes_start"), 0);
  EXPECT_EQ(json.at("env_vars").at("CUDA_VISIBLE_DEVICES"), "1");
  const EnvironmentInfo back = environment_from_json(json);
  EXPECT_EQ(environment_to_json(back), json);
  EXPECT_EQ(back.clock_event_reasons_start, 0x8000000000000001ULL);
  EXPECT_EQ(back.device, Device::cuda(1));
}

TEST(EnvironmentFacts, AnUnknownValueIsNullByItsRuleAndReadsBackUnknown) {
  EnvironmentInfo e = every_fact_known();
  e.device_name.clear();             // empty
  e.sm_count = 0;                    // not positive
  e.other_processes_start = -1;      // negative
  e.sm_clock_start_mhz = 0;          // and so the reasons were not read with a clock
  const nlohmann::json json = environment_to_json(e);
  EXPECT_TRUE(json.at("device_name").is_null());
  EXPECT_TRUE(json.at("sm_count").is_null());
  EXPECT_TRUE(json.at("other_processes_start").is_null());
  EXPECT_TRUE(json.at("sm_clock_start_mhz").is_null());
  EXPECT_TRUE(json.at("clock_event_reasons_start").is_null());
  EXPECT_EQ(json.at("gpu_utilization_start_pct"), 0.0);  // known: 0
  const EnvironmentInfo back = environment_from_json(json);
  EXPECT_EQ(back.device_name, "");
  EXPECT_EQ(back.sm_count, 0);
  EXPECT_EQ(back.other_processes_start, -1);
  EXPECT_EQ(back.clock_event_reasons_start, 0u);
  EXPECT_EQ(environment_from_json(nlohmann::json::object()).other_processes_start, -1);  // a missing key: unknown
}

TEST(EnvironmentFacts, EveryStoredFactIsAColumnOfItsTable) {
  const std::set<std::string> runs = columns_of("runs"), devices = columns_of("run_devices");
  int in_runs = 0, in_devices = 0;
  for (const EnvironmentFact& fact : environment_facts()) {
    EXPECT_EQ(fact.stored_in_runs(), runs.count(fact.name) == 1) << fact.name;
    EXPECT_EQ(fact.stored_in_run_devices(), devices.count(fact.name) == 1) << fact.name;
    in_runs += fact.stored_in_runs();
    in_devices += fact.stored_in_run_devices();
  }
  EXPECT_EQ(in_runs, 20);
  EXPECT_EQ(in_devices, 20);
}

}  // namespace
}  // namespace attnsweep
