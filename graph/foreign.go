package graph

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"strings"
)

// What a file that does not parse as ONNX is, when it is one of the
// formats a PyTorch user has at hand before exporting: said in the load
// error instead of protobuf's "invalid field number", with the way to an
// ONNX file (docs/stories.md, "Export"). Only files that already failed to
// parse are sniffed, so no ONNX model can be mistaken for one of these.

// exportHint is how to get an ONNX model from a PyTorch module.
const exportHint = `torch.onnx.export(module, example_inputs, "model.onnx", dynamo=True), then give attnopt model.onnx`

// legacyTorchMagic is torch.save's legacy (pre-1.6, or
// _use_new_zipfile_serialization=False) header: pickle protocol 2, then
// the magic number 0x1950a86a20f9469cfc6c pickled as a 10-byte long.
var legacyTorchMagic = []byte("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19")

// foreignFormat says what data is and how to export it to ONNX, or ""
// when it is none of the formats recognised here.
func foreignFormat(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte("PK\x03\x04")):
		return zipFormat(data)
	case bytes.HasPrefix(data, legacyTorchMagic):
		return "not an ONNX model but a PyTorch checkpoint (torch.save's legacy pickle format): it holds weights, not a graph; load them into the module and export it: " + exportHint
	case len(data) >= 2 && data[0] == 0x80 && data[1] >= 2 && data[1] <= 5:
		return "not an ONNX model but a Python pickle (a PyTorch checkpoint?): load the weights into the module and export it: " + exportHint
	case isSafetensors(data):
		return "not an ONNX model but a safetensors file: it holds weights, not a graph; load them into the module (safetensors.torch.load_model) and export it: " + exportHint
	}
	return ""
}

// zipFormat tells PyTorch's zip archives apart by their entries, which all
// sit under one top folder: TorchScript (torch.jit.save) has code/ and
// constants.pkl beside data.pkl; a checkpoint (torch.save) has data.pkl.
func zipFormat(data []byte) string {
	r, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return "not an ONNX model but a zip archive (unreadable: " + err.Error() + ")"
	}
	has := map[string]bool{}
	for _, f := range r.File {
		_, rest, ok := strings.Cut(f.Name, "/")
		if !ok {
			continue
		}
		has[rest] = true
		if dir, _, ok := strings.Cut(rest, "/"); ok {
			has[dir+"/"] = true
		}
	}
	switch {
	case has["code/"] && has["constants.pkl"]:
		return `not an ONNX model but a TorchScript archive (torch.jit.save): export the module it was scripted from, or torch.onnx.export(torch.jit.load(FILE), example_inputs, "model.onnx", dynamo=False), then give attnopt model.onnx`
	case has["data.pkl"]:
		return "not an ONNX model but a PyTorch checkpoint (torch.save, a zip with data.pkl): it holds weights, not a graph; load them into the module and export it: " + exportHint
	}
	return "not an ONNX model but a zip archive; attnopt reads .onnx files"
}

// isSafetensors: an 8-byte little-endian header length, then that many
// bytes of JSON object, within the file.
func isSafetensors(data []byte) bool {
	if len(data) < 10 {
		return false
	}
	n := binary.LittleEndian.Uint64(data)
	if n < 2 || n > uint64(len(data)-8) || data[8] != '{' {
		return false
	}
	return json.Valid(data[8 : 8+n])
}
