# Writes OUTPUT with the source tree's git revision (`unavailable` outside a checkout), touching it only when
# the text changes so an unchanged revision costs no rebuild.
# A copy of the tree sent to a build machine carries its revision in .git_revision (git-ignored, written
# where the checkout is): it wins, because such a copy may also hold a stale .git that would name an older
# commit. Otherwise git says.
set(rev "")
if(EXISTS "${SOURCE_DIR}/.git_revision")
  file(STRINGS "${SOURCE_DIR}/.git_revision" rev LIMIT_COUNT 1)
endif()
if(rev STREQUAL "")
  execute_process(COMMAND git -C "${SOURCE_DIR}" describe --always --dirty --abbrev=12
                  OUTPUT_VARIABLE rev OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR rev STREQUAL "")
    set(rev "unavailable")
  endif()
endif()
set(text "// Generated at build time by cmake/git_revision.cmake.\nnamespace gpu_bench {\nextern const char* const git_revision;\nconst char* const git_revision = \"${rev}\";\n}  // namespace gpu_bench\n")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE "${OUTPUT}" "${text}")
endif()
