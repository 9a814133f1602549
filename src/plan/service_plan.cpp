// Bisection over batch or context: memory and predicted time both grow with each, so the points
// that meet the target are one interval starting at 1.
#include "kvbench/plan/service_plan.hpp"

#include <functional>

namespace kvbench {

namespace {

PlanAnswer largest_meeting(const std::function<Prediction(std::uint64_t)>& predict, std::uint64_t max_value,
                           double tpot_s) {
    PlanAnswer answer;
    const Prediction at_one = predict(1);
    if (!meets_target(at_one, tpot_s)) {
        answer.value = 0;
        answer.limit = at_one.limit;
        return answer;
    }
    if (meets_target(predict(max_value), tpot_s)) return answer;  // unset: every value meets it
    std::uint64_t good = 1;
    std::uint64_t bad = max_value;
    while (bad - good > 1) {
        const std::uint64_t middle = good + (bad - good) / 2;
        (meets_target(predict(middle), tpot_s) ? good : bad) = middle;
    }
    answer.value = good;
    answer.limit = predict(bad).limit;
    return answer;
}

}  // namespace

bool meets_target(const Prediction& prediction, double tpot_s) {
    return prediction.cost.fits && prediction.tpot_s <= tpot_s;
}

PlanAnswer max_batch_for_target(const Deployment& deployment, std::uint64_t seq_len, double tpot_s) {
    return largest_meeting([&](std::uint64_t batch) { return predict_step(deployment, batch, seq_len); },
                           max_planned_batch, tpot_s);
}

PlanAnswer max_context_for_target(const Deployment& deployment, std::uint64_t batch, double tpot_s) {
    // Over each sequence's own tokens past the shared prefix (all of them without one).
    const std::uint64_t shared = deployment.shared_prefix;
    PlanAnswer answer = largest_meeting([&](std::uint64_t own) { return predict_step(deployment, batch, shared + own); },
                                        max_planned_context - shared, tpot_s);
    if (answer.value && *answer.value > 0) *answer.value += shared;
    return answer;
}

}  // namespace kvbench
