package eval

import (
	"encoding/binary"
	"fmt"
	"math"
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
	if pb.GetDataLocation() == onnxpb.TensorProto_EXTERNAL {
		return nil, fmt.Errorf("tensor %q: external data is not supported here", pb.GetName())
	}
	dt := graph.DType(pb.GetDataType())
	shape := make([]int, len(pb.Dims))
	for i, d := range pb.Dims {
		shape[i] = int(d)
	}
	if pb.RawData != nil || numel(shape) == 0 {
		return FromRaw(dt, shape, pb.RawData)
	}
	// Typed fields: re-encode into the raw layout so one decoder serves both.
	n := numel(shape)
	w := dt.Bits() / 8
	raw := make([]byte, n*w)
	switch dt {
	case graph.Float32:
		if len(pb.FloatData) != n {
			return nil, fmt.Errorf("float_data holds %d values, shape needs %d", len(pb.FloatData), n)
		}
		for i, v := range pb.FloatData {
			binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
		}
	case graph.Float64:
		if len(pb.DoubleData) != n {
			return nil, fmt.Errorf("double_data holds %d values, shape needs %d", len(pb.DoubleData), n)
		}
		for i, v := range pb.DoubleData {
			binary.LittleEndian.PutUint64(raw[8*i:], math.Float64bits(v))
		}
	case graph.Int64:
		if len(pb.Int64Data) != n {
			return nil, fmt.Errorf("int64_data holds %d values, shape needs %d", len(pb.Int64Data), n)
		}
		for i, v := range pb.Int64Data {
			binary.LittleEndian.PutUint64(raw[8*i:], uint64(v))
		}
	case graph.Uint32, graph.Uint64:
		if len(pb.Uint64Data) != n {
			return nil, fmt.Errorf("uint64_data holds %d values, shape needs %d", len(pb.Uint64Data), n)
		}
		for i, v := range pb.Uint64Data {
			if w == 4 {
				binary.LittleEndian.PutUint32(raw[4*i:], uint32(v))
			} else {
				binary.LittleEndian.PutUint64(raw[8*i:], v)
			}
		}
	default:
		if len(pb.Int32Data) != n || w == 0 {
			return nil, fmt.Errorf("int32_data holds %d values, %s%v needs %d", len(pb.Int32Data), dt, shape, n)
		}
		for i, v := range pb.Int32Data {
			switch w {
			case 1:
				raw[i] = byte(v)
			case 2:
				binary.LittleEndian.PutUint16(raw[2*i:], uint16(v))
			case 4:
				binary.LittleEndian.PutUint32(raw[4*i:], uint32(v))
			}
		}
	}
	return FromRaw(dt, shape, raw)
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
