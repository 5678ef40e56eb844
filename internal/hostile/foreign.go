package hostile

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
)

// ForeignCases are the files a PyTorch user has before exporting, built by
// hand (no torch): every command must say what the file is and how to
// export it (graph/foreign.go), exit 2, instead of protobuf's "invalid
// field number". Want is what names the format; the CLI's test checks
// the rest of the line (cmd/attnopt/foreign_test.go).
func ForeignCases() []Case {
	return []Case{
		{Name: "PyTorch checkpoint", Want: "not an ONNX model but a PyTorch checkpoint (torch.save, a zip with data.pkl)",
			Build: func(dir string) (string, error) {
				return writeZip(dir, "model.pt", "archive/data.pkl", "archive/version", "archive/data/0")
			}},
		{Name: "PyTorch checkpoint, legacy pickle", Want: "not an ONNX model but a PyTorch checkpoint (torch.save's legacy pickle format)",
			Build: func(dir string) (string, error) {
				// torch.save(..., _use_new_zipfile_serialization=False) begins with its magic number, pickled.
				return writeNamed(dir, "model.pth", []byte("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.\x80\x02M\xe9\x03.\x80\x02}q\x00."))
			}},
		{Name: "Python pickle", Want: "not an ONNX model but a Python pickle (a PyTorch checkpoint?)",
			Build: func(dir string) (string, error) { return writeNamed(dir, "weights.pkl", []byte("\x80\x04}\x94.")) }},
		{Name: "safetensors", Want: "not an ONNX model but a safetensors file",
			Build: func(dir string) (string, error) {
				header := []byte(`{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`)
				data := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
				return writeNamed(dir, "model.safetensors", append(append(data, header...), make([]byte, 8)...))
			}},
		{Name: "TorchScript archive", Want: "not an ONNX model but a TorchScript archive (torch.jit.save)",
			Build: func(dir string) (string, error) {
				return writeZip(dir, "model.pt", "model/data.pkl", "model/constants.pkl", "model/code/__torch__/m.py", "model/version")
			}},
		{Name: "other zip", Want: "not an ONNX model but a zip archive; attnopt reads .onnx files",
			Build: func(dir string) (string, error) { return writeZip(dir, "model.zip", "model.onnx") }},
	}
}

func writeNamed(dir, name string, data []byte) (string, error) {
	p := filepath.Join(dir, name)
	return p, os.WriteFile(p, data, 0o644)
}

// writeZip writes a zip holding the named entries, each a few bytes.
func writeZip(dir, name string, entries ...string) (string, error) {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, e := range entries {
		f, err := w.Create(e)
		if err != nil {
			return "", err
		}
		if _, err := f.Write([]byte("\x80\x02.")); err != nil {
			return "", err
		}
	}
	if err := w.Close(); err != nil {
		return "", err
	}
	return writeNamed(dir, name, buf.Bytes())
}
