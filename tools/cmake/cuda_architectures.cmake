# The GPU present (native) when there is one; else Orin (87) and Hopper (90),
# plus Xavier (72) when this toolkit still compiles it (CUDA 13 does not).
function(polarpipe_pick_cuda_architectures out)
  execute_process(COMMAND nvidia-smi --query-gpu=compute_cap --format=csv,noheader
                  OUTPUT_VARIABLE caps RESULT_VARIABLE rc ERROR_QUIET)
  if(rc EQUAL 0 AND caps MATCHES "[0-9]")
    set(${out} native PARENT_SCOPE)
    return()
  endif()
  set(archs 87 90)
  execute_process(COMMAND ${CMAKE_CUDA_COMPILER} --list-gpu-arch OUTPUT_VARIABLE listed ERROR_QUIET)
  if(listed MATCHES "compute_72")
    list(PREPEND archs 72)
  endif()
  set(${out} ${archs} PARENT_SCOPE)
endfunction()
