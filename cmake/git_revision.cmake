# Writes OUTPUT with the source tree's git revision (`unavailable` outside a checkout), touching it only when
# the text changes so an unchanged revision costs no rebuild.
execute_process(COMMAND git -C "${SOURCE_DIR}" describe --always --dirty --abbrev=12
                OUTPUT_VARIABLE rev OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
# A copy of the tree without .git (a build machine that got the sources only) may carry the revision in
# a .git_revision file written where the checkout was.
if((NOT rc EQUAL 0 OR rev STREQUAL "") AND EXISTS "${SOURCE_DIR}/.git_revision")
  file(STRINGS "${SOURCE_DIR}/.git_revision" rev LIMIT_COUNT 1)
endif()
if(NOT rc EQUAL 0 AND rev STREQUAL "")
  set(rev "unavailable")
endif()
set(text "// Generated at build time by cmake/git_revision.cmake.\nnamespace gpu_bench {\nextern const char* const git_revision;\nconst char* const git_revision = \"${rev}\";\n}  // namespace gpu_bench\n")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE "${OUTPUT}" "${text}")
endif()
