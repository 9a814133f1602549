// A SQLite connection, closed on every path out, with the two calls the results database needs: run SQL, read rows (private to report/).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

struct sqlite3;
struct sqlite3_stmt;

namespace kvbench {

// One result row of SqliteConnection::query; valid only inside the callback.
class SqliteRow {
public:
    explicit SqliteRow(sqlite3_stmt* statement) : statement_(statement) {}
    int n_columns() const;
    std::string name(int column) const;
    bool is_null(int column) const;
    bool is_integer(int column) const;
    bool is_number(int column) const;  // INTEGER or REAL, not TEXT (which SQLite keeps in any column)
    std::int64_t integer(int column) const;
    double real(int column) const;
    std::string text(int column) const;

private:
    sqlite3_stmt* statement_;
};

class SqliteConnection {
public:
    // read: an existing file, written to only to roll back what a killed writer left (a hot
    // journal), else opened read-only; write: created when missing. Every connection waits up
    // to a minute for another process's lock (two shards writing one file) and enforces
    // foreign keys. Throws std::runtime_error naming the file.
    enum class Mode { read, write };
    SqliteConnection(const std::filesystem::path& path, Mode mode);
    ~SqliteConnection();
    SqliteConnection(const SqliteConnection&) = delete;
    SqliteConnection& operator=(const SqliteConnection&) = delete;

    // Runs every statement of `sql`. Throws std::runtime_error with SQLite's message; a
    // transaction the text opened and did not close is rolled back first.
    void exec(const std::string& sql);
    // Runs the one statement `sql`, calling `row` for each result row.
    void query(const std::string& sql, const std::function<void(const SqliteRow&)>& row) const;
    // The single integer `sql` yields (a PRAGMA, a count).
    std::int64_t query_integer(const std::string& sql) const;

    const std::string& path() const { return path_; }

private:
    [[noreturn]] void fail(const std::string& what) const;

    sqlite3* db_ = nullptr;
    std::string path_;
};

// `text` as an SQL string literal: in single quotes, each quote doubled (SQLite's %Q).
std::string sql_quote(const std::string& text);

}  // namespace kvbench
