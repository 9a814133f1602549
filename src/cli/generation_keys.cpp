// generate's line keys: each axis a column where it varies, else a part of the caption.
#include "cli/generation_keys.hpp"

#include "kvbench/engine/kv_dtype.hpp"
#include "kvbench/report/units.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace kvbench {

namespace {

struct Axis {
    const char* name;
    Align align;
    std::function<std::string(const GenerationPath&)> cell;
    // In the caption: "name=cell" when empty.
    std::function<std::string(const GenerationPath&)> caption;
    // Shown at all only when some line needs it (an explicit head dim, a reduced type, ...).
    std::function<bool(const GenerationPath&)> relevant;
};

std::string number(std::size_t n) { return fmt::format("{}", n); }

// The model's axes (joined by spaces in the caption), then the run's (by commas), as the sweep's.
const std::vector<Axis>& model_axes() {
    static const std::vector<Axis> axes{
        {"B", Align::right, [](const GenerationPath& r) { return number(r.point.config.n_batch); }, {}, {}},
        {"D", Align::right, [](const GenerationPath& r) { return number(r.point.config.model_dim); }, {}, {}},
        {"H", Align::right, [](const GenerationPath& r) { return number(r.point.config.n_heads); }, {}, {}},
        {"dh", Align::right, [](const GenerationPath& r) { return number(r.point.config.head_dim()); }, {},
         [](const GenerationPath& r) { return r.point.config.explicit_head_dim != 0; }},
        {"grouping", Align::left, [](const GenerationPath& r) { return grouping_name(r.point.config); },
         [](const GenerationPath& r) {
             return fmt::format("G={} ({})", r.point.config.n_kv_heads, grouping_name(r.point.config));
         },
         {}},
        {"L", Align::right, [](const GenerationPath& r) { return number(r.point.config.n_layers); }, {}, {}},
        {"w", Align::left,
         [](const GenerationPath& r) { return std::string(weight_dtype_info(r.point.config.weight_dtype).name); }, {},
         [](const GenerationPath& r) { return r.point.config.weight_dtype != WeightDtype::f32; }},
        // The uncached forward keeps no cache, whatever --kv-dtype says.
        {"kv", Align::left,
         [](const GenerationPath& r) {
             const ModelConfig& c = r.point.config;
             return r.path == DecodePath::uncached ? std::string("none") : kv_dtype_name(c.key_dtype(), c.value_dtype());
         },
         {}, [](const GenerationPath& r) { return r.point.config.has_reduced_cache(); }},
        {"kv-block", Align::right,
         [](const GenerationPath& r) {
             if (r.path == DecodePath::uncached) return std::string("none");
             return r.point.config.kv_block == 0 ? std::string("contiguous") : number(r.point.config.kv_block);
         },
         {}, [](const GenerationPath& r) { return r.point.config.is_paged(); }},
        {"P", Align::right, [](const GenerationPath& r) { return number(r.point.config.shared_prefix); }, {},
         [](const GenerationPath& r) { return r.point.config.has_shared_prefix(); }},
        {"batch", Align::left,
         [](const GenerationPath& r) { return std::string(r.point.config.is_ragged() ? "ragged" : "uniform"); },
         [](const GenerationPath& r) { return std::string(r.point.config.is_ragged() ? "ragged" : "uniform"); },
         [](const GenerationPath& r) { return r.point.config.is_ragged(); }},
    };
    return axes;
}

const std::vector<Axis>& run_axes() {
    static const std::vector<Axis> axes{
        {"T", Align::right, [](const GenerationPath& r) { return number(r.point.n_threads); }, {}, {}},
        {"path", Align::left, [](const GenerationPath& r) { return std::string(path_name(r.path)); },
         [](const GenerationPath& r) { return std::string(path_name(r.path)) + " path"; }, {}},
    };
    return axes;
}

}  // namespace

GenerationKeys::GenerationKeys(const std::vector<GenerationPath>& results) {
    std::vector<std::string> model_constants, run_constants;
    const auto sort = [&](const std::vector<Axis>& axes, std::vector<std::string>& constants) {
        for (const Axis& axis : axes) {
            if (results.empty()) return;
            if (axis.relevant && std::none_of(results.begin(), results.end(), axis.relevant)) continue;
            const auto value = [&](const GenerationPath& r) { return axis.caption ? axis.caption(r) : axis.cell(r); };
            const bool varies = std::any_of(results.begin(), results.end(),
                                             [&](const GenerationPath& r) { return value(r) != value(results.front()); });
            if (varies) {
                columns_.push_back({axis.name, axis.align, axis.cell});
            } else {
                constants.push_back(axis.caption ? axis.caption(results.front())
                                                 : fmt::format("{}={}", axis.name, axis.cell(results.front())));
            }
        }
    };
    sort(model_axes(), model_constants);
    sort(run_axes(), run_constants);
    // A line needs a name: with nothing varying, its path (also in the caption).
    if (columns_.empty() && !results.empty()) {
        const Axis& path = run_axes().back();
        columns_.push_back({path.name, path.align, path.cell});
        run_constants.pop_back();
    }
    caption_ = fmt::format("{}", fmt::join(model_constants, " "));
    if (!run_constants.empty()) caption_ += (caption_.empty() ? "" : ", ") + fmt::format("{}", fmt::join(run_constants, ", "));
    if (!caption_.empty()) caption_ = "every line: " + caption_;
}

std::vector<std::string> GenerationKeys::headers() const {
    std::vector<std::string> names;
    for (const Column& column : columns_) names.push_back(column.name);
    return names;
}

std::vector<Align> GenerationKeys::aligns() const {
    std::vector<Align> aligns;
    for (const Column& column : columns_) aligns.push_back(column.align);
    return aligns;
}

std::vector<std::string> GenerationKeys::cells(const GenerationPath& result) const {
    std::vector<std::string> cells;
    for (const Column& column : columns_) cells.push_back(column.cell(result));
    return cells;
}

SummaryTable generation_table(const GenerationKeys& keys, std::string title, std::vector<std::string> figures,
                              std::string footnote) {
    SummaryTable table{TextTable{std::move(title), keys.headers(), keys.aligns(), {}, std::move(footnote)},
                       keys.caption(), keys.headers().size()};
    for (std::string& figure : figures) {
        table.text.header.push_back(std::move(figure));
        table.text.align.push_back(Align::right);
    }
    return table;
}

}  // namespace kvbench
