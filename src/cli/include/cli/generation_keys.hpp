// What names a line of generate's tables: the axes that vary between its configurations and
// paths as columns, the rest once in the caption (as a sweep's tables do, docs/cli.md).
#pragma once

#include "kvbench/report/generation_rows.hpp"
#include "kvbench/report/summary_tables.hpp"

#include <functional>
#include <string>
#include <vector>

namespace kvbench {

class GenerationKeys {
public:
    explicit GenerationKeys(const std::vector<GenerationPath>& results);

    // "every line: B=1 D=2048 H=32 G=8 (GQA-8) L=1 w=bf16 kv=f16, T=1, cached path"; empty when
    // every axis varies.
    const std::string& caption() const { return caption_; }
    std::vector<std::string> headers() const;
    std::vector<Align> aligns() const;
    std::vector<std::string> cells(const GenerationPath& result) const;

private:
    struct Column {
        std::string name;
        Align align;
        std::function<std::string(const GenerationPath&)> cell;
    };
    std::vector<Column> columns_;
    std::string caption_;
};

// A summary table of generate's: the keys' columns first (repeated in each part of a table too
// wide for the terminal), then `figures`, with the keys' caption.
SummaryTable generation_table(const GenerationKeys& keys, std::string title, std::vector<std::string> figures,
                              std::string footnote);

}  // namespace kvbench
