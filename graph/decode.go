package graph

import (
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/attnopt/attnopt/graph/onnxpb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// Loading without copying weights: the file is mapped (or, when small, read
// once) and the main graph's initializers keep their raw_data as slices of
// those bytes; protobuf's own Unmarshal would copy every one, which with the
// file itself and the serialised output made a load/save peak at 3x the
// model size.

// mmapMin is the file size from which a model is mapped instead of read.
const mmapMin = 16 << 20

// readModelFile returns the bytes of a model file. Only regular files are
// read: a FIFO or /dev/zero given as the model would block or never end.
func readModelFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", st.Mode().Type())
	}
	size := st.Size()
	if size >= mmapMin && int64(int(size)) == size {
		// Never unmapped: tensors alias the mapping for the life of the
		// process (a CLI run). Read-only, so nothing can write through it.
		if data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED); err == nil {
			return data, nil
		}
		// A file system without mmap: read it instead.
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, err
	}
	return data, nil
}

// Field numbers of onnx.proto that decodeModel treats specially.
const (
	modelGraphField       = 7
	graphInitializerField = 5
	tensorRawDataField    = 9
)

// decodeModel parses a ModelProto like proto.Unmarshal, except that the
// raw_data of the main graph's initializers aliases data.
func decodeModel(data []byte) (*onnxpb.ModelProto, error) {
	mp := &onnxpb.ModelProto{}
	var graphs [][]byte
	err := splitFields(data, mp, func(num protowire.Number, val []byte) bool {
		if num != modelGraphField {
			return false
		}
		graphs = append(graphs, val)
		return true
	})
	if err != nil {
		return nil, err
	}
	if len(graphs) > 0 {
		// A repeated message field merges, as protobuf does.
		mp.Graph = &onnxpb.GraphProto{}
		for _, g := range graphs {
			if err := decodeGraph(g, mp.Graph); err != nil {
				return nil, err
			}
		}
	}
	return mp, nil
}

func decodeGraph(data []byte, gp *onnxpb.GraphProto) error {
	var inner error
	err := splitFields(data, gp, func(num protowire.Number, val []byte) bool {
		if num != graphInitializerField {
			return false
		}
		tp, err := decodeTensor(val)
		if err != nil {
			inner = err
		}
		gp.Initializer = append(gp.Initializer, tp)
		return true
	})
	if inner != nil {
		return inner
	}
	return err
}

func decodeTensor(data []byte) (*onnxpb.TensorProto, error) {
	tp := &onnxpb.TensorProto{}
	var raw []byte
	err := splitFields(data, tp, func(num protowire.Number, val []byte) bool {
		if num != tensorRawDataField {
			return false
		}
		raw = val // the last occurrence wins, as in protobuf
		return true
	})
	if raw != nil {
		// Capacity cut to the length: an append can never write into the
		// mapping.
		tp.RawData = raw[:len(raw):len(raw)]
	}
	return tp, err
}

// splitFields walks the fields of one message. take is offered every
// length-delimited field and returns true when it consumed it; the runs of
// other fields are merged into m with protobuf's own Unmarshal.
func splitFields(data []byte, m proto.Message, take func(num protowire.Number, val []byte) bool) error {
	merge := proto.UnmarshalOptions{Merge: true}
	run := 0
	flush := func(end int) error {
		if end > run {
			if err := merge.Unmarshal(data[run:end], m); err != nil {
				return err
			}
		}
		return nil
	}
	for i := 0; i < len(data); {
		num, typ, n := protowire.ConsumeTag(data[i:])
		if n < 0 {
			return protowire.ParseError(n)
		}
		if typ == protowire.BytesType {
			val, m := protowire.ConsumeBytes(data[i+n:])
			if m < 0 {
				return protowire.ParseError(m)
			}
			if take(num, val) {
				if err := flush(i); err != nil {
					return err
				}
				i += n + m
				run = i
				continue
			}
			i += n + m
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, data[i+n:])
		if m < 0 {
			return protowire.ParseError(m)
		}
		i += n + m
	}
	return flush(len(data))
}
