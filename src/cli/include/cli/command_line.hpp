// The command line a run was started with, shell-quoted, for the reports' command_line.
#pragma once

#include <string>
#include <vector>

namespace kvbench {

// A word as a POSIX shell reads it back: as it is when it holds only safe characters, else in
// single quotes ('it'\''s').
std::string shell_quote(const std::string& word);

// Records argv for command_line(): the program as its file name ("kvbench", not the path it
// was run from, which says nothing on another machine), then every argument quoted.
void record_command_line(int argc, const char* const* argv);

// What record_command_line saw; empty when it was not called (the unit tests).
const std::string& command_line();

}  // namespace kvbench
