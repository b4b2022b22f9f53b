# Writes OUTPUT, a header with kGitSha, at build time (not when CMake configures),
# so that a rebuild after a commit names the new commit in runs.git_sha and --version:
#   - ATTNSWEEP_GIT_SHA from the environment, when set (copies whose .git is absent
#     or stale: the GPU machine, a container);
#   - else `git rev-parse --short=12 HEAD` in SOURCE_DIR, plus "-dirty" when tracked
#     files differ from HEAD (as `git describe --dirty`);
#   - else "unknown".
# OUTPUT is rewritten only when its text changes, so an unchanged commit rebuilds nothing.
#   cmake -DSOURCE_DIR=<checkout> -DOUTPUT=<header> -P scripts/git_sha.cmake
if(NOT "$ENV{ATTNSWEEP_GIT_SHA}" STREQUAL "")
  set(sha "$ENV{ATTNSWEEP_GIT_SHA}")
else()
  execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY "${SOURCE_DIR}"
                  OUTPUT_VARIABLE sha OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE status ERROR_QUIET)
  if(status EQUAL 0 AND sha)
    execute_process(COMMAND git update-index -q --refresh WORKING_DIRECTORY "${SOURCE_DIR}"
                    OUTPUT_QUIET ERROR_QUIET)
    execute_process(COMMAND git diff-index --quiet HEAD -- WORKING_DIRECTORY "${SOURCE_DIR}"
                    RESULT_VARIABLE changed ERROR_QUIET)
    if(changed EQUAL 1)
      string(APPEND sha "-dirty")
    endif()
  else()
    set(sha "unknown")
  endif()
endif()
set(text "#pragma once\n// Generated at build time by scripts/git_sha.cmake; do not edit.\nnamespace attnsweep {\ninline constexpr const char* kGitSha = \"${sha}\";\n}  // namespace attnsweep\n")
set(old "")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUTPUT}" "${text}")
endif()
