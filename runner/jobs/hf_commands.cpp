#include "runner/jobs/hf_commands.hpp"

#include <nlohmann/json.hpp>
#include <cctype>
#include <optional>
#include <regex>

#include "runner/common/errors.hpp"
#include "runner/common/text.hpp"
#include "runner/jobs/flavors.hpp"
#include "runner/report/escaping.hpp"

namespace attnsweep::jobs {

std::string shard_database_name(const ShardSpec& shard) {
  return "shard-" + std::to_string(shard.index) + "-of-" + std::to_string(shard.count) + ".db";
}

std::optional<ShardSpec> shard_of_database_name(const std::string& file_name) {
  static const std::regex pattern("shard-(0|[1-9][0-9]{0,4})-of-([1-9][0-9]{0,4})\\.db");
  std::smatch match;
  if (!std::regex_match(file_name, match, pattern)) return std::nullopt;
  const ShardSpec shard{std::stoi(match[1]), std::stoi(match[2])};
  if (shard.index >= shard.count) return std::nullopt;
  return shard;
}

std::vector<std::string> upload_config_command(const std::string& config_path, const BucketFolder& results) {
  // "./-x.yaml": hf would read a bare "-x.yaml" as an option.
  const std::string file = config_path.rfind('-', 0) == 0 ? "./" + config_path : config_path;
  return {"hf", "buckets", "cp", file, results.file(kConfigFileName)};
}

std::vector<std::string> source_archive_command(const std::string& source_dir) {
  return {"git", "-C", source_dir, "archive", "--format=tar.gz", "HEAD"};
}

std::vector<std::string> upload_source_command(const std::string& archive_path, const BucketFolder& results) {
  return {"hf", "buckets", "cp", archive_path, results.file(kSourceArchiveName)};
}

std::string from_source_bootstrap() {
  // Constant text (no value of the launch in it), so nothing here needs quoting.
  const std::string unpacked = "/tmp/attnsweep-job";
  return "mkdir -p " + unpacked + " && tar -xzf " + std::string(kMountPath) + "/" + kSourceArchiveName + " -C " +
         unpacked + " " + kFromSourceScript + " && exec bash " + unpacked + "/" + kFromSourceScript + " \"$@\"";
}

std::vector<std::string> shard_run_command(const JobSettings& settings, const ShardSpec& shard) {
  const std::string work = kJobWorkDirectory;
  std::vector<std::string> command = {"attnsweep", "run", std::string(kMountPath) + "/" + kConfigFileName,
                                      "--shard", shard.label(),
                                      "--sweep-id", settings.sweep_id,
                                      "--db", work + "/" + shard_database_name(shard),
                                      "--traces", work + "/traces",
                                      "--publish", kMountPath};
  // A flavor of several GPUs: the shard uses them all.
  if (flavor_gpu_count(settings.flavor) > 1) command.insert(command.end(), {"--gpus", "all"});
  return command;
}

namespace {

// --from-source: what the job's run records as its commit (runs.git_sha, the archive has no .git).
void add_from_source_environment(const JobSettings& settings, std::vector<std::string>& command) {
  if (!settings.git_sha.empty()) command.insert(command.end(), {"-e", "ATTNSWEEP_GIT_SHA=" + settings.git_sha});
}

// What every job's run records as its image (runs.container_image): the reference the job was
// started with, whatever name the image was built under (with --from-source, the stock image).
void add_image_environment(const JobSettings& settings, std::vector<std::string>& command) {
  command.insert(command.end(), {"-e", "ATTNSWEEP_IMAGE=" + settings.image});
}

// The job's own command after the image: `job` (an "attnsweep ..." command line) as
// it is, or with --from-source the bootstrap that builds attnsweep first and then
// runs it with the same arguments. bash -c TEXT NAME ARGS...: NAME becomes $0,
// ARGS "$@" (the job's arguments, "attnsweep <subcommand>" dropped).
void append_job(const JobSettings& settings, const std::vector<std::string>& job, std::vector<std::string>& command) {
  if (settings.from_source) {
    command.insert(command.end(), {"bash", "-c", from_source_bootstrap(), "job-from-source"});
    command.insert(command.end(), job.begin() + 2, job.end());
  } else {
    command.insert(command.end(), job.begin(), job.end());
  }
}

}  // namespace

std::vector<std::string> run_job_command(const JobSettings& settings, const ShardSpec& shard) {
  // Every hf option goes before "--": hf reads options after the image too, and "--" ends them.
  std::vector<std::string> command = {"hf", "jobs", "run", "--flavor", settings.flavor, "--timeout", settings.timeout};
  if (!settings.job_namespace.empty()) command.insert(command.end(), {"--namespace", settings.job_namespace});
  command.insert(command.end(), {"-e", "ATTNSWEEP_SWEEP_ID=" + settings.sweep_id});
  if (settings.from_source) add_from_source_environment(settings, command);
  // The bare name: hf sends the local token's value, which never passes through us.
  if (settings.pass_token) command.insert(command.end(), {"-s", "HF_TOKEN"});
  add_image_environment(settings, command);
  command.insert(command.end(), {"-v", settings.results.uri() + ":" + kMountPath,
                                 "-l", std::string(kSweepLabel) + "=" + settings.sweep_id,
                                 "-l", std::string(kShardLabel) + "=" + std::to_string(shard.index),
                                 "-d", "--", settings.image});
  append_job(settings, shard_run_command(settings, shard), command);
  return command;
}

namespace {

struct CronField {
  const char* name;
  int least, most;
  std::vector<std::string> names;  // JAN.. for months (from 1), SUN.. for days of the week (from 0)
};

// One cron value of `field`: a number or a name, within the field's range.
std::optional<int> cron_value(const std::string& text, const CronField& field) {
  if (!text.empty() && text.size() <= 2 && text.find_first_not_of("0123456789") == std::string::npos) {
    const int value = std::stoi(text);
    if (value >= field.least && value <= field.most) return value;
    return std::nullopt;
  }
  for (std::size_t i = 0; i < field.names.size(); ++i) {
    std::string upper = text;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (upper == field.names[i]) return static_cast<int>(i) + (field.names.size() == 12 ? 1 : 0);
  }
  return std::nullopt;
}

// Why `text`, a field of five (digits, names, '*', ',', '-', '/'), is not one of
// `field`: "" when it is. Each item of its list is *, a value or a range A-B, each
// optionally with a step /N (1 to the field's most).
std::string cron_field_problem(const std::string& text, const CronField& field) {
  const std::string range = std::string("from ") + std::to_string(field.least) + " to " + std::to_string(field.most) +
                            (field.names.empty() ? "" : ", or " + field.names.front() + " to " + field.names.back());
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const std::size_t slash = item.find('/');
    const std::string values = item.substr(0, slash);
    if (slash != std::string::npos) {
      const std::string step = item.substr(slash + 1);
      const bool digits = !step.empty() && step.size() <= 2 && step.find_first_not_of("0123456789") == std::string::npos;
      if (!digits || std::stoi(step) < 1 || std::stoi(step) > field.most) {
        return std::string("its ") + field.name + " step '" + step + "' is not from 1 to " + std::to_string(field.most);
      }
    }
    if (values != "*") {
      const std::size_t dash = values.find('-');
      const auto low = cron_value(values.substr(0, dash), field);
      const auto high = dash == std::string::npos ? low : cron_value(values.substr(dash + 1), field);
      if (!low || !high) return std::string("its ") + field.name + " '" + values + "' is not " + range;
      if (*low > *high) return std::string("its ") + field.name + " range '" + values + "' runs backwards";
    }
    if (comma == std::string::npos) return "";
    start = comma + 1;
  }
}

}  // namespace

void check_schedule(const std::string& schedule) {
  static const std::regex named("@(hourly|daily|weekly|monthly|yearly|annually)");
  // Each field starts with a digit, a letter or '*': "-1 ..." would reach hf as an option.
  static const std::regex cron(R"([0-9A-Za-z*][0-9A-Za-z*,/-]*( [0-9A-Za-z*][0-9A-Za-z*,/-]*){4})");
  static const std::vector<CronField> fields = {
      {"minute", 0, 59, {}},
      {"hour", 0, 23, {}},
      {"day of the month", 1, 31, {}},
      {"month", 1, 12, {"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}},
      {"day of the week", 0, 7, {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}}};
  const std::string allowed = "; allowed: @hourly, @daily, @weekly, @monthly, @yearly, @annually, or five cron fields "
                              "in quotes, e.g. '0 3 * * *' (03:00 every day; the service's time zone)";
  const std::string refused = "--schedule: '" + report::terminal_safe(schedule) + "' is not a schedule";
  if (std::regex_match(schedule, named)) return;
  if (!std::regex_match(schedule, cron)) throw BadInputError(refused + allowed);
  std::size_t start = 0;
  for (const CronField& field : fields) {
    const std::size_t space = schedule.find(' ', start);
    const std::string problem =
        cron_field_problem(schedule.substr(start, space == std::string::npos ? std::string::npos : space - start), field);
    if (!problem.empty()) throw BadInputError(refused + " (" + problem + ")" + allowed);
    start = space + 1;
  }
}

std::vector<std::string> nightly_job_command() {
  return {"attnsweep", "nightly", std::string(kMountPath) + "/" + kConfigFileName, "--history", kMountPath,
          "--db", kNightlyDatabase, "--summary", kNightlySummary};
}

std::vector<std::string> scheduled_run_command(const JobSettings& settings) {
  // The options of hf jobs run, before "--" and the image; no -d (a schedule does not stream).
  std::vector<std::string> command = {"hf", "jobs", "scheduled", "run", settings.schedule,
                                      "--flavor", settings.flavor, "--timeout", settings.timeout};
  if (!settings.job_namespace.empty()) command.insert(command.end(), {"--namespace", settings.job_namespace});
  if (settings.from_source) {
    command.insert(command.end(), {"-e", "ATTNSWEEP_JOB_COMMAND=nightly"});
    add_from_source_environment(settings, command);
  }
  if (settings.pass_token) command.insert(command.end(), {"-s", "HF_TOKEN"});
  add_image_environment(settings, command);
  command.insert(command.end(), {"-v", settings.results.uri() + ":" + kMountPath,
                                 "-l", std::string(kNightlyLabel) + "=" + settings.sweep_id, "--", settings.image});
  append_job(settings, nightly_job_command(), command);
  return command;
}

std::optional<std::string> schedule_id_in(const std::string& output) {
  // huggingface_hub before its output modes: "Scheduled Job created with ID: ID"; after: as jobs run.
  static const std::regex older("Scheduled Job created with ID:[ \t]*([A-Za-z0-9_-]+)");
  std::smatch match;
  if (std::regex_search(output, match, older)) return match[1].str();
  return job_id_in(output);
}

std::vector<std::string> hardware_command() { return {"hf", "jobs", "hardware", "--format", "json"}; }

namespace {

std::vector<std::string> jobs_command(const std::string& verb, const std::vector<std::string>& job_ids,
                                      const std::string& job_namespace) {
  std::vector<std::string> command = {"hf", "jobs", verb, "--format", "json"};
  if (!job_namespace.empty()) command.insert(command.end(), {"--namespace", job_namespace});
  command.insert(command.end(), job_ids.begin(), job_ids.end());
  return command;
}

}  // namespace

std::vector<std::string> wait_command(const std::vector<std::string>& job_ids, const std::string& job_namespace) {
  return jobs_command("wait", job_ids, job_namespace);
}

std::vector<std::string> inspect_command(const std::vector<std::string>& job_ids, const std::string& job_namespace) {
  return jobs_command("inspect", job_ids, job_namespace);
}

std::vector<std::string> sync_command(const BucketFolder& folder, const std::string& directory, bool databases_only) {
  std::vector<std::string> command = {"hf", "buckets", "sync", folder.uri(), directory};
  if (databases_only) command.insert(command.end(), {"--include", "shard-*.db"});
  return command;
}

std::string command_line(const std::vector<std::string>& command) {
  std::vector<std::string> words;
  for (const auto& word : command) words.push_back(text::shell_quote(word));
  return text::join(words, " ");
}

std::optional<std::string> job_id_in(const std::string& output) {
  static const std::regex labelled("(?:^|\\s)id(?::[ \\t]*|=)([A-Za-z0-9_-]+)");
  static const std::regex bare("^\\s*([A-Za-z0-9]{8,64})\\s*$");
  std::smatch match;
  if (std::regex_search(output, match, labelled)) return match[1].str();
  if (std::regex_match(output, match, bare)) return match[1].str();
  return std::nullopt;
}

std::map<std::string, JobStage> job_stages_in(const std::string& output, const std::vector<std::string>& job_ids) {
  std::map<std::string, JobStage> stages;
  const nlohmann::json parsed = nlohmann::json::parse(output, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_array()) {
    for (const auto& item : parsed) {
      if (!item.is_object() || !item.contains("id") || !item["id"].is_string()) continue;
      const nlohmann::json& status = item.contains("status") && item["status"].is_object() ? item["status"] : item;
      JobStage stage;
      if (status.contains("stage") && status["stage"].is_string()) stage.stage = status["stage"].get<std::string>();
      if (status.contains("message") && status["message"].is_string()) stage.message = status["message"].get<std::string>();
      if (!stage.stage.empty()) stages[item["id"].get<std::string>()] = stage;
    }
    return stages;
  }
  // Not JSON (an hf that ignored --format): a stage word on the line that names the job.
  static const std::regex stage_word("\\b(COMPLETED|CANCELED|ERROR|DELETED|SCHEDULING|RUNNING)\\b");
  std::size_t at = 0;
  for (std::size_t end; at < output.size(); at = end + 1) {
    end = output.find('\n', at);
    if (end == std::string::npos) end = output.size();
    const std::string line = output.substr(at, end - at);
    std::smatch match;
    if (!std::regex_search(line, match, stage_word)) continue;
    for (const auto& id : job_ids) {
      if (line.find(id) != std::string::npos) stages[id] = {match[1].str(), ""};
    }
  }
  return stages;
}

}  // namespace attnsweep::jobs
