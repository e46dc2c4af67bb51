# Layers as build targets.  cmake/layers.txt names each layer, its folder and
# the layers below it.  Each layer gets an include root in the build tree
# holding links to its own folder and to those of the layers below it, and
# nothing else: "wait/internal.h" resolves from prims code, "prims/qnode.h"
# does not from wait code, so an internal include that reaches up fails to
# compile.  Public headers (include/hwsync/) are one folder that every layer
# sees; scripts/check_layers.py checks those includes (ctest label layout).
file(STRINGS ${CMAKE_SOURCE_DIR}/cmake/layers.txt hws_layer_lines REGEX "^layer ")
set(HWS_LAYERS)
foreach(line ${hws_layer_lines})
  string(REGEX REPLACE " +" ";" f "${line}")
  list(GET f 1 name)
  list(GET f 2 dir)
  list(LENGTH f n)
  set(lower)
  if(n GREATER 3)
    list(SUBLIST f 3 -1 lower)
  endif()
  foreach(l ${lower})
    if(NOT l IN_LIST HWS_LAYERS)
      message(FATAL_ERROR "cmake/layers.txt: ${name} lists ${l}, which is not a layer above it in the file")
    endif()
  endforeach()
  list(APPEND HWS_LAYERS ${name})
  set(HWS_LAYER_DIR_${name} ${dir})
  set(root ${CMAKE_BINARY_DIR}/layers/${name})
  file(REMOVE_RECURSE ${root})
  file(MAKE_DIRECTORY ${root})
  foreach(l ${lower} ${name})
    file(CREATE_LINK ${CMAKE_SOURCE_DIR}/${HWS_LAYER_DIR_${l}} ${root}/${l} SYMBOLIC)
  endforeach()
endforeach()

# hws_layer(TARGET LAYER): TARGET's code belongs to LAYER: it sees the public
# headers and LAYER's include root only.
function(hws_layer target layer)
  if(NOT layer IN_LIST HWS_LAYERS)
    message(FATAL_ERROR "hws_layer: ${layer} is not a layer of cmake/layers.txt")
  endif()
  target_include_directories(${target} PRIVATE ${CMAKE_SOURCE_DIR}/include
    ${CMAKE_BINARY_DIR}/layers/${layer})
endfunction()

# The sources of a layer: every .c (and .cpp) file of its folder.
function(hws_layer_sources var layer)
  file(GLOB s CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${HWS_LAYER_DIR_${layer}}/*.c
    ${CMAKE_SOURCE_DIR}/${HWS_LAYER_DIR_${layer}}/*.cpp)
  set(${var} ${s} PARENT_SCOPE)
endfunction()
