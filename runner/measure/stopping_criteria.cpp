// The registry of stopping criteria: one line per criterion.
#include <functional>
#include <stdexcept>

#include "runner/measure/median_interval_criterion.hpp"
#include "runner/measure/stdrel_criterion.hpp"
#include "runner/measure/stopping_criterion.hpp"

namespace attnsweep {
namespace {

struct Registered {
  const char* name;
  std::function<std::unique_ptr<StoppingCriterion>(const StoppingSettings&)> make;
};

const std::vector<Registered>& registry() {
  static const std::vector<Registered> criteria = {
      {StdrelCriterion::kName, [](const StoppingSettings& s) { return std::make_unique<StdrelCriterion>(s); }},
      {MedianIntervalCriterion::kName,
       [](const StoppingSettings& s) { return std::make_unique<MedianIntervalCriterion>(s); }},
  };
  return criteria;
}

}  // namespace

std::unique_ptr<StoppingCriterion> make_stopping_criterion(const StoppingSettings& settings) {
  for (const Registered& criterion : registry()) {
    if (settings.criterion == criterion.name) return criterion.make(settings);
  }
  throw std::invalid_argument("unknown stopping criterion '" + settings.criterion + "'");
}

std::vector<std::string> stopping_criterion_names() {
  std::vector<std::string> names;
  for (const Registered& criterion : registry()) names.push_back(criterion.name);
  return names;
}

}  // namespace attnsweep
