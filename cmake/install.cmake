# Installation and packaging: headers, the library (SONAME with the major version), a CMake
# package (find_package(rocprofiler-sdk) -> rocprofiler-sdk::rocprofiler-sdk), a pkg-config
# file and the samples' sources.
include(CMakePackageConfigHelpers)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/rocprofiler-sdk
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT development)
install(FILES ${PROJECT_BINARY_DIR}/include/rocprofiler-sdk/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/rocprofiler-sdk COMPONENT development)

install(TARGETS rocprofiler-sdk rocprofiler-sdk-headers
        EXPORT rocprofiler-sdk-targets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT rocprofiler-sdk-targets
        NAMESPACE rocprofiler-sdk::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/rocprofiler-sdk COMPONENT development)

configure_package_config_file(
    ${PROJECT_SOURCE_DIR}/cmake/rocprofiler-sdk-config.cmake.in
    ${PROJECT_BINARY_DIR}/rocprofiler-sdk-config.cmake
    INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/rocprofiler-sdk)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/rocprofiler-sdk-config-version.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/rocprofiler-sdk-config.cmake
              ${PROJECT_BINARY_DIR}/rocprofiler-sdk-config-version.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/rocprofiler-sdk COMPONENT development)

file(RELATIVE_PATH PC_PREFIX_FROM_PCFILEDIR
     ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
configure_file(${PROJECT_SOURCE_DIR}/cmake/rocprofiler-sdk.pc.in
               ${PROJECT_BINARY_DIR}/rocprofiler-sdk.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/rocprofiler-sdk.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT development)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/samples/
        DESTINATION ${CMAKE_INSTALL_DATADIR}/rocprofiler-sdk/samples COMPONENT samples)
