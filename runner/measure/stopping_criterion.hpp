#pragma once
// When the samples of a case are good enough, as one pluggable rule (after
// nvbench's stopping_criterion_base): the criterion sees every kept sample and
// says whether the estimate has converged and why. The caps and minimums every
// criterion runs under are the stopping rule's (stopping_rule.hpp), so a second
// criterion (nvbench's entropy rule) is one file and a line in
// stopping_criteria.cpp, its reason one more StopReason.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runner/measure/stop_reason.hpp"
#include "runner/measure/stopping_settings.hpp"

namespace attnsweep {

// One of a criterion's parameters, by name (for logs and docs; the values come
// from StoppingSettings or are the criterion's own constants).
struct NamedParameter {
  std::string name;
  double value = 0;
};

class StoppingCriterion {
 public:
  virtual ~StoppingCriterion() = default;

  // The registered name ("stdrel").
  virtual std::string name() const = 0;
  virtual std::vector<NamedParameter> parameters() const = 0;
  // Every kept sample (microseconds), in the order taken.
  virtual void add_sample(double value_us) = 0;
  // Asked after every sample, kept or dropped, once the rule's minimums are met;
  // true once converged, and then reason() says how.
  virtual bool is_finished() = 0;
  virtual std::optional<StopReason> reason() const = 0;
};

// The criterion settings.criterion names; throws std::invalid_argument for a
// name not registered.
std::unique_ptr<StoppingCriterion> make_stopping_criterion(const StoppingSettings& settings);
// The registered names.
std::vector<std::string> stopping_criterion_names();

}  // namespace attnsweep
