// RUN: attn-opt %s --attn-cache-workspaces --split-input-file | FileCheck %s

// A workspace of the function's body (malloc'ed, its descriptor's field 0
// freed at the end) gets a slot: acquire(slot, n) for malloc(n) and
// release(slot, p) for free(p); the slots are emptied by a destructor.
// CHECK:       llvm.mlir.global internal @__attn_workspace_slot_0()
// CHECK:         %[[NULL:.+]] = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT:    llvm.return %[[NULL]]
// CHECK:       llvm.mlir.global internal @__attn_workspace_slot_1()
// CHECK-LABEL: llvm.func @body(
// CHECK-SAME:      %[[N:[^:]+]]: i64
// CHECK:         %[[SLOT0:.+]] = llvm.mlir.addressof @__attn_workspace_slot_0
// CHECK:         %[[P:.+]] = llvm.call @__attn_workspace_acquire(%[[SLOT0]], %[[N]])
// CHECK:         %[[SLOT1:.+]] = llvm.mlir.addressof @__attn_workspace_slot_1
// CHECK:         %[[Q:.+]] = llvm.call @__attn_workspace_acquire(%[[SLOT1]], %[[N]])
// CHECK:         %[[D:.+]] = llvm.insertvalue %[[P]], %{{.+}}[0]
// CHECK:         %[[E:.+]] = llvm.insertvalue %{{.+}}, %[[D]][1]
// CHECK:         %[[PP:.+]] = llvm.extractvalue %[[E]][0]
// CHECK:         %[[SLOT0_AGAIN:.+]] = llvm.mlir.addressof @__attn_workspace_slot_0
// CHECK-NEXT:    llvm.call @__attn_workspace_release(%[[SLOT0_AGAIN]], %[[PP]])
// CHECK:         %[[SLOT1_AGAIN:.+]] = llvm.mlir.addressof @__attn_workspace_slot_1
// CHECK-NEXT:    llvm.call @__attn_workspace_release(%[[SLOT1_AGAIN]], %[[Q]])
// CHECK-NOT:     @free
// CHECK:         llvm.return

// acquire: the slot's block (exchanged with NULL) if its capacity (the i64
// of its header) is at least n, else a fresh block of n + 64 bytes, its
// capacity written at the start; the caller gets the pointer past the
// header, or NULL.
// CHECK-LABEL: llvm.func internal @__attn_workspace_acquire(
// CHECK-SAME:      %[[S:[^:]+]]: !llvm.ptr, %[[BYTES:[^:]+]]: i64) -> !llvm.ptr
// CHECK:         %[[HELD:.+]] = llvm.atomicrmw xchg %[[S]], %{{.+}} acq_rel
// CHECK:         llvm.icmp "ne" %[[HELD]]
// CHECK:         %[[CAP:.+]] = llvm.load %[[HELD]] : !llvm.ptr -> i64
// CHECK:         llvm.icmp "uge" %[[CAP]], %[[BYTES]]
// CHECK:         %[[REUSED:.+]] = llvm.getelementptr %[[HELD]][64]
// CHECK-NEXT:    llvm.return %[[REUSED]]
// CHECK:         llvm.call @free(%[[HELD]])
// CHECK:         %[[TOTAL:.+]] = llvm.add %[[BYTES]], %{{.+}}
// CHECK:         %[[FRESH:.+]] = llvm.call @malloc(%[[TOTAL]])
// CHECK:         llvm.icmp "eq" %[[FRESH]]
// CHECK:         llvm.store %[[BYTES]], %[[FRESH]] : i64, !llvm.ptr
// CHECK:         %[[PAST:.+]] = llvm.getelementptr %[[FRESH]][64]
// CHECK-NEXT:    llvm.return %[[PAST]]
// CHECK:         llvm.return %{{.+}} : !llvm.ptr

// release: a block over 256 MiB is freed; any other goes to the slot, and
// the block the slot held (a concurrent call's) is freed.
// CHECK-LABEL: llvm.func internal @__attn_workspace_release(
// CHECK-SAME:      %[[S:[^:]+]]: !llvm.ptr, %[[PTR:[^:]+]]: !llvm.ptr)
// CHECK:         %[[BLOCK:.+]] = llvm.getelementptr %[[PTR]][-64]
// CHECK:         %[[CAP:.+]] = llvm.load %[[BLOCK]] : !llvm.ptr -> i64
// CHECK:         %[[MAX:.+]] = llvm.mlir.constant(268435456 : i64)
// CHECK:         llvm.icmp "ugt" %[[CAP]], %[[MAX]]
// CHECK:         %[[OLD:.+]] = llvm.atomicrmw xchg %[[S]], %[[BLOCK]] acq_rel
// CHECK:         llvm.icmp "ne" %[[OLD]]
// CHECK:         llvm.call @free(%[[OLD]])
// CHECK:         llvm.call @free(%[[BLOCK]])

// CHECK-LABEL: llvm.func internal @__attn_workspace_free_all()
// CHECK:         llvm.atomicrmw xchg
// CHECK:         llvm.call @free
// CHECK:         llvm.atomicrmw xchg
// CHECK:         llvm.call @free
// CHECK:         llvm.return
// CHECK:       llvm.mlir.global_dtors dtors = [@__attn_workspace_free_all]
llvm.func @malloc(i64) -> !llvm.ptr
llvm.func @free(!llvm.ptr)
llvm.func @body(%n: i64, %x: f32) {
  %p = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
  %q = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
  %undef = llvm.mlir.undef : !llvm.struct<(ptr, ptr, i64)>
  %d = llvm.insertvalue %p, %undef[0] : !llvm.struct<(ptr, ptr, i64)>
  %aligned = llvm.getelementptr %p[16] : (!llvm.ptr) -> !llvm.ptr, i8
  %e = llvm.insertvalue %aligned, %d[1] : !llvm.struct<(ptr, ptr, i64)>
  %a = llvm.extractvalue %e[1] : !llvm.struct<(ptr, ptr, i64)>
  llvm.store %x, %a : f32, !llvm.ptr
  llvm.store %x, %q : f32, !llvm.ptr
  %pp = llvm.extractvalue %e[0] : !llvm.struct<(ptr, ptr, i64)>
  llvm.call @free(%pp) : (!llvm.ptr) -> ()
  llvm.call @free(%q) : (!llvm.ptr) -> ()
  llvm.return
}

// -----

// Left as they were: an allocation in an OpenMP region (each thread's
// tile), one that is never freed here, and ones whose pointer escapes (a
// branch operand, stored as a value, passed to a call), since a free of it
// elsewhere could not be traced.
// CHECK-LABEL: llvm.func @left(
// CHECK-NOT:     __attn_workspace
// CHECK:         omp.parallel
// CHECK-COUNT-5: llvm.call @malloc
// CHECK-NOT:     __attn_workspace
// CHECK:         llvm.return
llvm.func @malloc(i64) -> !llvm.ptr
llvm.func @free(!llvm.ptr)
llvm.func @keep(!llvm.ptr)
llvm.func @left(%n: i64, %slot: !llvm.ptr) {
  omp.parallel {
    %t = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
    llvm.call @free(%t) : (!llvm.ptr) -> ()
    omp.terminator
  }
  %kept = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
  %a = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
  %b = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
  llvm.store %b, %slot : !llvm.ptr, !llvm.ptr
  llvm.call @free(%b) : (!llvm.ptr) -> ()
  %c = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
  llvm.call @keep(%c) : (!llvm.ptr) -> ()
  llvm.call @free(%c) : (!llvm.ptr) -> ()
  llvm.br ^end(%a : !llvm.ptr)
^end(%p: !llvm.ptr):
  llvm.call @free(%p) : (!llvm.ptr) -> ()
  llvm.return
}

// -----

// A module's own destructors stay, the slots' one is appended.
// CHECK:       llvm.mlir.global_dtors dtors = [@other, @__attn_workspace_free_all]
// CHECK-SAME:    priorities = [1 : i32, 65535 : i32]
llvm.func @malloc(i64) -> !llvm.ptr
llvm.func @free(!llvm.ptr)
llvm.func @other() {
  llvm.return
}
llvm.mlir.global_dtors dtors = [@other], priorities = [1 : i32], data = [#llvm.zero]
llvm.func @body(%n: i64) {
  %p = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
  llvm.call @free(%p) : (!llvm.ptr) -> ()
  llvm.return
}
