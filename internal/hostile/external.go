package hostile

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/attnopt/attnopt/graph/onnxpb"
	"google.golang.org/protobuf/proto"
)

// externalModel is the base model with its first initializer stored in
// dir/weights.bin; edit adjusts the reference and the files before writing.
func externalModel(dir string, edit func(t *onnxpb.TensorProto) error) (string, error) {
	m := base()
	t := m.Graph.Initializer[0]
	if err := os.WriteFile(filepath.Join(dir, "weights.bin"), t.RawData, 0o644); err != nil {
		return "", err
	}
	t.RawData = nil
	t.DataLocation = onnxpb.TensorProto_EXTERNAL.Enum()
	t.ExternalData = []*onnxpb.StringStringEntryProto{kv("location", "weights.bin"), kv("offset", "0"), kv("length", "4")}
	if err := edit(t); err != nil {
		return "", err
	}
	return write(dir, m)
}

func kv(k, v string) *onnxpb.StringStringEntryProto {
	return &onnxpb.StringStringEntryProto{Key: proto.String(k), Value: proto.String(v)}
}

func setExt(t *onnxpb.TensorProto, key, value string) {
	for _, e := range t.ExternalData {
		if e.GetKey() == key {
			e.Value = proto.String(value)
			return
		}
	}
	t.ExternalData = append(t.ExternalData, kv(key, value))
}

func external(name, want string, edit func(dir string, t *onnxpb.TensorProto) error) Case {
	return Case{Name: name, Want: want, Build: func(dir string) (string, error) {
		return externalModel(dir, func(t *onnxpb.TensorProto) error { return edit(dir, t) })
	}}
}

func externalCases() []Case {
	return []Case{
		{Name: "external data", Valid: true, Build: func(dir string) (string, error) {
			return externalModel(dir, func(*onnxpb.TensorProto) error { return nil })
		}},
		external("external data is a FIFO", "not a regular file", func(dir string, t *onnxpb.TensorProto) error {
			p := filepath.Join(dir, "fifo.bin")
			setExt(t, "location", "fifo.bin")
			return syscall.Mkfifo(p, 0o644)
		}),
		external("external data is a directory", "not a regular file", func(dir string, t *onnxpb.TensorProto) error {
			setExt(t, "location", "sub")
			return os.Mkdir(filepath.Join(dir, "sub"), 0o755)
		}),
		external("external data is a device", "not a regular file", func(dir string, t *onnxpb.TensorProto) error {
			setExt(t, "location", "null")
			return syscall.Mknod(filepath.Join(dir, "null"), syscall.S_IFCHR|0o644, 1<<8|3) // needs root
		}),
		external("external data symlink to a device", "outside the model's folder", func(dir string, t *onnxpb.TensorProto) error {
			setExt(t, "location", "null")
			return os.Symlink("/dev/null", filepath.Join(dir, "null"))
		}),
		external("external data hard-linked", "hard link", func(dir string, t *onnxpb.TensorProto) error {
			return os.Link(filepath.Join(dir, "weights.bin"), filepath.Join(dir, "other.bin"))
		}),
		external("external offset near 2^63", "offset", func(dir string, t *onnxpb.TensorProto) error {
			setExt(t, "offset", strconv.FormatInt(1<<63-2, 10))
			return nil
		}),
		external("external length near 2^63", "length", func(dir string, t *onnxpb.TensorProto) error {
			setExt(t, "length", strconv.FormatInt(1<<63-1, 10))
			return nil
		}),
		external("external offset not a number", "offset", func(dir string, t *onnxpb.TensorProto) error {
			setExt(t, "offset", "12abc")
			return nil
		}),
		external("external data past the end", "ends at", func(dir string, t *onnxpb.TensorProto) error {
			setExt(t, "offset", "2")
			return nil
		}),
		external("external location absolute", "absolute", func(dir string, t *onnxpb.TensorProto) error {
			setExt(t, "location", "/etc/passwd")
			return nil
		}),
		external("external location with ..", "'..'", func(dir string, t *onnxpb.TensorProto) error {
			setExt(t, "location", "../weights.bin")
			return nil
		}),
		external("external symlink out of the folder", "outside the model's folder", func(dir string, t *onnxpb.TensorProto) error {
			setExt(t, "location", "link.bin")
			return os.Symlink("/etc/hostname", filepath.Join(dir, "link.bin"))
		}),
		external("external file missing", "missing.bin", func(dir string, t *onnxpb.TensorProto) error {
			setExt(t, "location", "missing.bin")
			return nil
		}),
		external("external location empty", "empty location", func(dir string, t *onnxpb.TensorProto) error {
			setExt(t, "location", "")
			return nil
		}),
	}
}
