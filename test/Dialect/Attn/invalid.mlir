// RUN: attn-opt %s -split-input-file -verify-diagnostics

// C1: key batch size B must match the query
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<2x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op key has batch size B = 2 but query has batch size B = 1}}
  %0 = attn.term softmax (%q, %k, %v) : tensor<1x2x16x8xf32>, tensor<2x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C1: value batch size B must match the query
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<3x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op value has batch size B = 3 but query has batch size B = 1}}
  %0 = attn.term softmax (%q, %k, %v) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<3x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C1: key head count H must match the query
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x4x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op value has key/value head count H_kv = 2 but key has key/value head count H_kv = 4}}
  %0 = attn.term softmax (%q, %k, %v) : tensor<1x2x16x8xf32>, tensor<1x4x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C1: value head count H must match the query
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x1x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op value has key/value head count H_kv = 1 but key has key/value head count H_kv = 2}}
  %0 = attn.term softmax (%q, %k, %v) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x1x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C1: key feature size D must match the query
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x4xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op key has feature size D = 4 but query has feature size D = 8}}
  %0 = attn.term softmax (%q, %k, %v) : tensor<1x2x16x8xf32>, tensor<1x2x16x4xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C1: value key length M must match the key
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x32x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op value has key length M = 32 but key has key length M = 16}}
  %0 = attn.term softmax (%q, %k, %v) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x32x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C1: mismatches are caught next to dynamic sizes
func.func @f(%q: tensor<?x?x?x8xf32>, %k: tensor<?x?x?x4xf32>, %v: tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  // expected-error@+1 {{'attn.term' op key has feature size D = 4 but query has feature size D = 8}}
  %0 = attn.term softmax (%q, %k, %v) : tensor<?x?x?x8xf32>, tensor<?x?x?x4xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  return %0 : tensor<?x?x?x?xf32>
}

// -----

// C2: result batch size B must match the query
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<2x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op result has batch size B = 2 but query has batch size B = 1}}
  %0 = attn.term softmax (%q, %k, %v) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<2x2x16x8xf32>
  return %0 : tensor<2x2x16x8xf32>
}

// -----

// C2: result head count H must match the query
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x3x16x8xf32> {
  // expected-error@+1 {{'attn.term' op result has head count H = 3 but query has head count H = 2}}
  %0 = attn.term softmax (%q, %k, %v) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x3x16x8xf32>
  return %0 : tensor<1x3x16x8xf32>
}

// -----

// C2: result query length N must match the query
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x32x8xf32>, %v: tensor<1x2x32x8xf32>) -> tensor<1x2x32x8xf32> {
  // expected-error@+1 {{'attn.term' op result has query length N = 32 but query has query length N = 16}}
  %0 = attn.term softmax (%q, %k, %v) : tensor<1x2x16x8xf32>, tensor<1x2x32x8xf32>, tensor<1x2x32x8xf32> -> tensor<1x2x32x8xf32>
  return %0 : tensor<1x2x32x8xf32>
}

// -----

// C2: result value size E must match the value
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x16xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op result has value size E = 8 but value has value size E = 16}}
  %0 = attn.term softmax (%q, %k, %v) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x16xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C3: a kernel term needs a feature map
func.func @f(%q: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op score 'kernel' needs a feature map (identity, relu, elu1, favor_plus, cosformer or rfa)}}
  %0 = "attn.term"(%q, %q, %q) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>, score = #attn.score<kernel>}> : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C3: a softmax term takes no feature map
func.func @f(%q: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op score 'softmax' takes no feature map, got 'relu'}}
  %0 = "attn.term"(%q, %q, %q) <{feature_map = #attn.feature_map<relu>, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>, score = #attn.score<softmax>}> : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C3: a relu2 term takes no feature map
func.func @f(%q: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op score 'relu2' takes no feature map, got 'identity'}}
  %0 = "attn.term"(%q, %q, %q) <{feature_map = #attn.feature_map<identity>, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>, score = #attn.score<relu2>}> : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C3 (syntax): a kernel term spells its feature map after the score
func.func @f(%q: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{expected feature map (identity, relu, elu1, favor_plus, cosformer or rfa)}}
  %0 = attn.term kernel (%q, %q, %q) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C3 (syntax): a softmax term has no place for a feature map
func.func @f(%q: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{expected '('}}
  %0 = attn.term softmax relu (%q, %q, %q) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C4: favor_plus needs omega
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op feature map 'favor_plus' needs the random features omega [m, D]}}
  %0 = attn.term kernel favor_plus (%q, %k, %v) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C4: omega is only for favor_plus
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>, %w: tensor<4x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op omega is only used by feature maps 'favor_plus' and 'rfa'}}
  %0 = attn.term kernel elu1 (%q, %k, %v) omega(%w : tensor<4x8xf32>) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C4: omega is only for favor_plus (not for softmax either)
func.func @f(%q: tensor<1x2x16x8xf32>, %w: tensor<4x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op omega is only used by feature maps 'favor_plus' and 'rfa'}}
  %0 = "attn.term"(%q, %q, %q, %w) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>, score = #attn.score<softmax>}> : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<4x8xf32>) -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C4: omega needs m > 0
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>, %w: tensor<0x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op omega needs at least one feature row (m > 0)}}
  %0 = attn.term kernel favor_plus (%q, %k, %v) omega(%w : tensor<0x8xf32>) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C4: omega is [m, D]
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>, %w: tensor<16x4xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op omega has 4 columns but the feature size D = 8}}
  %0 = attn.term kernel favor_plus (%q, %k, %v) omega(%w : tensor<16x4xf32>) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C5: kv_first needs a kernel term (softmax)
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op order 'kv_first' needs the product form of a 'kernel' term, but the score is 'softmax'}}
  %0 = attn.term softmax (%q, %k, %v) order kv_first : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C5: kv_first needs a kernel term (relu2)
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op order 'kv_first' needs the product form of a 'kernel' term, but the score is 'relu2'}}
  %0 = attn.term relu2 (%q, %k, %v) order kv_first : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C6: block_causal needs N = M
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x32x8xf32>, %v: tensor<1x2x32x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op mask 'block_causal' needs as many queries as keys, but N = 16 and M = 32}}
  %0 = attn.term softmax (%q, %k, %v) mask block_causal(4) : tensor<1x2x16x8xf32>, tensor<1x2x32x8xf32>, tensor<1x2x32x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C6: block_causal needs N = M
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x32x8xf32>, %v: tensor<1x2x32x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op mask 'block_causal' needs as many queries as keys, but N = 16 and M = 32}}
  %0 = attn.term relu2 (%q, %k, %v) mask block_causal(4) : tensor<1x2x16x8xf32>, tensor<1x2x32x8xf32>, tensor<1x2x32x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C7: projection is not allowed with a causal mask
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>, %e: tensor<4x16xf32>, %f: tensor<4x16xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op projection is not allowed with mask 'causal'}}
  %0 = attn.term softmax (%q, %k, %v) project(%e, %f : tensor<4x16xf32>, tensor<4x16xf32>) mask causal : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C7: projection is not allowed with a block mask
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>, %e: tensor<4x16xf32>, %f: tensor<4x16xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op projection is not allowed with mask 'block'}}
  %0 = attn.term softmax (%q, %k, %v) project(%e, %f : tensor<4x16xf32>, tensor<4x16xf32>) mask block(4) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C7: projection is not allowed with a prior_blocks mask
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>, %e: tensor<4x16xf32>, %f: tensor<4x16xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op projection is not allowed with mask 'prior_blocks'}}
  %0 = attn.term kernel identity (%q, %k, %v) project(%e, %f : tensor<4x16xf32>, tensor<4x16xf32>) mask prior_blocks(4) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C7: E and F have the same number of rows k
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>, %e: tensor<4x16xf32>, %f: tensor<8x16xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op key projection E has 4 rows but value projection F has 8}}
  %0 = attn.term softmax (%q, %k, %v) project(%e, %f : tensor<4x16xf32>, tensor<8x16xf32>) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C7: E is [k, M]
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>, %e: tensor<4x32xf32>, %f: tensor<4x16xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op key projection E has 32 columns but the key length M = 16}}
  %0 = attn.term softmax (%q, %k, %v) project(%e, %f : tensor<4x32xf32>, tensor<4x16xf32>) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C7: F is [k, M]
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>, %e: tensor<4x16xf32>, %f: tensor<4x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op value projection F has 8 columns but the key length M = 16}}
  %0 = attn.term softmax (%q, %k, %v) project(%e, %f : tensor<4x16xf32>, tensor<4x8xf32>) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C7: projection needs k > 0
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>, %e: tensor<0x16xf32>, %f: tensor<0x16xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op projection needs at least one row (k > 0)}}
  %0 = attn.term softmax (%q, %k, %v) project(%e, %f : tensor<0x16xf32>, tensor<0x16xf32>) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C7: projection needs both E and F (only E)
func.func @f(%q: tensor<1x2x16x8xf32>, %e: tensor<4x16xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op projection needs both E (for the keys) and F (for the values)}}
  %0 = "attn.term"(%q, %q, %q, %e) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>, score = #attn.score<softmax>}> : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<4x16xf32>) -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C7: projection needs both E and F (only F)
func.func @f(%q: tensor<1x2x16x8xf32>, %f: tensor<4x16xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op projection needs both E (for the keys) and F (for the values)}}
  %0 = "attn.term"(%q, %q, %q, %f) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>, score = #attn.score<softmax>}> : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<4x16xf32>) -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C8: scale must be positive (zero)
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op scale must be finite and positive, got 0.000000e+00}}
  %0 = attn.term softmax (%q, %k, %v) scale 0.0 : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C8: scale must be positive (negative)
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op scale must be finite and positive, got -1.250000e-01}}
  %0 = attn.term relu2 (%q, %k, %v) scale -0.125 : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C8: scale must be finite (+inf)
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op scale must be finite and positive, got INF}}
  %0 = attn.term softmax (%q, %k, %v) scale 0x7FF0000000000000 : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C8: scale is not used by kernel elu1
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op scale is not used by a 'kernel' term with feature map 'elu1'}}
  %0 = attn.term kernel elu1 (%q, %k, %v) scale 0.5 : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C8: scale is not used by kernel identity
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op scale is not used by a 'kernel' term with feature map 'identity'}}
  %0 = attn.term kernel identity (%q, %k, %v) scale 0.5 : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C8: scale is not used by kernel cosformer
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op scale is not used by a 'kernel' term with feature map 'cosformer'}}
  %0 = attn.term kernel cosformer (%q, %k, %v) scale 0.5 : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C9: eps must be non-negative
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op eps must be finite and non-negative, got -1.000000e-03}}
  %0 = attn.term softmax (%q, %k, %v) eps -1.0e-3 : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C9: eps must be finite (NaN)
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op eps must be finite and non-negative, got nan}}
  %0 = attn.term kernel elu1 (%q, %k, %v) eps 0x7FF8000000000000 : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C9: eps only with rows (explicit length)
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op eps is only used by the 'rows' normalizer, but the normalizer is 'length'}}
  %0 = attn.term softmax (%q, %k, %v) normalizer length eps 1.0e-6 : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C9: eps only with rows (explicit none)
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op eps is only used by the 'rows' normalizer, but the normalizer is 'none'}}
  %0 = attn.term kernel relu (%q, %k, %v) normalizer none eps 1.0e-6 : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C9: eps only with rows (relu2 defaults to length)
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op eps is only used by the 'rows' normalizer, but the normalizer is 'length'}}
  %0 = attn.term relu2 (%q, %k, %v) eps 1.0e-6 : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C10: chunk must be positive (zero)
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op chunk must be positive, got 0}}
  %0 = attn.term softmax (%q, %k, %v) chunk 0 : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C10: chunk must be positive (negative)
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op chunk must be positive, got -64}}
  %0 = attn.term kernel elu1 (%q, %k, %v) chunk -64 : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// Mask: unknown mask kind
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{unknown mask 'sliding'; expected none, causal, block(c), block_causal(c), prior_blocks(c) or window(l, r)}}
  %0 = attn.term softmax (%q, %k, %v) mask sliding : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// Mask: block needs a block size
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{mask 'block' needs a block size: block(c)}}
  %0 = attn.term softmax (%q, %k, %v) mask block : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// Mask: block_causal needs a block size
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{mask 'block_causal' needs a block size: block_causal(c)}}
  %0 = attn.term relu2 (%q, %k, %v) mask block_causal : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// Mask: prior_blocks needs a block size
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{mask 'prior_blocks' needs a block size: prior_blocks(c)}}
  %0 = attn.term kernel identity (%q, %k, %v) mask prior_blocks : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// Mask: causal takes no block size
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{mask 'causal' takes no block size}}
  %0 = attn.term softmax (%q, %k, %v) mask causal(4) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C10: mask blocks are positive (block(0))
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{mask 'block' needs a positive block size, got 0}}
  %0 = attn.term softmax (%q, %k, %v) mask block(0) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C10: mask blocks are positive (block_causal(-8))
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{mask 'block_causal' needs a positive block size, got -8}}
  %0 = attn.term relu2 (%q, %k, %v) mask block_causal(-8) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C10: mask blocks are positive (prior_blocks(0))
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{mask 'prior_blocks' needs a positive block size, got 0}}
  %0 = attn.term kernel identity (%q, %k, %v) mask prior_blocks(0) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// Mask: the block size is an integer
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{expected integer value}}
  %0 = attn.term softmax (%q, %k, %v) mask block(2.5) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// Mask attribute: unknown kind
// expected-error@+1 {{unknown mask 'strided'; expected none, causal, block(c), block_causal(c), prior_blocks(c) or window(l, r)}}
func.func @f() attributes {attn.mask = #attn.mask<strided>} {
  return
}

// -----

// Mask attribute: block needs a block size
// expected-error@+1 {{mask 'block' needs a block size: block(c)}}
func.func @f() attributes {attn.mask = #attn.mask<block>} {
  return
}

// -----

// Mask attribute: none takes no block size
// expected-error@+1 {{mask 'none' takes no block size}}
func.func @f() attributes {attn.mask = #attn.mask<none(2)>} {
  return
}

// -----

// Mask attribute (C10): prior_blocks needs a positive block size
// expected-error@+1 {{mask 'prior_blocks' needs a positive block size, got -1}}
func.func @f() attributes {attn.mask = #attn.mask<prior_blocks(-1)>} {
  return
}

// -----

// Syntax: unknown score
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{unknown score 'linear'; expected softmax, relu2 or kernel}}
  %0 = attn.term linear (%q, %k, %v) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// Syntax: unknown feature map
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{unknown feature map 'favor'; expected identity, relu, elu1, favor_plus, cosformer or rfa}}
  %0 = attn.term kernel favor (%q, %k, %v) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// Syntax: unknown normalizer
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{unknown normalizer 'sum'; expected rows, length or none}}
  %0 = attn.term softmax (%q, %k, %v) normalizer sum : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// Syntax: unknown order
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{unknown order 'kq_first'; expected auto, qk_first, kv_first or recurrent}}
  %0 = attn.term kernel elu1 (%q, %k, %v) order kq_first : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// Syntax: duplicate clause
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{duplicate 'mask' clause}}
  %0 = attn.term softmax (%q, %k, %v) mask causal mask none : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// Syntax: duplicate clause (chunk auto counts)
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{duplicate 'chunk' clause}}
  %0 = attn.term softmax (%q, %k, %v) chunk auto chunk 64 : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// Syntax: scale is a float literal
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+2 {{unexpected decimal integer literal for a floating point value}}
  // expected-note@+1 {{add a trailing dot to make the literal a float}}
  %0 = attn.term softmax (%q, %k, %v) scale 1 : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// Enum attribute: unknown score
func.func @f() attributes {
  // expected-error@+2 {{expected ::mlir::attn::Score to be one of: softmax, relu2, kernel}}
  // expected-error@+1 {{failed to parse Attn_ScoreAttr parameter 'value' which is to be a `::mlir::attn::Score`}}
  attn.score = #attn.score<linear>} {
  return
}

// -----

// combine C1: at least one term (generic form: only a gate)
func.func @f(%g: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.combine' op needs at least one term}}
  %0 = "attn.combine"(%g) <{operandSegmentSizes = array<i32: 0, 1>}> : (tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// combine C1: at least one term (generic form: no operands at all)
func.func @f() -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.combine' op needs at least one term}}
  %0 = "attn.combine"() <{operandSegmentSizes = array<i32: 0, 0>}> : () -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// combine C2: the terms have the same type
func.func @f(%a: tensor<1x2x16x8xf32>, %b: tensor<1x2x16x4xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.combine' op every term and the gate must have the type 'tensor<1x2x16x8xf32>' (the result's shape, f32), got 'tensor<1x2x16x4xf32>'}}
  %0 = "attn.combine"(%a, %b) <{operandSegmentSizes = array<i32: 2, 0>}> : (tensor<1x2x16x8xf32>, tensor<1x2x16x4xf32>) -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// combine C2: the gate has the type of the terms
func.func @f(%a: tensor<1x2x16x8xf32>, %g: tensor<2x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.combine' op every term and the gate must have the type 'tensor<1x2x16x8xf32>' (the result's shape, f32), got 'tensor<2x2x16x8xf32>'}}
  %0 = "attn.combine"(%a, %g) <{operandSegmentSizes = array<i32: 1, 1>}> : (tensor<1x2x16x8xf32>, tensor<2x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// combine C2: the result has the shape of the terms
func.func @f(%a: tensor<1x2x16x8xf32>) -> tensor<1x2x16x4xf32> {
  // expected-error@+1 {{'attn.combine' op every term and the gate must have the type 'tensor<1x2x16x4xf32>' (the result's shape, f32), got 'tensor<1x2x16x8xf32>'}}
  %0 = "attn.combine"(%a) <{operandSegmentSizes = array<i32: 1, 0>}> : (tensor<1x2x16x8xf32>) -> tensor<1x2x16x4xf32>
  return %0 : tensor<1x2x16x4xf32>
}

// -----

// combine: the terms are 4-D f32 tensors
func.func @f(%a: tensor<2x16x8xf32>) -> tensor<2x16x8xf32> {
  // expected-error@+1 {{'attn.combine' op operand #0 must be variadic of 4D tensor of 32-bit float values, but got 'tensor<2x16x8xf32>'}}
  %0 = attn.combine %a : tensor<2x16x8xf32>
  return %0 : tensor<2x16x8xf32>
}

// -----

// Types C19: the query, key and value have one element type
func.func @f(%q: tensor<1x2x16x8xf16>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op query, key and value must have one element type, got 'f16', 'f32' and 'f32'}}
  %0 = attn.term softmax (%q, %k, %v) : tensor<1x2x16x8xf16>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// Types: the key is a 4-D tensor
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op operand #1 must be 4D tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<2x16x8xf32>'}}
  %0 = attn.term softmax (%q, %k, %v) : tensor<1x2x16x8xf32>, tensor<2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// Types: the value is a ranked tensor
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<*xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op operand #2 must be 4D tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<*xf32>'}}
  %0 = attn.term softmax (%q, %k, %v) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<*xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// Types C19: the result is f32, f16 or bf16
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf64> {
  // expected-error@+1 {{'attn.term' op result #0 must be 4D tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<1x2x16x8xf64>'}}
  %0 = attn.term softmax (%q, %k, %v) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf64>
  return %0 : tensor<1x2x16x8xf64>
}

// -----

// Types C19: only q, k and v may be narrow (omega is f32)
func.func @f(%q: tensor<1x2x16x8xbf16>, %k: tensor<1x2x16x8xbf16>, %v: tensor<1x2x16x8xbf16>, %w: tensor<4x8xbf16>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op operand #3 must be 2D tensor of 32-bit float values, but got 'tensor<4x8xbf16>'}}
  %0 = attn.term kernel favor_plus (%q, %k, %v) omega(%w : tensor<4x8xbf16>) : tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// combine C2: the terms are f32 even when the result is narrow
func.func @f(%a: tensor<1x2x16x8xbf16>) -> tensor<1x2x16x8xbf16> {
  // expected-error@+1 {{'attn.combine' op operand #0 must be variadic of 4D tensor of 32-bit float values, but got 'tensor<1x2x16x8xbf16>'}}
  %0 = attn.combine %a : tensor<1x2x16x8xbf16>
  return %0 : tensor<1x2x16x8xbf16>
}

// -----

// combine C4: the result is f32, f16 or bf16
func.func @f(%a: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf64> {
  // expected-error@+1 {{'attn.combine' op result #0 must be 4D tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<1x2x16x8xf64>'}}
  %0 = attn.combine %a : tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf64>
  return %0 : tensor<1x2x16x8xf64>
}

// -----

// Types: omega is a 2-D tensor
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>, %w: tensor<1x4x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op operand #3 must be 2D tensor of 32-bit float values, but got 'tensor<1x4x8xf32>'}}
  %0 = attn.term kernel favor_plus (%q, %k, %v) omega(%w : tensor<1x4x8xf32>) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// Types: the projections are f32 (operands are numbered as present: F is #4 without omega)
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>, %e: tensor<4x16xf32>, %f: tensor<4x16xf16>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op operand #4 must be 2D tensor of 32-bit float values, but got 'tensor<4x16xf16>'}}
  %0 = attn.term softmax (%q, %k, %v) project(%e, %f : tensor<4x16xf32>, tensor<4x16xf16>) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C1: sizes are positive
func.func @f(%q: tensor<1x2x0x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x0x8xf32> {
  // expected-error@+1 {{'attn.term' op query has a zero size: 'tensor<1x2x0x8xf32>'}}
  %0 = attn.term softmax (%q, %k, %v) : tensor<1x2x0x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x0x8xf32>
  return %0 : tensor<1x2x0x8xf32>
}

// -----

// C1: byte sizes fit in int64: 1·8·2^62·64 elements (a shape attnc rejects
// overflowed the element counts of tile-and-vectorize)
func.func @f(%q: tensor<1x8x4611686018427387904x64xf32>, %k: tensor<1x8x16x64xf32>, %v: tensor<1x8x16x64xf32>) -> tensor<1x8x4611686018427387904x64xf32> {
  // expected-error@+1 {{'attn.term' op query is too large: 'tensor<1x8x4611686018427387904x64xf32>' has more bytes than fit in a 64-bit size}}
  %0 = attn.term softmax (%q, %k, %v) : tensor<1x8x4611686018427387904x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32> -> tensor<1x8x4611686018427387904x64xf32>
  return %0 : tensor<1x8x4611686018427387904x64xf32>
}

// -----

// C1: byte sizes fit in int64, also where the element count does (2^62
// elements of 4 bytes) and next to dynamic sizes
func.func @f(%q: tensor<?x?x?x8xf32>, %k: tensor<1x1x4611686018427387904x?xf32>, %v: tensor<?x?x?x8xf32>) -> tensor<?x?x?x8xf32> {
  // expected-error@+1 {{'attn.term' op key is too large: 'tensor<1x1x4611686018427387904x?xf32>' has more bytes than fit in a 64-bit size}}
  %0 = attn.term softmax (%q, %k, %v) : tensor<?x?x?x8xf32>, tensor<1x1x4611686018427387904x?xf32>, tensor<?x?x?x8xf32> -> tensor<?x?x?x8xf32>
  return %0 : tensor<?x?x?x8xf32>
}

// -----

// C1: byte sizes fit in int64 (omega)
func.func @f(%q: tensor<1x2x16x8xf32>, %w: tensor<9223372036854775807x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op omega is too large: 'tensor<9223372036854775807x8xf32>' has more bytes than fit in a 64-bit size}}
  %0 = attn.term kernel favor_plus (%q, %q, %q) omega(%w : tensor<9223372036854775807x8xf32>) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// combine C3: byte sizes fit in int64
func.func @f(%a: tensor<2x2x2305843009213693952x1xf32>) -> tensor<2x2x2305843009213693952x1xf32> {
  // expected-error@+1 {{'attn.combine' op result is too large: 'tensor<2x2x2305843009213693952x1xf32>' has more bytes than fit in a 64-bit size}}
  %0 = attn.combine %a : tensor<2x2x2305843009213693952x1xf32>
  return %0 : tensor<2x2x2305843009213693952x1xf32>
}

// -----

// C7: F with zero rows
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>, %e: tensor<?x16xf32>, %f: tensor<0x16xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op projection needs at least one row (k > 0)}}
  %0 = attn.term softmax (%q, %k, %v) project(%e, %f : tensor<?x16xf32>, tensor<0x16xf32>) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// Mask syntax: kinds without a block take no size, not even 0
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{mask 'causal' takes no block size}}
  %0 = attn.term softmax (%q, %k, %v) mask causal(0) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// Mask attribute: kinds without a block take no size, not even 0
// expected-error@+1 {{mask 'none' takes no block size}}
func.func @f() attributes {attn.m = #attn.mask<none(0)>} {
  return
}

// -----

// Syntax: the op's own attributes are clauses, not dictionary entries
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'mask' must be written as a clause, not in the attribute dictionary}}
  %0 = attn.term softmax (%q, %k, %v) {mask = #attn.mask<causal>} : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C11: crossover only with kernel terms
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op crossover needs the product form of a 'kernel' term, but the score is 'softmax'}}
  %0 = attn.term softmax (%q, %k, %v) crossover 64 : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C11: crossover only with order auto
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op crossover is only meaningful with order 'auto', but the order is 'kv_first'}}
  %0 = attn.term kernel elu1 (%q, %k, %v) order kv_first crossover 64 : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C11: crossover is positive
func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op crossover must be positive, got 0}}
  %0 = attn.term kernel elu1 (%q, %k, %v) crossover 0 : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// combine C2: a static and a dynamic size are different types
func.func @f(%t: tensor<1x2x16x8xf32>, %g: tensor<1x2x?x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.combine' op every term and the gate must have the type 'tensor<1x2x16x8xf32>' (the result's shape, f32), got 'tensor<1x2x?x8xf32>'}}
  %0 = "attn.combine"(%t, %g) <{operandSegmentSizes = array<i32: 1, 1>}> : (tensor<1x2x16x8xf32>, tensor<1x2x?x8xf32>) -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// operandSegmentSizes puts q, k and v in the first group (generic form): an
// error, not a read past the operands.
func.func @segments(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  // expected-error @below {{'attn.term' op needs exactly one query operand, got 3}}
  %0 = "attn.term"(%q, %q, %q) <{operandSegmentSizes = array<i32: 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>, order = #attn.order<auto>, score = #attn.score<softmax>}> : (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  return %0 : tensor<1x1x4x8xf32>
}

// -----

// No query, and a group of two keys.
func.func @segments_two_keys(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  // expected-error @below {{'attn.term' op needs exactly one query operand, got 0}}
  %0 = "attn.term"(%q, %q, %q) <{operandSegmentSizes = array<i32: 0, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>, order = #attn.order<auto>, score = #attn.score<softmax>}> : (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  return %0 : tensor<1x1x4x8xf32>
}

// -----

// C12: a decay is a number or an operand, not both
func.func @f(%q: tensor<1x2x16x8xf32>, %g: tensor<2xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op decay is either a number or an operand, not both}}
  %0 = "attn.term"(%q, %q, %q, %g) <{decay_rate = 0.5 : f64, mask = #attn.mask<causal>, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>, feature_map = #attn.feature_map<identity>, score = #attn.score<kernel>}> : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<2xf32>) -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C12: the decay number lies in (0, 1]
func.func @f(%q: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op decay must be in (0, 1], got 1.5}}
  %0 = attn.term kernel identity (%q, %q, %q) decay 1.5 mask causal : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C12: ... and is positive
func.func @f(%q: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op decay must be in (0, 1], got 0}}
  %0 = attn.term kernel identity (%q, %q, %q) decay 0.0 mask causal : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C12: one γ per head
func.func @f(%q: tensor<1x2x16x8xf32>, %g: tensor<3xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op decay [H] has 3 entries but the head count H = 2}}
  %0 = attn.term kernel identity (%q, %q, %q) decay(%g : tensor<3xf32>) mask causal : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C12: one g per token
func.func @f(%q: tensor<1x2x16x8xf32>, %g: tensor<1x2x15xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op decay [B, H, N] has query length N = 15 but query has query length N = 16}}
  %0 = attn.term kernel identity (%q, %q, %q) decay(%g : tensor<1x2x15xf32>) mask causal : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C12: a decay tensor is [H] or [B, H, N]
func.func @f(%q: tensor<1x2x16x8xf32>, %g: tensor<1x2xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{operand #3 must be 1D/3D tensor of 32-bit float values, but got}}
  %0 = attn.term kernel identity (%q, %q, %q) decay(%g : tensor<1x2xf32>) mask causal : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C12: decay needs a kernel term
func.func @f(%q: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op decay needs a 'kernel' term, but the score is 'softmax'}}
  %0 = attn.term softmax (%q, %q, %q) decay 0.9 mask causal : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C12: decay needs a causal mask
func.func @f(%q: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op decay needs mask 'causal' or 'block_causal', but the mask is 'prior_blocks'}}
  %0 = attn.term kernel identity (%q, %q, %q) decay 0.9 mask prior_blocks(4) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C12: ... also when there is no mask
func.func @f(%q: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op decay needs mask 'causal' or 'block_causal', but the mask is 'none'}}
  %0 = attn.term kernel identity (%q, %q, %q) decay 0.9 : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C12: decay needs the rows or none normaliser
func.func @f(%q: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op decay needs the 'rows' or 'none' normalizer, but the normalizer is 'length'}}
  %0 = attn.term kernel identity (%q, %q, %q) decay 0.9 mask causal normalizer length : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C12: decay_rate is a clause, not a dictionary entry
func.func @f(%q: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'decay_rate' must be written as a clause, not in the attribute dictionary}}
  %0 = attn.term kernel identity (%q, %q, %q) mask causal {decay_rate = 0.5 : f64} : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C13: key weight is [B, H, M]
func.func @f(%q: tensor<1x2x16x8xf32>, %w: tensor<1x2x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op key_weight [B, H, M] has key length M = 8 but key has key length M = 16}}
  %0 = attn.term kernel relu (%q, %q, %q) key_weight(%w : tensor<1x2x8xf32>) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C13: key weight needs a kernel term
func.func @f(%q: tensor<1x2x16x8xf32>, %w: tensor<1x2x16xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op key_weight needs a 'kernel' term, but the score is 'relu2'}}
  %0 = attn.term relu2 (%q, %q, %q) key_weight(%w : tensor<1x2x16xf32>) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C13: key weight is not allowed with a projection
func.func @f(%q: tensor<1x2x16x8xf32>, %w: tensor<1x2x16xf32>, %e: tensor<4x16xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op key_weight is not allowed with 'project'}}
  %0 = attn.term kernel relu (%q, %q, %q) project(%e, %e : tensor<4x16xf32>, tensor<4x16xf32>) key_weight(%w : tensor<1x2x16xf32>) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C4: rfa needs omega
func.func @f(%q: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op feature map 'rfa' needs the random features omega [m, D]}}
  %0 = attn.term kernel rfa (%q, %q, %q) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C8: rfa normalises its input and takes no scale
func.func @f(%q: tensor<1x2x16x8xf32>, %w: tensor<4x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op scale is not used by a 'kernel' term with feature map 'rfa'}}
  %0 = attn.term kernel rfa (%q, %q, %q) omega(%w : tensor<4x8xf32>) scale 0.5 : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C5: recurrent needs a kernel term
func.func @f(%q: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op order 'recurrent' needs the product form of a 'kernel' term, but the score is 'softmax'}}
  %0 = attn.term softmax (%q, %q, %q) mask causal order recurrent : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C5: recurrent is the causal recurrence
func.func @f(%q: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op order 'recurrent' needs mask 'causal', but the mask is 'block_causal'}}
  %0 = attn.term kernel relu (%q, %q, %q) mask block_causal(4) order recurrent : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C14: a state needs the causal mask
func.func @f(%q: tensor<1x2x16x8xf32>, %s: tensor<1x2x8x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op a state needs a 'kernel' term with mask 'causal' and no projection}}
  %0 = attn.term kernel relu (%q, %q, %q) state(%s : tensor<1x2x8x8xf32>) normalizer none : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C14: not qk-first
func.func @f(%q: tensor<1x2x16x8xf32>, %s: tensor<1x2x8x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op a state needs order 'kv_first' or 'recurrent' (or 'auto'), not 'qk_first'}}
  %0 = attn.term kernel relu (%q, %q, %q) state(%s : tensor<1x2x8x8xf32>) mask causal normalizer none order qk_first : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C14: rows carries the norm state z0
func.func @f(%q: tensor<1x2x16x8xf32>, %s: tensor<1x2x8x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op state needs the normaliser state z [B, H, F] with the 'rows' normalizer}}
  %0 = attn.term kernel relu (%q, %q, %q) state(%s : tensor<1x2x8x8xf32>) mask causal : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C14: F is the feature width (2D for cosformer)
func.func @f(%q: tensor<1x2x16x8xf32>, %s: tensor<1x2x8x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op state S has feature width F = 8 but the feature map gives 16}}
  %0 = attn.term kernel cosformer (%q, %q, %q) state(%s : tensor<1x2x8x8xf32>) mask causal normalizer none : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C14: the final state's value size E
func.func @f(%q: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op final_state S has value size E = 4 but value has value size E = 8}}
  %0, %1 = attn.term kernel relu (%q, %q, %q) final_state mask causal normalizer none : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>, tensor<1x2x8x4xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// The final state's types follow the clause
func.func @f(%q: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'final_state' needs the output and the final state types (and the norm's for rows), got 1}}
  %0 = attn.term kernel relu (%q, %q, %q) final_state mask causal normalizer none : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C1: grouped heads, H_kv must divide H
func.func @f(%q: tensor<1x6x16x8xf32>, %k: tensor<1x4x16x8xf32>) -> tensor<1x6x16x8xf32> {
  // expected-error@+1 {{'attn.term' op key/value head count H_kv = 4 must divide the query head count H = 6}}
  %0 = attn.term softmax (%q, %k, %k) : tensor<1x6x16x8xf32>, tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32> -> tensor<1x6x16x8xf32>
  return %0 : tensor<1x6x16x8xf32>
}

// -----

// C1: grouped heads need static head counts
func.func @f(%q: tensor<1x?x16x8xf32>, %k: tensor<1x2x16x8xf32>) -> tensor<1x?x16x8xf32> {
  // expected-error@+1 {{'attn.term' op grouped heads need static head counts, but the query has H = ? and the key H_kv = 2}}
  %0 = attn.term softmax (%q, %k, %k) : tensor<1x?x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x?x16x8xf32>
  return %0 : tensor<1x?x16x8xf32>
}

// -----

// C1: key and value agree on H_kv
func.func @f(%q: tensor<1x4x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x4x16x8xf32>) -> tensor<1x4x16x8xf32> {
  // expected-error@+1 {{'attn.term' op value has key/value head count H_kv = 4 but key has key/value head count H_kv = 2}}
  %0 = attn.term softmax (%q, %k, %v) : tensor<1x4x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x4x16x8xf32> -> tensor<1x4x16x8xf32>
  return %0 : tensor<1x4x16x8xf32>
}

// -----

// C6: a causal kernel term needs N = M (softmax and relu2 align bottom-right)
func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x16x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error@+1 {{'attn.term' op mask 'causal' needs as many queries as keys, but N = 4 and M = 16}}
  %0 = attn.term kernel elu1 (%q, %k, %k) mask causal : tensor<1x2x4x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x4x8xf32>
  return %0 : tensor<1x2x4x8xf32>
}

// -----

// The window's sizes are not negative
func.func @f(%q: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{mask 'window' needs non-negative left and right sizes, got -1 and 0}}
  %0 = attn.term softmax (%q, %q, %q) mask window(-1, 0) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C15: a kernel term with a window is evaluated qk-first
func.func @f(%q: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op order 'kv_first' is not legal with a 'window' mask (only 'qk_first')}}
  %0 = attn.term kernel elu1 (%q, %q, %q) mask window(3, 0) order kv_first : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C15: ... and so is one with grouped heads
func.func @f(%q: tensor<1x4x16x8xf32>, %k: tensor<1x2x16x8xf32>) -> tensor<1x4x16x8xf32> {
  // expected-error@+1 {{'attn.term' op order 'recurrent' is not legal with grouped heads (only 'qk_first')}}
  %0 = attn.term kernel elu1 (%q, %k, %k) mask causal order recurrent : tensor<1x4x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x4x16x8xf32>
  return %0 : tensor<1x4x16x8xf32>
}

// -----

// C16: softcap is positive
func.func @f(%q: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op softcap must be finite and positive, got 0}}
  %0 = attn.term softmax (%q, %q, %q) softcap 0.0 : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C16: softcap and alibi transform softmax and relu2 scores only
func.func @f(%q: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op alibi needs a 'softmax' or 'relu2' term, but the score is 'kernel'}}
  %0 = attn.term kernel relu (%q, %q, %q) alibi : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C16: sinks belong to softmax
func.func @f(%q: tensor<1x2x16x8xf32>, %s: tensor<2xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op sink needs a 'softmax' term, but the score is 'relu2'}}
  %0 = attn.term relu2 (%q, %q, %q) sink(%s : tensor<2xf32>) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C16: one sink per query head
func.func @f(%q: tensor<1x2x16x8xf32>, %s: tensor<3xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op sink [H] has 3 entries but the head count H = 2}}
  %0 = attn.term softmax (%q, %q, %q) sink(%s : tensor<3xf32>) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C16: ALiBi slopes come with the alibi clause, one per query head
func.func @f(%q: tensor<1x2x16x8xf32>, %s: tensor<4xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op alibi slopes [H] has 4 entries but the head count H = 2}}
  %0 = attn.term softmax (%q, %q, %q) alibi(%s : tensor<4xf32>) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C17: lengths are [B]
func.func @f(%q: tensor<1x2x16x8xf32>, %l: tensor<2xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op key_lengths [B] has 2 entries but the batch size B = 1}}
  %0 = attn.term softmax (%q, %q, %q) key_lengths(%l : tensor<2xf32>) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C17: lengths hide keys before the projection mixes them
func.func @f(%q: tensor<1x2x16x8xf32>, %l: tensor<1xf32>, %e: tensor<4x16xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op query_lengths is not allowed with 'project'}}
  %0 = attn.term softmax (%q, %q, %q) project(%e, %e : tensor<4x16xf32>, tensor<4x16xf32>) query_lengths(%l : tensor<1xf32>) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C17: a kernel term with lengths is evaluated qk-first
func.func @f(%q: tensor<1x2x16x8xf32>, %l: tensor<1xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'attn.term' op order 'kv_first' is not legal with lengths (only 'qk_first')}}
  %0 = attn.term kernel elu1 (%q, %q, %q) key_lengths(%l : tensor<1xf32>) order kv_first : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

// C17: no state with lengths
func.func @f(%q: tensor<1x2x16x8xf32>, %l: tensor<1xf32>) -> (tensor<1x2x16x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8xf32>) {
  // expected-error@+1 {{'attn.term' op a state is not allowed with lengths}}
  %0:3 = attn.term kernel elu1 (%q, %q, %q) key_lengths(%l : tensor<1xf32>) final_state mask causal : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8xf32>
  return %0#0, %0#1, %0#2 : tensor<1x2x16x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8xf32>
}

// -----

// C18: lse is a softmax term's
func.func @f(%q: tensor<1x2x16x8xf32>) -> (tensor<1x2x16x8xf32>, tensor<1x2x16xf32>) {
  // expected-error@+1 {{'attn.term' op lse needs a 'softmax' term with the 'rows' normalizer and eps 0}}
  %0:2 = attn.term relu2 (%q, %q, %q) lse : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>, tensor<1x2x16xf32>
  return %0#0, %0#1 : tensor<1x2x16x8xf32>, tensor<1x2x16xf32>
}

// -----

// C18: lse is [B, H, N]
func.func @f(%q: tensor<1x2x16x8xf32>) -> (tensor<1x2x16x8xf32>, tensor<1x2x15xf32>) {
  // expected-error@+1 {{'attn.term' op lse must be [B, H, N] = [1, 2, 16], got 'tensor<1x2x15xf32>'}}
  %0:2 = attn.term softmax (%q, %q, %q) lse : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>, tensor<1x2x15xf32>
  return %0#0, %0#1 : tensor<1x2x16x8xf32>, tensor<1x2x15xf32>
}

// -----

// C18: the lse clause names a result type
func.func @f(%q: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{'lse' needs the output and the log-sum-exp types, got 1}}
  %0 = attn.term softmax (%q, %q, %q) lse : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}
