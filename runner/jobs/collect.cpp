#include "runner/jobs/collect.hpp"

#include <ftw.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <system_error>

#include "runner/common/errors.hpp"
#include "runner/common/temp_folder.hpp"
#include "runner/jobs/hf_commands.hpp"

namespace attnsweep::jobs {
namespace fs = std::filesystem;
namespace {

// A fresh folder under the temp directory, removed with this object.
class TemporaryFolder {
 public:
  TemporaryFolder() {
    std::string pattern = (fs::path(temp_folder()) / "attnsweep-collect-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) {
      throw std::runtime_error(std::string("cannot make a temporary folder: ") + std::strerror(errno));
    }
    path_ = pattern;
  }
  // Not std::filesystem::remove_all: libtorch.so exports its own build of it,
  // which the dynamic linker picks for this executable, and it crashes here.
  ~TemporaryFolder() {
    ::nftw(path_.c_str(), [](const char* file, const struct stat*, int, struct FTW*) { return ::remove(file); }, 16,
           FTW_DEPTH | FTW_PHYS);
  }
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Runs in `directory` until destroyed, so that merge records each shard by its
// name in the bucket folder ("shard-0-of-4.db"), not by a temporary path.
class WorkingDirectory {
 public:
  explicit WorkingDirectory(const std::string& directory) : previous_(fs::current_path()) {
    fs::current_path(directory);
  }
  ~WorkingDirectory() {
    std::error_code ignored;
    fs::current_path(previous_, ignored);
  }
  WorkingDirectory(const WorkingDirectory&) = delete;
  WorkingDirectory& operator=(const WorkingDirectory&) = delete;

 private:
  fs::path previous_;
};

}  // namespace

namespace {

// A --keep that names a file is bad input, refused before anything is synced.
void check_keep_folder(const std::string& keep_dir) {
  if (keep_dir.empty()) return;
  std::error_code error;
  const fs::file_status status = fs::status(keep_dir, error);
  if (fs::exists(status) && !fs::is_directory(status)) {
    throw BadInputError("--keep: '" + keep_dir + "' is a file, not a folder; give a folder (made when absent) to keep "
                        "the synced shard databases and traces in");
  }
}

}  // namespace

CollectResult collect_shards(const HfCli& hf, const CollectRequest& request) {
  CollectResult result;
  result.source = parse_bucket_folder(request.source, "collect");
  check_keep_folder(request.keep_dir);
  const std::string out_path = fs::absolute(request.out_path).string();

  std::unique_ptr<TemporaryFolder> temporary;
  if (request.keep_dir.empty()) {
    temporary = std::make_unique<TemporaryFolder>();
    result.directory = temporary->path();
  } else {
    std::error_code error;
    fs::create_directories(request.keep_dir, error);
    if (error) throw std::runtime_error("--keep: cannot create " + request.keep_dir + ": " + error.message());
    result.directory = request.keep_dir;
  }
  // Absolute: hf would read a folder named "-x" as an option.
  const std::string sync_directory = fs::absolute(result.directory).string();
  const ProcessResult synced = hf.run(sync_command(result.source, sync_directory, request.keep_dir.empty()), kHfSyncSeconds);
  if (!synced.succeeded()) {
    throw std::runtime_error("hf buckets sync " + result.source.uri() + " failed: " + failure_reason(synced));
  }

  std::vector<std::pair<ShardSpec, std::string>> found;
  for (const auto& entry : fs::directory_iterator(result.directory)) {
    if (!entry.is_regular_file()) continue;
    const std::string name = entry.path().filename().string();
    if (const auto shard = shard_of_database_name(name)) found.emplace_back(*shard, name);
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return a.first.count != b.first.count ? a.first.count < b.first.count : a.first.index < b.first.index;
  });
  for (const auto& [shard, name] : found) result.shard_files.push_back(name);
  if (result.shard_files.empty()) return result;

  const WorkingDirectory inside(result.directory);
  result.report = scale_out::merge_shards(out_path, result.shard_files);
  result.merged = true;
  return result;
}

}  // namespace attnsweep::jobs
