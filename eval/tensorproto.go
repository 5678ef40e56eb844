package eval

import (
	"fmt"
	"os"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/graph/onnxpb"
	"google.golang.org/protobuf/proto"
)

// ReadTensorProtoFile reads a serialized TensorProto: the input_*.pb /
// output_*.pb files of an ONNX test_data_set.
func ReadTensorProtoFile(path string) (*Tensor, error) {
	t, _, err := ReadNamedTensorProtoFile(path)
	return t, err
}

// ReadNamedTensorProtoFile is ReadTensorProtoFile that also returns the
// tensor's name (test_data_set files name the graph input they feed).
func ReadNamedTensorProtoFile(path string) (*Tensor, string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	t, name, err := DecodeTensorProto(data)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	return t, name, nil
}

// DecodeTensorProto parses TensorProto bytes.
func DecodeTensorProto(data []byte) (*Tensor, string, error) {
	pb := &onnxpb.TensorProto{}
	if err := proto.Unmarshal(data, pb); err != nil {
		return nil, "", err
	}
	t, err := fromProto(pb)
	return t, pb.GetName(), err
}

func fromProto(pb *onnxpb.TensorProto) (*Tensor, error) {
	gt, err := graph.TensorFromProto(pb)
	if err != nil {
		return nil, err
	}
	return FromGraph(gt)
}

// EncodeTensorProto serializes t as a TensorProto with raw_data.
func EncodeTensorProto(t *Tensor, name string) ([]byte, error) {
	raw, err := t.Raw()
	if err != nil {
		return nil, err
	}
	dims := make([]int64, len(t.Shape))
	for i, d := range t.Shape {
		dims[i] = int64(d)
	}
	dt := int32(t.DType)
	pb := &onnxpb.TensorProto{Dims: dims, DataType: &dt, RawData: raw}
	if name != "" {
		pb.Name = &name
	}
	return proto.Marshal(pb)
}

// WriteTensorProtoFile writes t as a TensorProto file.
func WriteTensorProtoFile(path string, t *Tensor, name string) error {
	data, err := EncodeTensorProto(t, name)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
