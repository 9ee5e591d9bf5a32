// RUN: attn-opt %s --attn-emit-c-entry --split-input-file --verify-diagnostics | FileCheck %s
// RUN: attn-opt %s --attn-emit-c-entry=packed --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=PACKED

// One dynamic size N tied to a second dynamic size M (a causal mask: N = M).
// Everything else becomes internal.
// CHECK:       llvm.func internal @_mlir_ciface_spec
// CHECK-LABEL: llvm.func @attn_t(
// CHECK-SAME:    %[[Q:[^:]+]]: !llvm.ptr, %[[OUT:[^:]+]]: !llvm.ptr, %[[N:[^:]+]]: i64, %[[M:[^:]+]]: i64) -> i32 attributes {dso_local}
// Sizes are positive: N < 1 or M < 1 is ATTN_BAD_SIZE.
// CHECK:       %[[ONE:.+]] = llvm.mlir.constant(1 : i64) : i64
// CHECK:       llvm.icmp "slt" %[[N]], %[[ONE]] : i64
// CHECK:       llvm.icmp "slt" %[[M]], %[[ONE]] : i64
// The equality N = M.
// CHECK:       llvm.icmp "ne" %[[N]], %[[M]] : i64
// bytes = 4 * 1 * 2 * N * 8, each step checked for overflow, then <= 2^62.
// CHECK:       %[[MAX:.+]] = llvm.mlir.constant(4611686018427387904 : i64) : i64
// CHECK:       %[[FOUR:.+]] = llvm.mlir.constant(4 : i64) : i64
// CHECK:       "llvm.intr.umul.with.overflow"(%[[FOUR]], %{{.+}}) : (i64, i64) -> !llvm.struct<(i64, i1)>
// CHECK:       %[[BY_N:.+]] = "llvm.intr.umul.with.overflow"(%{{.+}}, %[[N]])
// CHECK:       llvm.extractvalue %[[BY_N]][1] : !llvm.struct<(i64, i1)>
// CHECK:       %[[BY_8:.+]] = "llvm.intr.umul.with.overflow"
// CHECK:       %[[BYTES:.+]] = llvm.extractvalue %[[BY_8]][0] : !llvm.struct<(i64, i1)>
// CHECK:       llvm.icmp "ugt" %[[BYTES]], %[[MAX]] : i64
// One descriptor per array, allocated in the entry block.
// CHECK:       llvm.alloca %[[ONE]] x !llvm.struct<(ptr, ptr, i64, array<4 x i64>, array<4 x i64>)>
// CHECK:       llvm.cond_br %{{.+}}, ^[[BAD:.+]], ^[[PTRS:.+]]
// CHECK:     ^[[PTRS]]:
// CHECK:       llvm.icmp "eq" %[[Q]], %{{.+}} : !llvm.ptr
// CHECK:       llvm.cond_br %{{.+}}, ^[[NULL:.+]], ^[[CALL:.+]]
// The descriptor {q, q, 0, [1, 2, N, 8], [16 N, 8 N, 8, 1]}: strides are the
// suffix products of the sizes.
// CHECK:     ^[[CALL]]:
// CHECK:       llvm.insertvalue %[[Q]], %{{.+}}[0]
// CHECK:       llvm.insertvalue %[[Q]], %{{.+}}[1]
// CHECK:       llvm.insertvalue %{{.+}}, %{{.+}}[2]
// CHECK:       %[[EIGHT:.+]] = llvm.mlir.constant(8 : i64) : i64
// CHECK:       llvm.insertvalue %[[EIGHT]], %{{.+}}[3, 3]
// CHECK:       llvm.insertvalue %[[ONE]], %{{.+}}[4, 3]
// CHECK:       %[[S2:.+]] = llvm.mul %[[ONE]], %[[EIGHT]] overflow<nsw, nuw> : i64
// CHECK:       llvm.insertvalue %[[N]], %{{.+}}[3, 2]
// CHECK:       llvm.insertvalue %[[S2]], %{{.+}}[4, 2]
// CHECK:       %[[S1:.+]] = llvm.mul %[[S2]], %[[N]] overflow<nsw, nuw> : i64
// CHECK:       llvm.insertvalue %[[S1]], %{{.+}}[4, 1]
// CHECK:       llvm.call @_mlir_ciface_spec(
// CHECK:       llvm.return %{{.+}} : i32
// CHECK:     ^[[BAD]]:
// CHECK-NEXT:  %[[C1:.+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:  llvm.return %[[C1]] : i32
// CHECK:     ^[[NULL]]:
// CHECK-NEXT:  %[[C2:.+]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT:  llvm.return %[[C2]] : i32
// CHECK-NOT:   attn.c_entry
// CHECK-NOT:   @attn_t_packed
// Exported beside it: nothing to free in a module that keeps no workspace.
// CHECK-LABEL: llvm.func @attn_t_free_workspaces() attributes {dso_local}
// CHECK-NEXT:    llvm.return

// PACKED-LABEL: llvm.func @attn_t_packed(
// PACKED-SAME:    %[[ARRAYS:[^:]+]]: !llvm.ptr, %[[SIZES:[^:]+]]: !llvm.ptr) -> i32
// PACKED:         %[[P1:.+]] = llvm.getelementptr %[[ARRAYS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// PACKED:         llvm.load %[[P1]] : !llvm.ptr -> !llvm.ptr
// PACKED:         %[[S1:.+]] = llvm.getelementptr %[[SIZES]][1] : (!llvm.ptr) -> !llvm.ptr, i64
// PACKED:         llvm.load %[[S1]] : !llvm.ptr -> i64
// PACKED:         llvm.call @attn_t(
module attributes {attn.c_entry = {
    spec = "t", entry = "attn_t", callee = "_mlir_ciface_spec", source = "t.attn",
    sizes = ["N", "M"], size_c_names = ["N", "M"], static_sizes = [],
    arrays = [{name = "q", c_name = "q", shape = [1, 2, "N", 8]},
              {name = "out", c_name = "out", output, shape = [1, 2, "N", 8]}],
    equalities = [["N", "M"]],
    products = [[1, 2, "N", 8]]}} {
  llvm.func @_mlir_ciface_spec(%a: !llvm.ptr, %b: !llvm.ptr) {
    llvm.return
  }
}

// -----

// With attn-cache-workspaces' slots: attn_<name>_free_workspaces empties them.
// CHECK-LABEL: llvm.func @attn_w_free_workspaces() attributes {dso_local}
// CHECK-NEXT:    llvm.call @__attn_workspace_free_all() : () -> ()
// CHECK-NEXT:    llvm.return
module attributes {attn.c_entry = {
    spec = "w", entry = "attn_w", callee = "_mlir_ciface_spec", source = "",
    sizes = [], size_c_names = [], static_sizes = [],
    arrays = [{name = "q", c_name = "q", shape = [1]}, {name = "out", c_name = "out", output, shape = [1]}],
    equalities = [], products = []}} {
  llvm.func @_mlir_ciface_spec(%a: !llvm.ptr, %b: !llvm.ptr) {
    llvm.return
  }
  llvm.func internal @__attn_workspace_free_all() {
    llvm.return
  }
}

// -----

// expected-error @below {{attn-emit-c-entry: the module has no 'attn.c_entry' (attn-describe-c-entry makes it)}}
module {
}

// -----

// expected-error @below {{attn-emit-c-entry: the module has no function '_mlir_ciface_spec' taking 2 memref descriptors (attn-destination-abi's convention)}}
module attributes {attn.c_entry = {
    spec = "t", entry = "attn_t", callee = "_mlir_ciface_spec", source = "",
    sizes = [], size_c_names = [], static_sizes = [],
    arrays = [{name = "q", c_name = "q", shape = [1]}, {name = "out", c_name = "out", output, shape = [1]}],
    equalities = [], products = []}} {
}

// -----

// expected-error @below {{malformed 'attn.c_entry': an array}}
module attributes {attn.c_entry = {
    spec = "t", entry = "attn_t", callee = "f", source = "",
    sizes = [], size_c_names = [], static_sizes = [],
    arrays = [{name = "q", c_name = "q", shape = ["N"]}],
    equalities = [], products = []}} {
}
