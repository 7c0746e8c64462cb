# Helpers shared by every folder.
#
#   aiperf_add_component(name SOURCES ... [PUBLIC_DEPS ...] [PRIVATE_DEPS ...])
#     -> library aiperf_<name>, alias aiperf::<name>; headers are included by
#        their path from the repository root ("runtime/sse/sse_parser.hpp").
#   aiperf_add_test(name SOURCES ... DEPS ... [LABELS ...])
#     -> gtest executable registered with ctest, one ctest entry per TEST.
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

function(aiperf_add_test name)
  cmake_parse_arguments(arg "" "" "SOURCES;DEPS;LABELS" ${ARGN})
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
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST
    PROPERTIES LABELS "${labels}" TIMEOUT 300
    ENVIRONMENT "AIPERF_NODE_BIN=$<TARGET_FILE:aiperf-node>")
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
