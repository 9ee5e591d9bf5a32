//===- EmptyRegistry.cpp - A registry without compiled specs --------------===//
//
// The main build has no NVPTX objects (bench/gpu/prepare.sh makes them for
// the device check), so its runner lists nothing; its error paths are what
// test/GpuRunner checks.
//
//===----------------------------------------------------------------------===//

#include "Registry.h"

const AttnEntry attnEntries[] = {{nullptr, nullptr, 0, 0}};
const size_t attnNumEntries = 0;
