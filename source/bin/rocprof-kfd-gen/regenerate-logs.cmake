# Rewrites every log of share/kfd-logs/MANIFEST with the generator (cmake -P script).
# MANIFEST lines: "<name> <generator arguments...>"; '#' lines are comments. Each log
# <name>.log gets its expected records in <name>.expect.csv.
file(STRINGS ${LOGS_DIR}/MANIFEST entries)
foreach(entry IN LISTS entries)
    if(entry MATCHES "^#" OR entry STREQUAL "")
        continue()
    endif()
    separate_arguments(words UNIX_COMMAND "${entry}")
    list(POP_FRONT words name)
    execute_process(
        COMMAND ${GENERATOR} ${words} --output ${LOGS_DIR}/${name}.log --expect
                ${LOGS_DIR}/${name}.expect.csv RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "rocprof-kfd-gen failed for ${name}")
    endif()
    message(STATUS "wrote ${name}.log")
endforeach()
