package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Correct rewrites PASS at sites scope, as at --scope model, where the
// site's cut inputs once got values the model never computes: a position
// bias given a mask's fill, beside a padding mask (BLOOM's and MPT's
// ALiBi: two fills summed to -inf, "finite where the original is NaN") or
// alone (T5's relative positions under causal: finfo.min rows, 2.04 off);
// the bool vectors of shape arithmetic (Where(Equal(shape, -1), 1, shape)
// in hf_bert_ortopt's embeddings) drawn at random, so an Expand got -1
// and the original did not run; a dim declared as a product ("4*batch",
// BLOOM's ALiBi over batch·heads) generated at 8, unlike the scores' 32.
func TestValidateSitesNoFalseFail(t *testing.T) {
	for _, name := range []string{"hf_bloom", "hf_bloom_dynamo", "hf_mpt", "mpt_alibi_perkey", "mpt_alibi_dynamic", "hf_t5", "hf_bert_ortopt",
		"hf_bloom_dynamic", "hf_bloom_dynamic_dynamo", "hf_bloom_dynamic_dynamo_op23"} {
		t.Run(name, func(t *testing.T) {
			orig := filepath.Join("..", "..", "testdata", "models", name, "model.onnx")
			if _, err := os.Stat(orig); err != nil {
				t.Skip("fixture not present")
			}
			rw := filepath.Join(t.TempDir(), "rw.onnx")
			if code, _, stderr := runCLI("rewrite", orig, "-o", rw, "--target", "attnopt", "--min-scores", "0", "--quiet"); code != 0 {
				t.Fatal(stderr)
			}
			for _, rt := range validateRuntimes() {
				code, stdout, stderr := runCLI(append([]string{"validate", orig, rw, "--quiet"}, rt...)...)
				rows := siteRow.FindAllStringSubmatch(stdout, -1)
				if code != exitOK || len(rows) == 0 || !strings.Contains(stdout, "cases: left padding, right padding, fully masked row, all keep") {
					t.Fatalf("%s: exit %d\n%s%s", rt[1], code, stdout, stderr)
				}
				for _, r := range rows {
					if x, err := strconv.ParseFloat(r[1], 64); err != nil || x > 1e-4 || r[2] != "0" {
						t.Errorf("%s: max abs %s, NaN/Inf %s", rt[1], r[1], r[2])
					}
				}
			}
		})
	}
}
