# Every dependency comes from a Debian package (scripts/install-deps).
find_package(nlohmann_json 3.10 REQUIRED)
find_package(fmt REQUIRED)
find_package(CLI11 REQUIRED)
find_package(Threads REQUIRED)
find_package(simdjson REQUIRED)  # large trace JSON
find_package(ZLIB REQUIRED)      # .json.gz traces
find_package(PkgConfig REQUIRED)
pkg_check_modules(LIBDEFLATE REQUIRED IMPORTED_TARGET libdeflate)  # fast CRC-32 of .json.gz members
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)  # mfu fleet: exporter and URL inputs
find_package(absl REQUIRED)      # flat hash maps on the trace hot paths
if(MFU_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(MFU_BUILD_BENCHMARKS)
  find_package(benchmark REQUIRED)
endif()
