# Runs one row of tests/bad_inputs.txt and checks what kvbench promises for bad input: the exit
# status, one error line that contains the row's words, nothing on stdout, and no file left
# behind. Invoked by ctest (tests/bad_inputs.cmake) as
#   cmake -DKVBENCH=<exe> -DTABLE=<bad_inputs.txt> -DROW=<name> -DDIR=<empty directory>
#         -DFILES=<tests/bad_input_files> -P bad_input_check.cmake
cmake_minimum_required(VERSION 3.20)  # today's policies: "@DIR@" is text, not a variable

# The row: "name | exit | arguments | words".
string(REPLACE "." "\\." row_regex "${ROW}")
file(STRINGS "${TABLE}" lines REGEX "^${row_regex} +\\|")
list(LENGTH lines n_lines)
if(NOT n_lines EQUAL 1)
  message(FATAL_ERROR "${TABLE}: ${n_lines} rows named '${ROW}', expected 1")
endif()
string(REPLACE " | " ";" fields "${lines}")
list(LENGTH fields n_fields)
if(NOT n_fields EQUAL 4)
  message(FATAL_ERROR "${TABLE}: row '${ROW}' has ${n_fields} fields, expected 4: ${lines}")
endif()
list(GET fields 1 expected_exit)
list(GET fields 2 arguments)
list(GET fields 3 words)
string(STRIP "${expected_exit}" expected_exit)
string(STRIP "${arguments}" arguments)
separate_arguments(words UNIX_COMMAND "${words}")

# A fresh, empty directory for the row; nothing may be left in it.
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
string(REPLACE "@DIR@" "'${DIR}'" arguments "${arguments}")
string(REPLACE "@FILES@" "'${FILES}'" arguments "${arguments}")

# Output targets outside the row's directory (/dev/full, /sys/...): note which exist now.
string(REGEX MATCHALL "(-o|--output) +[^ ]+" outputs "${arguments}")
set(targets "")
set(existing_targets "")
foreach(output IN LISTS outputs)
  string(REGEX REPLACE "^(-o|--output) +" "" target "${output}")
  string(REPLACE "'" "" target "${target}")
  if(NOT target STREQUAL "")
    list(APPEND targets "${target}")
    if(EXISTS "${target}")
      list(APPEND existing_targets "${target}")
    endif()
  endif()
endforeach()

# Through the shell, so the table's arguments are shell words: '' is an empty argument and
# >/dev/full sends stdout there. The saved roofline, if any, lives in the row's directory.
set(ENV{KVBENCH_ROOFLINE_DIR} "${DIR}")
execute_process(COMMAND sh -c "'${KVBENCH}' ${arguments}"
  RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)

set(context "kvbench ${arguments}\nexit ${code}\nstdout:\n${out}\nstderr:\n${err}")
if(NOT code STREQUAL expected_exit)
  message(FATAL_ERROR "exit status ${code}, expected ${expected_exit}\n${context}")
endif()
if(NOT out STREQUAL "")
  message(FATAL_ERROR "bad input printed to stdout\n${context}")
endif()
# stderr: warnings, then exactly one error line, last.
# (";" would split a line in two: CMake lists are ";"-separated.)
string(REPLACE ";" "," err_text "${err}")
string(REGEX MATCHALL "[^\n]*\n" err_lines "${err_text}")
set(error_line "")
foreach(line IN LISTS err_lines)
  if(NOT error_line STREQUAL "")
    message(FATAL_ERROR "a line follows the error line\n${context}")
  endif()
  if(line MATCHES "^kvbench: error: ")
    set(error_line "${line}")
  elseif(NOT line MATCHES "^kvbench: warning: ")
    message(FATAL_ERROR "stderr line is neither a kvbench warning nor its error: ${line}\n${context}")
  endif()
endforeach()
if(error_line STREQUAL "")
  message(FATAL_ERROR "no 'kvbench: error: ' line on stderr\n${context}")
endif()
foreach(word IN LISTS words)
  string(FIND "${error_line}" "${word}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the error line does not say '${word}'\n${context}")
  endif()
endforeach()

file(GLOB_RECURSE left_behind LIST_DIRECTORIES true "${DIR}/*")
if(left_behind)
  message(FATAL_ERROR "a failed run left files behind: ${left_behind}\n${context}")
endif()
foreach(target IN LISTS targets)
  file(GLOB temporaries "${target}.*")
  if(temporaries)
    message(FATAL_ERROR "a failed run left files behind: ${temporaries}\n${context}")
  endif()
  if(NOT target IN_LIST existing_targets AND EXISTS "${target}")
    message(FATAL_ERROR "a failed run created ${target}\n${context}")
  endif()
endforeach()
