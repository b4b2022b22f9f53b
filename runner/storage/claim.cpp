#include "runner/storage/claim.hpp"

#include <unistd.h>

#include <climits>

namespace attnsweep::storage {

Claim Claim::this_process() {
  char host[HOST_NAME_MAX + 1] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return {static_cast<std::int64_t>(::getpid()), host};
}

}  // namespace attnsweep::storage
