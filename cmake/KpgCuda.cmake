# Locates the CUDA Toolkit headers. Only headers are needed at build time:
# libcuda.so.1 and libnvrtc are opened at run time (dlopen), so the programs
# build and start on machines without a driver.
set(_kpg_cuda_hints)
foreach(_v CUDAToolkit_ROOT CUDA_HOME CUDA_PATH)
  if(DEFINED ${_v})
    list(APPEND _kpg_cuda_hints ${${_v}})
  endif()
  if(DEFINED ENV{${_v}})
    list(APPEND _kpg_cuda_hints $ENV{${_v}})
  endif()
endforeach()
list(APPEND _kpg_cuda_hints /usr/local/cuda)

find_path(KPG_CUDA_INCLUDE_DIR NAMES cuda.h nvrtc.h
          HINTS ${_kpg_cuda_hints} PATH_SUFFIXES include NO_DEFAULT_PATH)
if(NOT KPG_CUDA_INCLUDE_DIR OR NOT EXISTS ${KPG_CUDA_INCLUDE_DIR}/nvrtc.h)
  string(REPLACE ";" ", " _kpg_where "${_kpg_cuda_hints}")
  message(FATAL_ERROR
    "CUDA Toolkit headers (cuda.h, nvrtc.h) not found; looked in: ${_kpg_where}.\n"
    "Install the CUDA Toolkit 12.4 or newer and set CUDA_HOME or "
    "CUDAToolkit_ROOT to its folder (default /usr/local/cuda).")
endif()

file(STRINGS ${KPG_CUDA_INCLUDE_DIR}/cuda.h _kpg_cuda_ver REGEX "^#define CUDA_VERSION [0-9]+")
string(REGEX REPLACE "^#define CUDA_VERSION ([0-9]+).*" "\\1" KPG_CUDA_VERSION "${_kpg_cuda_ver}")
if(KPG_CUDA_VERSION LESS 12040)
  message(FATAL_ERROR "CUDA Toolkit ${KPG_CUDA_VERSION} at ${KPG_CUDA_INCLUDE_DIR} is too old; 12.4 or newer is required.")
endif()
get_filename_component(KPG_CUDA_ROOT ${KPG_CUDA_INCLUDE_DIR} DIRECTORY)
message(STATUS "CUDA Toolkit headers: ${KPG_CUDA_INCLUDE_DIR} (CUDA_VERSION ${KPG_CUDA_VERSION})")

add_library(Kp::CudaHeaders INTERFACE IMPORTED)
# SYSTEM: the toolkit's headers are not ours to warn about.
set_target_properties(Kp::CudaHeaders PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES ${KPG_CUDA_INCLUDE_DIR}
  INTERFACE_SYSTEM_INCLUDE_DIRECTORIES ${KPG_CUDA_INCLUDE_DIR})
