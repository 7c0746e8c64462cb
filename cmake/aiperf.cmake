# Helpers shared by every folder.
#
#   aiperf_add_component(name SOURCES ... [PUBLIC_DEPS ...] [PRIVATE_DEPS ...])
#     -> library aiperf_<name>, alias aiperf::<name>; headers are included by
#        their path from the repository root ("runtime/sse/sse_parser.hpp").
#   aiperf_add_test(name SOURCES ... DEPS ... [LABELS ...]
#                   [INTEGRATION_TESTS gtest-filter])
#     -> gtest executable registered with ctest, one ctest entry per TEST.
#        Labels (tools/test runs and times them by label):
#          unit         the default: no sockets, no child processes, no
#                       sleeps; tools/test runs these in a network namespace
#                       where every connect fails
#          integration  the rest: loopback servers, child processes
#          actor        added automatically when a source includes
#                       tests/support/caf_gtest.hpp (deterministic actor tests)
#          conformance  against other implementations' servers or clients
#          e2e          whole benchmark runs; ctest runs them one at a time
#                       (RESOURCE_LOCK e2e), as they measure and need the
#                       machine's cores; a plain add_test() labelled e2e must
#                       set RESOURCE_LOCK e2e itself
#        INTEGRATION_TESTS: the tests of the executable that match the gtest
#        filter (e.g. "suite.*:other.name") are labelled integration instead
#        of LABELS, so one binary can hold a file's socket tests and its pure
#        ones.
#   aiperf_add_subdirectories()
#     -> add_subdirectory() for every child folder that has a CMakeLists.txt,
#        so adding a component never touches its parent's list.

set(AIPERF_WARNINGS -Wall -Wextra -Werror -Wno-missing-field-initializers)

function(aiperf_add_component name)
  cmake_parse_arguments(arg "" "" "SOURCES;PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  if(arg_SOURCES)
    add_library(aiperf_${name} STATIC ${arg_SOURCES})
    target_include_directories(aiperf_${name} PUBLIC ${PROJECT_SOURCE_DIR})
    target_compile_options(aiperf_${name} PRIVATE ${AIPERF_WARNINGS})
    target_link_libraries(aiperf_${name} PUBLIC ${arg_PUBLIC_DEPS}
                          PRIVATE ${arg_PRIVATE_DEPS})
  else()
    add_library(aiperf_${name} INTERFACE)
    target_include_directories(aiperf_${name} INTERFACE ${PROJECT_SOURCE_DIR})
    target_link_libraries(aiperf_${name} INTERFACE ${arg_PUBLIC_DEPS})
  endif()
  add_library(aiperf::${name} ALIAS aiperf_${name})
endfunction()

# Labels `test` (a plain add_test) with `labels`, locking e2e tests.
function(aiperf_set_test_labels test)
  set_tests_properties(${test} PROPERTIES LABELS "${ARGN}")
  if("e2e" IN_LIST ARGN)
    set_tests_properties(${test} PROPERTIES RESOURCE_LOCK e2e)
  endif()
endfunction()

# Registers the tests of gtest executable `name` that match `filter` (all
# when empty) with labels `labels`. gtest_discover_tests splits list-valued
# properties at ';', so labels and the lock are set by a script ctest runs
# after discovery, from the list of test names the discovery leaves.
function(_aiperf_discover name list filter labels)
  set(filter_args "")
  if(filter)
    set(filter_args TEST_FILTER "${filter}")
  endif()
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST TEST_LIST ${list}
    ${filter_args}
    PROPERTIES TIMEOUT 300
    ENVIRONMENT "AIPERF_NODE_BIN=$<TARGET_FILE:aiperf-node>")
  set(lock "")
  if("e2e" IN_LIST labels)
    set(lock "RESOURCE_LOCK e2e")
  endif()
  set(script "${CMAKE_CURRENT_BINARY_DIR}/${list}_labels.cmake")
  file(WRITE ${script}
    "foreach(t IN LISTS ${list})\n"
    "  set_tests_properties(\"\${t}\" PROPERTIES LABELS \"${labels}\" ${lock})\n"
    "endforeach()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${script})
endfunction()

function(aiperf_add_test name)
  cmake_parse_arguments(arg "" "INTEGRATION_TESTS" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${arg_SOURCES})
  target_compile_options(${name} PRIVATE ${AIPERF_WARNINGS})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})
  # The tree's files (bench patches, fixtures) by absolute path. A compile
  # definition, not an ENVIRONMENT entry: gtest_discover_tests splits a
  # list-valued property at ';', so only its first variable would arrive.
  target_compile_definitions(${name} PRIVATE AIPERF_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  target_link_libraries(${name} PRIVATE ${arg_DEPS} GTest::gmock GTest::gtest_main)
  set(labels unit)
  if(arg_LABELS)
    set(labels ${arg_LABELS})
  endif()
  set(integration_labels integration)
  # Deterministic actor tests get `actor` too (their own time budget).
  foreach(src ${arg_SOURCES})
    get_filename_component(path ${src} ABSOLUTE)
    file(STRINGS ${path} uses_fixture
         REGEX "#include \"tests/support/caf_gtest.hpp\"")
    if(uses_fixture)
      list(APPEND labels actor)
      list(APPEND integration_labels actor)
      break()
    endif()
  endforeach()
  if(arg_INTEGRATION_TESTS)
    _aiperf_discover(${name} ${name}_tests "-${arg_INTEGRATION_TESTS}" "${labels}")
    _aiperf_discover(${name} ${name}_integration_tests "${arg_INTEGRATION_TESTS}"
                     "${integration_labels}")
  else()
    _aiperf_discover(${name} ${name}_tests "" "${labels}")
  endif()
endfunction()

macro(aiperf_add_subdirectories)
  file(GLOB _aiperf_children LIST_DIRECTORIES true RELATIVE ${CMAKE_CURRENT_SOURCE_DIR}
       ${CMAKE_CURRENT_SOURCE_DIR}/*)
  list(SORT _aiperf_children)
  foreach(_child ${_aiperf_children})
    if(IS_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/${_child}
       AND EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${_child}/CMakeLists.txt)
      add_subdirectory(${_child})
    endif()
  endforeach()
endmacro()
