# Registers one ctest test per row of bad_inputs.txt, cli.bad_input.<name>, each run by
# bad_input_check.cmake. Included by tests/CMakeLists.txt.
set(bad_inputs_table ${CMAKE_CURRENT_SOURCE_DIR}/bad_inputs.txt)
# A row added to the table is a test at the next build, without a manual re-configure.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${bad_inputs_table})
file(STRINGS ${bad_inputs_table} bad_input_rows REGEX "^[a-z]")
foreach(row IN LISTS bad_input_rows)
  string(REGEX MATCH "^[a-z0-9_.]+" name "${row}")
  add_test(NAME cli.bad_input.${name}
    COMMAND ${CMAKE_COMMAND} -DKVBENCH=$<TARGET_FILE:kvbench> -DTABLE=${bad_inputs_table} -DROW=${name}
            -DDIR=${CMAKE_CURRENT_BINARY_DIR}/bad_inputs/${name} -DFILES=${CMAKE_CURRENT_SOURCE_DIR}/bad_input_files
            -P ${CMAKE_CURRENT_SOURCE_DIR}/bad_input_check.cmake)
endforeach()
