# Runs one kvbench command and checks what it promises: exit code, output, and the file it
# writes (or must not write). Invoked by ctest as
#   cmake -DKVBENCH=<exe> -DARGS=<|-separated arguments> [-DEXIT=n] [-DSTDOUT=regex] [-DSTDERR=regex]
#         [-DSTDERR_NOT=regex] [-DFILE=path -DFILE_REGEX=regex | -DNO_FILE=path] [-DFRESH_DIR=dir]
#         -P cli_check.cmake
# FRESH_DIR is emptied before the run, so the test sees the same state every time.
string(REPLACE "|" ";" ARGS "${ARGS}")
if(NOT DEFINED EXIT)
  set(EXIT 0)
endif()
if(FRESH_DIR)
  file(REMOVE_RECURSE "${FRESH_DIR}")
endif()
foreach(path IN ITEMS "${FILE}" "${NO_FILE}")
  if(path)
    file(REMOVE "${path}")
  endif()
endforeach()

execute_process(COMMAND ${KVBENCH} ${ARGS}
  RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)

if(NOT code EQUAL EXIT)
  message(FATAL_ERROR "exit code ${code}, expected ${EXIT}\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(DEFINED STDOUT AND NOT out MATCHES "${STDOUT}")
  message(FATAL_ERROR "stdout does not match '${STDOUT}':\n${out}")
endif()
if(DEFINED STDERR AND NOT err MATCHES "${STDERR}")
  message(FATAL_ERROR "stderr does not match '${STDERR}':\n${err}")
endif()
if(DEFINED STDERR_NOT AND err MATCHES "${STDERR_NOT}")
  message(FATAL_ERROR "stderr matches '${STDERR_NOT}' and should not:\n${err}")
endif()
if(FILE)
  if(NOT EXISTS "${FILE}")
    message(FATAL_ERROR "expected file ${FILE} was not written\nstderr:\n${err}")
  endif()
  file(READ "${FILE}" content)
  if(DEFINED FILE_REGEX AND NOT content MATCHES "${FILE_REGEX}")
    message(FATAL_ERROR "${FILE} does not match '${FILE_REGEX}':\n${content}")
  endif()
endif()
if(NO_FILE)
  file(GLOB leftovers "${NO_FILE}*")
  if(leftovers)
    message(FATAL_ERROR "a failed run left files behind: ${leftovers}")
  endif()
endif()
