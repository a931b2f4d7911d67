# Writes the generator's seed logs (cmake -P): every scenario in every kernel era, small
# (the fuzzer mutates them; long inputs only slow it down), kernel text only (--raw).
file(MAKE_DIRECTORY ${OUT})
set(_seed 1)
foreach(_scenario streaming thrashing prefetch eviction unmap mixed)
    foreach(_era 6.0 6.12 6.13 2026)
        math(EXPR _seed "${_seed} + 1")
        execute_process(
            COMMAND ${GENERATOR} --scenario ${_scenario} --era ${_era} --gpus 2 --events 40
                    --seed ${_seed} --other-pids 1 --raw -o ${OUT}/gen-${_scenario}-${_era}.log
            RESULT_VARIABLE _rc)
        if(NOT _rc EQUAL 0)
            message(FATAL_ERROR "rocprof-kfd-gen failed for ${_scenario} ${_era}")
        endif()
    endforeach()
endforeach()
