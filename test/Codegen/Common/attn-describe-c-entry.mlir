// RUN: attn-opt %s --attn-describe-c-entry --split-input-file --verify-diagnostics | FileCheck %s

// Causal softmax, q and k dynamic in N and M: every dynamic dimension is a
// size of its own (no spec names them), and the ops tie them with checks.
// CHECK-LABEL: module attributes {attn.c_entry = {
// The arrays: the arguments by their attn.input name, then the output
// [B, H, N, E] = [q.B, q.H, q.N, v.E] (attn.term C2).
// CHECK-SAME: arrays = [{c_name = "q", name = "q", shape = [1, 2, "q_d2", 8]},
// CHECK-SAME:           {c_name = "k", name = "k", shape = [1, 2, "k_d2", 8]},
// CHECK-SAME:           {c_name = "v", name = "v", shape = [1, 2, "v_d2", 4]},
// CHECK-SAME:           {c_name = "out", name = "out", output, shape = [1, 2, "q_d2", 4]}],
// CHECK-SAME: callee = "_mlir_ciface_f", entry = "attn_f",
// Checks: C1 M(k) = M(v) (a causal softmax term aligns N <= M bottom-right:
// no N = M check, C6).
// CHECK-SAME: equalities = {{\[}}["k_d2", "v_d2"]],
// Byte sizes: every array, then the N x M scores.
// CHECK-SAME: products = {{\[}}[1, 2, "q_d2", 8], [1, 2, "k_d2", 8], [1, 2, "v_d2", 4], [1, 2, "q_d2", 4], [1, 2, "q_d2", "k_d2"]],
// CHECK-SAME: sizes = ["q_d2", "k_d2", "v_d2"]
module {
  func.func @f(%q: tensor<1x2x?x8xf32> {attn.input = "q"}, %k: tensor<1x2x?x8xf32> {attn.input = "k"},
               %v: tensor<1x2x?x4xf32> {attn.input = "v"}) -> tensor<1x2x?x4xf32> {
    %0 = attn.term softmax (%q, %k, %v) mask causal : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x4xf32> -> tensor<1x2x?x4xf32>
    return %0 : tensor<1x2x?x4xf32>
  }
}

// -----

// FAVOR+ with a dynamic feature count m: omega [m, D] (C4) ties D, and the
// features N x m and M x m are byte sizes to check. An argument without
// attn.input is named arg<i>.
// CHECK-LABEL: module attributes {attn.c_entry = {
// CHECK-SAME: {c_name = "arg3", name = "arg3", shape = ["arg3_d0", 64]}
// CHECK-SAME: equalities = [],
// CHECK-SAME: products = {{\[}}[1, 1, 16, 64], [1, 1, 16, 64], [1, 1, 16, 64], ["arg3_d0", 64], [1, 1, 16, 64], [1, 1, 16, 16], [1, 1, 16, "arg3_d0"], [1, 1, 16, "arg3_d0"]],
// CHECK-SAME: sizes = ["arg3_d0"]
module {
  func.func @performer(%q: tensor<1x1x16x64xf32>, %k: tensor<1x1x16x64xf32>, %v: tensor<1x1x16x64xf32>,
                       %w: tensor<?x64xf32>) -> tensor<1x1x16x64xf32> {
    %0 = attn.term kernel favor_plus (%q, %k, %v) omega(%w : tensor<?x64xf32>) : tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32> -> tensor<1x1x16x64xf32>
    return %0 : tensor<1x1x16x64xf32>
  }
}

// -----

// Two terms and a gate. Term 1: M(k) = M(v) (C1), N = M under block_causal
// (C6). Term 2 (prior_blocks is not causal): M(k) = M(v) again, and its N is
// the output's (C2, attn.combine C2); and so is the gate's N.
// CHECK-LABEL: module attributes {attn.c_entry = {
// CHECK-SAME: equalities = {{\[}}["k_d2", "v_d2"], ["q_d2", "k_d2"], ["k_d2", "v_d2"], ["q2_d2", "q_d2"], ["g_d2", "q_d2"]],
module {
  func.func @mixed(%q: tensor<1x1x?x8xf32> {attn.input = "q"}, %k: tensor<1x1x?x8xf32> {attn.input = "k"},
                   %q2: tensor<1x1x?x8xf32> {attn.input = "q2"}, %v: tensor<1x1x?x8xf32> {attn.input = "v"},
                   %g: tensor<1x1x?x8xf32> {attn.input = "g"}) -> tensor<1x1x?x8xf32> {
    %0 = attn.term relu2 (%q, %k, %v) mask block_causal(4) : tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32> -> tensor<1x1x?x8xf32>
    %1 = attn.term kernel identity (%q2, %k, %v) mask prior_blocks(4) normalizer length : tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32> -> tensor<1x1x?x8xf32>
    %2 = attn.combine %0, %1 gate(%g) : tensor<1x1x?x8xf32>
    return %2 : tensor<1x1x?x8xf32>
  }
}

// -----

// An operand that is not an argument cannot be described.
module {
  func.func @computed(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
    %e = tensor.empty() : tensor<1x1x4x8xf32>
    // expected-error @below {{'attn.term' op has an operand that is not an argument of 'computed', which the C entry point cannot describe}}
    %0 = attn.term softmax (%q, %e, %q) : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
    return %0 : tensor<1x1x4x8xf32>
  }
}

// -----

// expected-error @below {{attn-describe-c-entry: more than one public function; name one with function=NAME}}
module {
  func.func @a(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
    return %q : tensor<1x1x4x8xf32>
  }
  func.func @b(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
    return %q : tensor<1x1x4x8xf32>
  }
}
