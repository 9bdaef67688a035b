# mfu_embed_files(OUTPUT <dir/name.cc> FUNCTION <name> FILES <rel paths under data/>)
# Generates a C++ source holding each file's bytes, so the binary carries its
# own data (presets, accelerator database) and runs with no files beside it,
# and the header <build>/generated/mfu_embedded/<name>.h declaring
# mfu::base::<FUNCTION>() (include it as "mfu_embedded/<name>.h"; every
# target linking mfu_base has <build>/generated on its include path).
function(mfu_embed_files)
  cmake_parse_arguments(E "" "OUTPUT;FUNCTION" "FILES" ${ARGN})
  get_filename_component(header_name ${E_OUTPUT} NAME_WE)
  set(header ${PROJECT_BINARY_DIR}/generated/mfu_embedded/${header_name}.h)
  set(abs_files "")
  foreach(f IN LISTS E_FILES)
    list(APPEND abs_files ${PROJECT_SOURCE_DIR}/data/${f})
  endforeach()
  add_custom_command(
    OUTPUT ${E_OUTPUT} ${header}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${E_OUTPUT} -DHEADER=${header} -DFUNCTION=${E_FUNCTION}
            -DDATA_DIR=${PROJECT_SOURCE_DIR}/data "-DFILES=${E_FILES}"
            -P ${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake
    DEPENDS ${abs_files} ${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake
    COMMENT "Embedding data files into ${E_OUTPUT}"
    VERBATIM)
endfunction()
