// The report schema read from its compiled-in file (data/report_schema.json), once.
#include "kvbench/report/schema.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>

namespace kvbench {

namespace {

const nlohmann::json& schema_file() {
    static const nlohmann::json schema = nlohmann::json::parse(report_schema_json());
    return schema;
}

const RenamedColumn* find_rename(const std::string& old_name) {
    const std::vector<RenamedColumn>& renames = renamed_columns();
    const auto found = std::find_if(renames.begin(), renames.end(),
                                    [&](const RenamedColumn& rename) { return rename.old_name == old_name; });
    return found == renames.end() ? nullptr : &*found;
}

}  // namespace

const std::vector<std::string>& contract_columns() {
    static const std::vector<std::string> columns = schema_file().at("contract_columns").get<std::vector<std::string>>();
    return columns;
}

const std::vector<RenamedColumn>& renamed_columns() {
    static const std::vector<RenamedColumn> renames = [] {
        std::vector<RenamedColumn> all;
        for (const nlohmann::json& rename : schema_file().at("renamed_columns")) {
            all.push_back({rename.at("old").get<std::string>(), rename.at("new").get<std::string>(),
                           rename.at("scale").get<double>(), rename.at("until_schema_version").get<int>()});
        }
        return all;
    }();
    return renames;
}

const std::vector<FlagWord>& flag_words() {
    static const std::vector<FlagWord> words = [] {
        std::vector<FlagWord> all;
        // nlohmann's object keeps its keys sorted; the order of row_flags is the code's.
        for (const auto& [word, meaning] : schema_file().at("flags").at("words").items()) {
            all.push_back({word, meaning.get<std::string>()});
        }
        return all;
    }();
    return words;
}

std::string current_column_name(const std::string& name) {
    const RenamedColumn* rename = find_rename(name);
    return rename == nullptr ? name : rename->name;
}

std::string current_cell_text(const std::string& old_name, const std::string& text) {
    const RenamedColumn* rename = find_rename(old_name);
    if (rename == nullptr || rename->scale == 1) return text;
    double value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size()) return text;  // the row reader names the bad cell
    return fmt::format("{}", value * rename->scale);
}

}  // namespace kvbench
