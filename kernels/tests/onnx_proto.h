// Hand-encoded ONNX ModelProto for small test models: just enough of the
// protobuf wire format (varints, length-delimited fields, fixed32 floats) to
// write a graph with typed inputs/outputs and int/float/ints/floats/string
// attributes (and, built by hand with Msg, malformed ones).
#ifndef ATTNOPT_TESTS_ONNX_PROTO_H_
#define ATTNOPT_TESTS_ONNX_PROTO_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace onnx_proto {

class Msg {
 public:
  std::string bytes;

  Msg& varint_field(int field, uint64_t v) {
    key(field, 0);
    varint(v);
    return *this;
  }
  Msg& float_field(int field, float f) {
    key(field, 5);
    char b[4];
    std::memcpy(b, &f, 4);  // little-endian fixed32, as on x86/ARM hosts
    bytes.append(b, 4);
    return *this;
  }
  Msg& bytes_field(int field, const std::string& s) {
    key(field, 2);
    varint(s.size());
    bytes += s;
    return *this;
  }
  Msg& msg_field(int field, const Msg& m) { return bytes_field(field, m.bytes); }

 private:
  void key(int field, int wire) { varint(static_cast<uint64_t>(field) << 3 | wire); }
  void varint(uint64_t v) {
    while (v >= 0x80) {
      bytes.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    bytes.push_back(static_cast<char>(v));
  }
};

// TensorProto.DataType values.
enum ElemType { FLOAT = 1, BOOL = 9, FLOAT16 = 10, BFLOAT16 = 16 };

// ValueInfoProto{name, type{tensor_type{elem_type, shape{dim{dim_value}}}}}.
// A negative dim -k is written as the symbolic dim_param "sym<k>" (dynamic axis).
inline Msg value_info(const std::string& name, int elem_type, const std::vector<int64_t>& shape) {
  Msg sh;
  for (int64_t d : shape) {
    if (d < 0) sh.msg_field(1, Msg().bytes_field(2, "sym" + std::to_string(-d)));
    else sh.msg_field(1, Msg().varint_field(1, static_cast<uint64_t>(d)));
  }
  Msg tensor;
  tensor.varint_field(1, elem_type).msg_field(2, sh);
  Msg type;
  type.msg_field(1, tensor);
  Msg vi;
  vi.bytes_field(1, name).msg_field(2, type);
  return vi;
}

// AttributeProto: name = 1, f = 2, i = 3, ints = 8, type = 20.
inline Msg attr_float(const std::string& name, float f) {
  Msg a;
  a.bytes_field(1, name).float_field(2, f).varint_field(20, 1);
  return a;
}
inline Msg attr_int(const std::string& name, int64_t i) {
  Msg a;
  a.bytes_field(1, name).varint_field(3, static_cast<uint64_t>(i)).varint_field(20, 2);
  return a;
}
inline Msg attr_ints(const std::string& name, const std::vector<int64_t>& v) {
  Msg a;
  a.bytes_field(1, name);
  for (int64_t x : v) a.varint_field(8, static_cast<uint64_t>(x));  // negative: 10-byte two's complement
  a.varint_field(20, 7);
  return a;
}
// floats = 7 (each a fixed32), type FLOATS = 6; s = 4, type STRING = 3.
inline Msg attr_floats(const std::string& name, const std::vector<float>& v) {
  Msg a;
  a.bytes_field(1, name);
  for (float x : v) a.float_field(7, x);
  a.varint_field(20, 6);
  return a;
}
inline Msg attr_string(const std::string& name, const std::string& v) {
  Msg a;
  a.bytes_field(1, name).bytes_field(4, v).varint_field(20, 3);
  return a;
}

struct Input {
  std::string name;
  int elem_type;
  std::vector<int64_t> shape;
};

struct Node {
  std::string op_type, domain, name;
  std::vector<std::string> inputs, outputs;  // "" for an omitted optional input
  std::vector<Msg> attrs;
};

// ModelProto{ir_version 10, opset_import ""/17 and "attnopt"/1, graph{nodes}}.
inline std::string model(const std::vector<Node>& nodes, const std::vector<Input>& inputs,
                         const std::vector<Input>& outputs) {
  Msg graph;
  for (const Node& n : nodes) {
    Msg node;
    for (const std::string& in : n.inputs) node.bytes_field(1, in);
    for (const std::string& out : n.outputs) node.bytes_field(2, out);
    node.bytes_field(3, n.name).bytes_field(4, n.op_type);
    for (const Msg& a : n.attrs) node.msg_field(5, a);
    if (!n.domain.empty()) node.bytes_field(7, n.domain);
    graph.msg_field(1, node);
  }
  graph.bytes_field(2, "g");
  for (const Input& in : inputs) graph.msg_field(11, value_info(in.name, in.elem_type, in.shape));
  for (const Input& out : outputs) graph.msg_field(12, value_info(out.name, out.elem_type, out.shape));
  Msg model;
  model.varint_field(1, 10)
      .msg_field(8, Msg().bytes_field(1, "").varint_field(2, 17))
      .msg_field(8, Msg().bytes_field(1, "attnopt").varint_field(2, 1))
      .bytes_field(2, "attnopt-kernels-test")
      .msg_field(7, graph);
  return model.bytes;
}

// One attnopt node named node_name reading every input and writing output.
inline std::string one_node_model(const std::string& op_type, const std::vector<Input>& inputs,
                                  const Input& output, const std::vector<Msg>& attrs,
                                  const std::string& node_name = "node0") {
  Node n{op_type, "attnopt", node_name, {}, {output.name}, attrs};
  for (const Input& in : inputs) n.inputs.push_back(in.name);
  return model({n}, inputs, {output});
}

}  // namespace onnx_proto

#endif  // ATTNOPT_TESTS_ONNX_PROTO_H_
