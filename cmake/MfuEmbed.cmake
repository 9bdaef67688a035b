# mfu_embed_files(OUTPUT <file.cc> FUNCTION <name> FILES <rel paths under data/>)
# Generates a C++ source holding each file's bytes, so the binary carries its
# own data (presets, accelerator database) and runs with no files beside it.
function(mfu_embed_files)
  cmake_parse_arguments(E "" "OUTPUT;FUNCTION" "FILES" ${ARGN})
  set(abs_files "")
  foreach(f IN LISTS E_FILES)
    list(APPEND abs_files ${PROJECT_SOURCE_DIR}/data/${f})
  endforeach()
  add_custom_command(
    OUTPUT ${E_OUTPUT}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${E_OUTPUT} -DFUNCTION=${E_FUNCTION}
            -DDATA_DIR=${PROJECT_SOURCE_DIR}/data "-DFILES=${E_FILES}"
            -P ${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake
    DEPENDS ${abs_files} ${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake
    COMMENT "Embedding data files into ${E_OUTPUT}"
    VERBATIM)
endfunction()
