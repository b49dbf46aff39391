# `cmake --install build --prefix P`: the tools, the recorder shim and the reference driver, and
# the libraries a program links (cltrace::ddi, cltrace::format, cltrace::check) with their public
# headers,
# a CMake package (find_package(cltrace)) and a pkg-config file (cltrace.pc).
#
#   P/bin/                 cltrace, cltrace-workload, cltrace-inspector (when built)
#   P/lib/                 libcltrace_shim.so, libcltrace_refdriver.so (`cltrace record` looks
#                          for the shim in <bin>/../lib and defaults to the driver beside it),
#                          libcltrace_rules.a, libcltrace_format.a, libcltrace_check.a
#   P/include/cltrace/     format/*.h (with the generated ddi_abi.h, call_ids.h, call_traits.h,
#                          call_codec_gen.h, trace.pb.h), check/*.h, rules/*.h (with
#                          rule_list.inc, the registry they expand), cltrace_version.h; a
#                          program keeps the tree's include style: #include "format/trace_reader.h"
#   P/lib/cmake/cltrace/   cltraceConfig.cmake, cltraceConfigVersion.cmake, cltraceTargets.cmake
#   P/lib/pkgconfig/       cltrace.pc
#   P/share/bash-completion/completions/cltrace
#   P/share/doc/cltrace/   LICENSE, README.md
# Internal headers (*_internal.h, internal/, testing/) are not installed: no public header
# includes them.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(CLTRACE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/cltrace)
set(CLTRACE_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/cltrace)

# Tools and the two shared objects `cltrace record` loads.
foreach(tool cltrace cltrace-workload cltrace-inspector)
  if(TARGET ${tool})
    install(TARGETS ${tool} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()
# Always P/lib (not a multiarch libdir): `cltrace record` looks for the shim in <bin>/../lib.
foreach(dso cltrace_shim cltrace_refdriver)
  if(TARGET ${dso})
    install(TARGETS ${dso} LIBRARY DESTINATION lib)
  endif()
endforeach()

# The libraries (static) and their exported targets cltrace::ddi (the DDI vocabulary),
# cltrace::format, cltrace::check, the header-only cltrace::ddi_abi that cltrace::ddi carries and
# cltrace::rules (the rule registry and state-machine table) that cltrace::check's headers include.
set_target_properties(cltrace_check PROPERTIES EXPORT_NAME check)
set_target_properties(cltrace_rules PROPERTIES EXPORT_NAME rules)
install(TARGETS cltrace_ddi_abi cltrace_ddi cltrace_rules cltrace_format cltrace_check
        EXPORT cltraceTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT cltraceTargets NAMESPACE cltrace:: DESTINATION ${CLTRACE_INSTALL_CMAKEDIR})

# Public headers: every header of ddi/, rules/, format/ and check/ but the *_internal.h ones
# (globbed so that a new public header is installed without touching this file).
install(FILES ${CMAKE_SOURCE_DIR}/rules/rule_list.inc DESTINATION ${CLTRACE_INSTALL_INCLUDEDIR}/rules)
foreach(component ddi rules format check)
  file(GLOB headers CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${component}/*.h)
  list(FILTER headers EXCLUDE REGEX "_internal\\.h$")
  install(FILES ${headers} DESTINATION ${CLTRACE_INSTALL_INCLUDEDIR}/${component})
endforeach()
install(FILES ${CLTRACE_GEN_DIR}/ddi/ddi_abi.h ${CLTRACE_GEN_DIR}/ddi/call_ids.h
              ${CLTRACE_GEN_DIR}/ddi/call_traits_gen.h ${CLTRACE_GEN_DIR}/ddi/call_traits_data.inc
        DESTINATION ${CLTRACE_INSTALL_INCLUDEDIR}/ddi)
install(FILES ${CLTRACE_FORMAT_GEN_DIR}/format/call_traits.h
              ${CLTRACE_FORMAT_GEN_DIR}/format/call_codec_gen.h
              ${CLTRACE_TRACE_PROTO_HDRS}
        DESTINATION ${CLTRACE_INSTALL_INCLUDEDIR}/format)
install(FILES ${CLTRACE_VERSION_GEN_DIR}/cltrace_version.h DESTINATION ${CLTRACE_INSTALL_INCLUDEDIR})

# CMake package. The libraries are static, so a consumer links their dependencies itself:
# cltraceConfig.cmake finds them (find_dependency) before it loads the targets.
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/cltraceConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/cmake/cltraceConfig.cmake
                              INSTALL_DESTINATION ${CLTRACE_INSTALL_CMAKEDIR})
# 0.x: a minor version may break the API, so only the same major.minor is compatible.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/cmake/cltraceConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/cmake/cltraceConfig.cmake
              ${CMAKE_BINARY_DIR}/cmake/cltraceConfigVersion.cmake
        DESTINATION ${CLTRACE_INSTALL_CMAKEDIR})

# pkg-config (libraries are static: `pkg-config --static --libs cltrace` adds the dependencies).
# The .pc file is relocatable: its prefix is ${pcfiledir}/<this relative path>.
file(RELATIVE_PATH CLTRACE_PC_TO_PREFIX ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig
     ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" CLTRACE_PC_TO_PREFIX "${CLTRACE_PC_TO_PREFIX}")
configure_file(${CMAKE_SOURCE_DIR}/cmake/cltrace.pc.in ${CMAKE_BINARY_DIR}/cmake/cltrace.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/cmake/cltrace.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

install(FILES ${CMAKE_SOURCE_DIR}/scripts/completion/cltrace.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME cltrace)
install(FILES ${CMAKE_SOURCE_DIR}/LICENSE ${CMAKE_SOURCE_DIR}/README.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
