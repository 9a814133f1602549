// The SQLite connection: open with its settings, exec, query, and SQLite's errors as exceptions.
#include "sqlite_connection.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <memory>
#include <stdexcept>

namespace kvbench {

namespace {

// A writer killed by another shard's lock is worse than one that waits: a minute covers any
// one point's transaction.
constexpr int busy_timeout_ms = 60000;

using Statement = std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)>;

}  // namespace

int SqliteRow::n_columns() const { return sqlite3_column_count(statement_); }
std::string SqliteRow::name(int column) const { return sqlite3_column_name(statement_, column); }
bool SqliteRow::is_null(int column) const { return sqlite3_column_type(statement_, column) == SQLITE_NULL; }
bool SqliteRow::is_integer(int column) const { return sqlite3_column_type(statement_, column) == SQLITE_INTEGER; }
bool SqliteRow::is_number(int column) const {
    const int type = sqlite3_column_type(statement_, column);
    return type == SQLITE_INTEGER || type == SQLITE_FLOAT;
}
std::int64_t SqliteRow::integer(int column) const { return sqlite3_column_int64(statement_, column); }
double SqliteRow::real(int column) const { return sqlite3_column_double(statement_, column); }
std::string SqliteRow::text(int column) const {
    const unsigned char* text = sqlite3_column_text(statement_, column);
    return text == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(text));
}

SqliteConnection::SqliteConnection(const std::filesystem::path& path, Mode mode) : path_(path.string()) {
    int flags = mode == Mode::write ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READWRITE;
    int status = sqlite3_open_v2(path_.c_str(), &db_, flags, nullptr);
    if (status != SQLITE_OK && mode == Mode::read && std::filesystem::exists(path)) {
        // A file this user may not write: read it as it is.
        sqlite3_close(db_);
        db_ = nullptr;
        status = sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr);
    }
    if (status != SQLITE_OK) {
        const std::string message = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(status);
        sqlite3_close(db_);
        db_ = nullptr;
        throw std::runtime_error(fmt::format("cannot open the database {}: {}", path_, message));
    }
    sqlite3_busy_timeout(db_, busy_timeout_ms);
    sqlite3_extended_result_codes(db_, 1);
    try {
        exec("PRAGMA foreign_keys = ON;");
    } catch (...) {
        sqlite3_close(db_);
        db_ = nullptr;
        throw;
    }
}

SqliteConnection::~SqliteConnection() { sqlite3_close(db_); }

void SqliteConnection::fail(const std::string& what) const {
    std::string message = sqlite3_errmsg(db_);
    if (sqlite3_errcode(db_) == SQLITE_NOTADB) message = "not a SQLite database";
    throw std::runtime_error(fmt::format("{}: {}{}", path_, message, what.empty() ? "" : " (" + what + ")"));
}

void SqliteConnection::exec(const std::string& sql) {
    char* error = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error) == SQLITE_OK) return;
    const std::string message = error != nullptr ? error : sqlite3_errmsg(db_);
    const bool not_a_database = sqlite3_errcode(db_) == SQLITE_NOTADB;
    sqlite3_free(error);
    if (sqlite3_get_autocommit(db_) == 0) sqlite3_exec(db_, "ROLLBACK;", nullptr, nullptr, nullptr);
    throw std::runtime_error(fmt::format("{}: {}", path_, not_a_database ? "not a SQLite database" : message));
}

void SqliteConnection::query(const std::string& sql, const std::function<void(const SqliteRow&)>& row) const {
    sqlite3_stmt* raw = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &raw, nullptr) != SQLITE_OK) fail("");
    const Statement statement(raw, sqlite3_finalize);
    for (;;) {
        const int status = sqlite3_step(statement.get());
        if (status == SQLITE_DONE) return;
        if (status != SQLITE_ROW) fail("");
        row(SqliteRow(statement.get()));
    }
}

std::int64_t SqliteConnection::query_integer(const std::string& sql) const {
    std::int64_t value = 0;
    query(sql, [&](const SqliteRow& row) { value = row.integer(0); });
    return value;
}

std::string sql_quote(const std::string& text) {
    const std::unique_ptr<char, void (*)(void*)> quoted(sqlite3_mprintf("%Q", text.c_str()), sqlite3_free);
    if (!quoted) throw std::bad_alloc();
    return quoted.get();
}

}  // namespace kvbench
