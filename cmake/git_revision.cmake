# Writes OUTPUT with the source tree's git revision, touching it only when the text changes so an unchanged
# revision costs no rebuild.
# A copy of the tree sent to a build machine carries its revision in .git_revision (git-ignored, written
# where the checkout is): it wins, because such a copy may also hold a stale .git that would name an older
# commit. Otherwise git says, but only when SOURCE_DIR is the top level of its own repository: an unpacked
# archive placed inside some other work tree would otherwise record that tree's commit. Anything else is
# `unknown`.
set(rev "")
if(EXISTS "${SOURCE_DIR}/.git_revision")
  file(STRINGS "${SOURCE_DIR}/.git_revision" rev LIMIT_COUNT 1)
endif()

function(source_is_repository_top_level source_dir result)
  set(${result} FALSE PARENT_SCOPE)
  execute_process(COMMAND git -C "${source_dir}" rev-parse --show-toplevel
                  OUTPUT_VARIABLE top OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR top STREQUAL "")
    return()
  endif()
  file(REAL_PATH "${source_dir}" source_real)
  file(REAL_PATH "${top}" top_real)
  if(source_real STREQUAL top_real)
    set(${result} TRUE PARENT_SCOPE)
  endif()
endfunction()

if(rev STREQUAL "")
  source_is_repository_top_level("${SOURCE_DIR}" own_repository)
  if(own_repository)
    execute_process(COMMAND git -C "${SOURCE_DIR}" describe --always --dirty --abbrev=12
                    OUTPUT_VARIABLE rev OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      set(rev "")
    endif()
  endif()
endif()
if(rev STREQUAL "")
  set(rev "unknown")
endif()

set(text "// Generated at build time by cmake/git_revision.cmake.\nnamespace gpu_bench {\nextern const char* const git_revision;\nconst char* const git_revision = \"${rev}\";\n}  // namespace gpu_bench\n")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE "${OUTPUT}" "${text}")
endif()
