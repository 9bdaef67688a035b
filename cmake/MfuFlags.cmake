# Warnings and sanitizers live on an INTERFACE target linked PRIVATE by our own
# targets only (simdjson's developer-options.cmake pattern).
add_library(mfu_internal_flags INTERFACE)
target_compile_options(mfu_internal_flags INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion
  -Wold-style-cast -Wformat=2 -Wimplicit-fallthrough -Wnon-virtual-dtor
  -Wfloat-equal)

if(MFU_SANITIZE)
  target_compile_options(mfu_internal_flags INTERFACE
    -fsanitize=${MFU_SANITIZE} -fno-sanitize-recover=all -fno-omit-frame-pointer)
  target_link_options(mfu_internal_flags INTERFACE -fsanitize=${MFU_SANITIZE})
endif()
