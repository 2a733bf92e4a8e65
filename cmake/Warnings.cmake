# Project-wide warning flags for our own targets (not for third-party code).
add_library(tracepipe_warnings INTERFACE)
target_compile_options(tracepipe_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion -Wnon-virtual-dtor
  -Wold-style-cast -Wcast-align -Woverloaded-virtual -Wimplicit-fallthrough
  $<$<BOOL:${TRACEPIPE_WERROR}>:-Werror>)
