# Registers one ctest test per row of cli_conventions.txt, cli.convention.<name>, each run by
# cli_convention_check.cmake. Included by tests/CMakeLists.txt.
set(cli_conventions_table ${CMAKE_CURRENT_SOURCE_DIR}/cli_conventions.txt)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${cli_conventions_table})
file(STRINGS ${cli_conventions_table} cli_convention_rows REGEX "^[a-z]")
foreach(row IN LISTS cli_convention_rows)
  string(REGEX MATCH "^[a-z0-9_.]+" name "${row}")
  add_test(NAME cli.convention.${name}
    COMMAND ${CMAKE_COMMAND} -DKVBENCH=$<TARGET_FILE:kvbench> -DTABLE=${cli_conventions_table} -DROW=${name}
            -DDIR=${CMAKE_CURRENT_BINARY_DIR}/cli_conventions/${name}
            -P ${CMAKE_CURRENT_SOURCE_DIR}/cli_convention_check.cmake)
endforeach()
