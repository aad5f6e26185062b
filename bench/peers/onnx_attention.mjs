// A minimal ONNX model of scaled-dot attention, written as protobuf bytes by hand (no onnx
// package needed): inputs q, k, v [heads, n, d] (float32), output o [heads, n, d]:
//   s = MatMul(Mul(q, scale), Transpose(k, perm = [0, 2, 1]))   // [heads, n, n]
//   o = MatMul(Softmax(s, axis = -1), v)
// onnxruntime's graph optimizer fuses the transpose and the scale into its MatMul kernel.

// protobuf wire format: varint (type 0) and length-delimited (type 2) fields
function varint(n) {
  const out = [];
  let v = BigInt(n);
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) byte |= 0x80;
    out.push(byte);
  } while (v > 0n);
  return out;
}
const fieldVarint = (field, value) => [...varint((field << 3) | 0), ...varint(value)];
function fieldBytes(field, bytes) {
  const b = typeof bytes === 'string' ? [...new TextEncoder().encode(bytes)] : [...bytes];
  return [...varint((field << 3) | 2), ...varint(b.length), ...b];
}

// ValueInfoProto: name, TypeProto { tensor_type { elem_type = FLOAT, shape { dim* } } }
function valueInfo(name, dims) {
  const shape = dims.flatMap((d) => fieldBytes(1, fieldVarint(1, d)));  // Dimension.dim_value
  const tensor = [...fieldVarint(1, 1), ...fieldBytes(2, shape)];
  return [...fieldBytes(1, name), ...fieldBytes(2, fieldBytes(1, tensor))];
}

// NodeProto: inputs, outputs, name, op_type, attributes (AttributeProto bytes)
function node(op, inputs, outputs, attrs = []) {
  return [
    ...inputs.flatMap((i) => fieldBytes(1, i)),
    ...outputs.flatMap((o) => fieldBytes(2, o)),
    ...fieldBytes(3, `${op}_${outputs[0]}`),
    ...fieldBytes(4, op),
    ...attrs.flatMap((a) => fieldBytes(5, a)),
  ];
}
const attrInt = (name, v) => [...fieldBytes(1, name), ...fieldVarint(20, 2), ...fieldVarint(3, v < 0 ? 2n ** 64n + BigInt(v) : v)];
const attrInts = (name, vs) => [...fieldBytes(1, name), ...fieldVarint(20, 7), ...vs.flatMap((v) => fieldVarint(8, v))];

// TensorProto holding one float scalar (raw_data, little-endian)
function scalarInitializer(name, value) {
  const raw = new Uint8Array(new Float32Array([value]).buffer);
  return [...fieldVarint(2, 1), ...fieldBytes(8, name), ...fieldBytes(9, raw)];
}

// kTransposed: the graph takes kt [heads, d, n] instead of k (no Transpose node).
export function attentionModel(heads, n, d, scale, kTransposed = false) {
  const graph = [
    ...fieldBytes(1, node('Mul', ['q', 'scale'], ['qs'])),
    ...(kTransposed ? [] : fieldBytes(1, node('Transpose', ['k'], ['kt'], [attrInts('perm', [0, 2, 1])]))),
    ...fieldBytes(1, node('MatMul', ['qs', 'kt'], ['s'])),
    ...fieldBytes(1, node('Softmax', ['s'], ['p'], [attrInt('axis', -1)])),
    ...fieldBytes(1, node('MatMul', ['p', 'v'], ['o'])),
    ...fieldBytes(2, 'attention'),
    ...fieldBytes(5, scalarInitializer('scale', scale)),
    ...fieldBytes(11, valueInfo('q', [heads, n, d])),
    ...fieldBytes(11, kTransposed ? valueInfo('kt', [heads, d, n]) : valueInfo('k', [heads, n, d])),
    ...fieldBytes(11, valueInfo('v', [heads, n, d])),
    ...fieldBytes(12, valueInfo('o', [heads, n, d])),
  ];
  const model = [
    ...fieldVarint(1, 8),                                         // ir_version
    ...fieldBytes(8, [...fieldBytes(1, ''), ...fieldVarint(2, 17)]),  // opset_import: ai.onnx 17
    ...fieldBytes(7, graph),
  ];
  return new Uint8Array(model);
}
