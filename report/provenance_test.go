package report

import (
	"os"
	"path/filepath"
	"testing"
)

// A report's runtime names libraries relative to the working directory
// when they are inside it, else by file name, in the paths and in the
// lines that say where the search found them.
func TestRuntimePathsArePortable(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rt := &RuntimeInfo{Name: "ort",
		Library:       "/opt/venv/lib/python3.12/site-packages/onnxruntime/capi/libonnxruntime.so.1.24.3",
		LibraryFrom:   "the Python environment of this attnopt binary (/opt/venv)",
		CustomOps:     filepath.Join(wd, "kernels", "build", "cpu", "libattnopt_ort.so"),
		CustomOpsFrom: "$ATTNOPT_CUSTOM_OPS",
		Note:          "found '/usr/lib/x.so' and \"/usr/lib/y.so\"",
	}
	got := (&Provenance{}).WithRun(rt, 1).Runtime
	want := RuntimeInfo{Name: "ort",
		Library:       "libonnxruntime.so.1.24.3",
		LibraryFrom:   "the Python environment of this attnopt binary (venv)",
		CustomOps:     "kernels/build/cpu/libattnopt_ort.so",
		CustomOpsFrom: "$ATTNOPT_CUSTOM_OPS",
		Note:          "found 'x.so' and \"y.so\"",
	}
	if *got != want {
		t.Errorf("portable runtime\n%+v\nwant\n%+v", *got, want)
	}
	if rt.Library[0] != '/' {
		t.Error("WithRun changed the caller's RuntimeInfo")
	}
}
