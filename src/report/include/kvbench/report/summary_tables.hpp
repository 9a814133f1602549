// The human summary of a run as text cells: a description of the run and its tables, for the table and Markdown writers.
#pragma once

#include "kvbench/measure/environment.hpp"
#include "kvbench/report/report.hpp"
#include "kvbench/report/units.hpp"

#include <functional>
#include <initializer_list>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace kvbench {

enum class Align { left, right };

struct TextTable {
    std::string title;                             // "FLOPs per step", "Latency", "KV memory"
    // One name per column; a '\n' puts the rest on a second header line (the column's unit).
    std::vector<std::string> header;
    std::vector<Align> align;                      // one per column: labels left, numbers right
    std::vector<std::vector<std::string>> lines;   // each exactly header.size() cells
    std::string footnote;                          // under the table when not empty; '\n' between notes
};

// A table of the run's summary: the cells, and what the writers need to keep it narrow.
struct SummaryTable {
    TextTable text;
    std::string caption;  // under the title: the axes every line shares ("every line: B=1 D=1024")
    // Leading columns that name a line (N, grouping, path): repeated in every part when the
    // terminal writer has to split a table too wide for terminal_columns.
    std::size_t n_key_columns = 0;
};

// The columns that name each line of a table over `rows` (the axes that vary between them: B,
// N, D, H, dh, L, grouping, kv, and with the run's axes T, cache state and path) and the
// caption that states the others once ("every line: B=1 D=1024 H=16 L=1, T=2, cold cache").
class LineKeys {
public:
    // `with_run_axes`: threads, cache state and path too; `with_seq`: N too (false for a table
    // each of whose lines spans the N axis, as the growth law's).
    LineKeys(const std::vector<ResultRow>& rows, bool with_run_axes, bool with_seq = true);

    // A table with this caption and these key columns, ready for its figure columns.
    SummaryTable table(std::string title) const;
    std::vector<std::string> cells(const ResultRow& row) const;
    // The row's key cells in one phrase, "N=128 MHA": words as they are, numbers with their axis.
    std::string label(const ResultRow& row) const;

private:
    struct Column {
        std::string name;
        Align align;
        std::function<std::string(const ResultRow&)> cell;
    };
    std::vector<Column> columns_;
    std::string caption_;
};

// A ragged batch's contexts as shortest/median/longest (the lower median of an even batch),
// "uniform" for a batch at one N (docs/model.md, "Ragged batches"): the tables' N_b.
std::string contexts_of(const ModelConfig& config);

// The cached row of `config` measured as `like` was (its threads and cache state), with a median,
// or nullptr: the point a summary table sets a row beside (a prefix against none, Q tokens
// against one, a paged cache against the contiguous one).
const ResultRow* cached_row_like(const std::vector<ResultRow>& rows, const ModelConfig& config, const ResultRow& like);

// A cached row and the cached row of its reference point, measured alike.
struct RowBeside {
    const ResultRow* row = nullptr;
    const ResultRow* reference = nullptr;
};

// Each cached row with a median for which `reference_of` gives the configuration of its
// reference point (std::nullopt: the row has none), in order, beside the row cached_row_like
// finds for it; a row whose reference point was not measured is left out.
std::vector<RowBeside> rows_beside_references(const std::vector<ResultRow>& rows,
                                              const std::function<std::optional<ModelConfig>(ModelConfig)>& reference_of);

// Right-aligned figure columns named `names`, after the columns the table has.
void add_figures(SummaryTable& table, std::initializer_list<std::string> names);

// The width every line of the terminal report keeps within when the terminal's is unknown,
// and at least (the CLI passes a wider terminal's width: cli/output_streams.hpp).
inline constexpr std::size_t terminal_columns = 80;

// How the human tables render figures.
struct TableOptions {
    TimeUnit time_unit = TimeUnit::auto_select;  // --time-unit
    std::size_t width = terminal_columns;        // columns each line keeps within
};

// Space-aligned columns under the title, for terminals (UTF-8 aware widths). A table wider
// than `width` is split into parts, each with the key columns; long captions and footnotes
// are wrapped.
void write_text_table(std::ostream& out, const SummaryTable& table, std::size_t width = terminal_columns);
// The same for a table without caption, whose key columns are the leading ones up to the
// last left-aligned one (labels are left-aligned, figures right-aligned).
void write_text_table(std::ostream& out, const TextTable& table, std::size_t width = terminal_columns);

// Terminal columns of UTF-8 text ("µs" is two bytes, one column).
std::size_t display_width(std::string_view text);

// Each '\n'-separated line of `text` broken at spaces to fit `width`: the first piece
// indented by `indent` spaces, the others by `hanging_indent`. A word longer than a line
// stays whole.
std::string wrap_text(std::string_view text, std::size_t indent, std::size_t hanging_indent,
                      std::size_t width = terminal_columns);

// The run in a few lines, each within `width` (long values wrap with an indent):
// machine: <cpu> (2 cores, LLC 32.0 MiB)
// BLAS:    OpenBLAS 0.3.21 ... (openmp)
// build:   Release abc1234 (GNU 12.2.0, kernels avx2+fma); kvbench 0.1.0
// run:     threads 2; cache cold
std::string describe_run(const std::vector<ResultRow>& rows, const Environment& env,
                         std::size_t width = terminal_columns);

// The same lines unwrapped, for writers that wrap on their own (Markdown).
std::vector<std::string> run_description_lines(const std::vector<ResultRow>& rows, const Environment& env);
inline constexpr std::size_t description_indent = 9;  // "machine: "

// What the sweep tables' letters stand for, in one line.
std::string axis_legend();

// In order: "FLOPs per step" and "KV memory" have one line per ModelConfig (neither depends
// on threads or cache state); "Latency" and "Throughput" have one line per ResultRow. Lines
// follow the order in which configurations first appear in `rows`. Axes with one value in
// the whole run go in each table's caption instead of a column. Missing figures read "-".
std::vector<SummaryTable> summary_tables(const std::vector<ResultRow>& rows, const TableOptions& options = {});

// write_table and write_markdown (report.hpp) with options: the same report, other units.
void write_table(std::ostream& out, const std::vector<ResultRow>& rows, const Environment& env,
                 const TableOptions& options);
void write_markdown(std::ostream& out, const std::vector<ResultRow>& rows, const Environment& env,
                    const TableOptions& options);

}  // namespace kvbench
