#pragma once
// A folder of a Hugging Face storage bucket, hf://buckets/ORG/NAME[/PREFIX]:
// where the jobs of a launch find their config and publish their shards, and
// where `collect` gathers them from. docs/hf-jobs.md.
#include <string>

namespace attnsweep::jobs {

struct BucketFolder {
  std::string org;
  std::string name;
  std::string prefix;  // "" for the bucket's root; no leading or trailing '/'

  std::string uri() const;                                 // hf://buckets/ORG/NAME[/PREFIX]
  std::string file(const std::string& relative) const;     // hf://buckets/ORG/NAME[/PREFIX]/relative
  BucketFolder with_prefix(const std::string& prefix) const;
};

// Parses hf://buckets/ORG/NAME[/PREFIX] (a trailing '/' is dropped). ORG and
// NAME are letters, digits, '.', '_' and '-'; the prefix is '/'-separated
// parts of the same characters ('..' refused), since it also appears in a job's
// mount spec SRC:/results where a ':' would break it. Throws BadInputError
// naming `option` and the expected form.
BucketFolder parse_bucket_folder(const std::string& text, const std::string& option);

}  // namespace attnsweep::jobs
