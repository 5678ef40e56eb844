package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph/onnxpb"
	"google.golang.org/protobuf/proto"
)

// validateRuntimes are the runtimes a CLI test validates in: the Go
// runtime, and ONNX Runtime with attnopt's custom ops when
// $ONNXRUNTIME_LIB and $ATTNOPT_CUSTOM_OPS name them (scripts/test.sh).
func validateRuntimes() [][]string {
	rts := [][]string{{"--runtime", "go"}}
	lib, ops := os.Getenv("ONNXRUNTIME_LIB"), os.Getenv("ATTNOPT_CUSTOM_OPS")
	if _, err := os.Stat(lib); err == nil && lib != "" {
		if _, err := os.Stat(ops); err == nil && ops != "" {
			rts = append(rts, []string{"--runtime", "ort", "--ort-lib", lib, "--custom-ops", ops})
		}
	}
	return rts
}

// siteRow is a site's row of the text report: its max abs error and its
// NaN/Inf cell.
var siteRow = regexp.MustCompile(`(?m)^site \d+ \([^)]*\)\t\S+\t(\S+)(?:\t[^\t\n]*){5}\t([^\t\n]*)\t`)

// A rewrite with a wrong fill attribute on its fused ops FAILs at the
// default (sites) scope: the site's padding mask, cut as (B, 1, 1, Nk, 1)
// in an HF export, is padded on its key axis, so rows that see no key and
// keys both the mask and causal drop are reached there, not only at
// --scope model (docs/fully-masked-rows.md). The untouched rewrite PASSes
// within tolerance.
func TestValidateSitesCatchWrongFill(t *testing.T) {
	cases := []struct {
		fixture, attr string
		value         int64
	}{
		// fill_once 1 → 0: a key both drop gets finfo.min twice (-inf).
		{"hf_gemma2_softcap", "fill_once", 0},
		{"hf_qwen3_leftpad_dynamo", "fill_once", 0},
		// The TorchScript export guards its rows to zeros; literal rows
		// under -inf give NaN.
		{"hf_qwen3_leftpad", "empty_rows", 1},
	}
	for _, c := range cases {
		t.Run(c.fixture, func(t *testing.T) {
			orig := filepath.Join("..", "..", "testdata", "models", c.fixture, "model.onnx")
			if _, err := os.Stat(orig); err != nil {
				t.Skip("fixture not present")
			}
			dir := t.TempDir()
			good := filepath.Join(dir, "good.onnx")
			if code, _, stderr := runCLI("rewrite", orig, "-o", good, "--target", "attnopt", "--min-scores", "0", "--quiet"); code != 0 {
				t.Fatal(stderr)
			}
			data, _ := os.ReadFile(good)
			var mp onnxpb.ModelProto
			if err := proto.Unmarshal(data, &mp); err != nil {
				t.Fatal(err)
			}
			flipped := 0
			for _, n := range mp.Graph.Node {
				if n.GetOpType() == "FlashAttention" {
					setAttr(n, &onnxpb.AttributeProto{Name: proto.String(c.attr), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(c.value)})
					flipped++
				}
			}
			if flipped == 0 {
				t.Fatal("no FlashAttention in the rewrite")
			}
			bad := filepath.Join(dir, "bad.onnx")
			b, _ := proto.Marshal(&mp)
			if err := os.WriteFile(bad, b, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, rt := range validateRuntimes() {
				code, stdout, stderr := runCLI(append([]string{"validate", orig, good, "--quiet"}, rt...)...)
				cells := siteRow.FindAllStringSubmatch(stdout, -1)
				if code != exitOK || !strings.HasSuffix(stdout, "\nPASS\n") || len(cells) != flipped {
					t.Fatalf("%s, untouched rewrite: exit %d\n%s%s", rt[1], code, stdout, stderr)
				}
				for _, cell := range cells {
					if x, err := strconv.ParseFloat(cell[1], 64); err != nil || x > 1e-4 {
						t.Errorf("%s, untouched rewrite: max abs %s", rt[1], cell[1])
					}
				}
				code, stdout, stderr = runCLI(append([]string{"validate", orig, bad, "--quiet"}, rt...)...)
				if code != exitFailed || !strings.HasSuffix(stdout, "\nFAIL\n") || !strings.Contains(stderr, "validation failed: site 0") {
					t.Fatalf("%s, %s=%d: exit %d, want 1\n%s%s", rt[1], c.attr, c.value, code, stdout, stderr)
				}
				// Every site fails, by more than rounding or with NaN.
				cells = siteRow.FindAllStringSubmatch(stdout, -1)
				if len(cells) != flipped {
					t.Fatalf("%s: %d site rows, want %d\n%s", rt[1], len(cells), flipped, stdout)
				}
				for _, cell := range cells {
					if x, err := strconv.ParseFloat(cell[1], 64); err == nil && x < 1e-2 && cell[2] == "0" {
						t.Errorf("%s, %s=%d: max abs %s, NaN/Inf %s: want a row-sized difference", rt[1], c.attr, c.value, cell[1], cell[2])
					}
				}
			}
		})
	}
}
