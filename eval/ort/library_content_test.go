package ort

import (
	"reflect"
	"testing"
)

func TestParseLibraryContent(t *testing.T) {
	cases := []struct {
		name, build, cpu string
		want             LibraryContent
		runs             map[int]bool
	}{
		{"cpu only", "attnopt_ort cuda=none", "built=generic,avx2,avx512 supported=generic,avx2 selected=avx2",
			LibraryContent{Build: "attnopt_ort cuda=none", CUDA: "none", CPUISAs: []string{"generic", "avx2", "avx512"},
				CPUSupported: []string{"generic", "avx2"}, CPUSelected: "avx2"},
			map[int]bool{75: false, 90: false}},
		{"CUDA 13, SASS 75-90 and PTX 90", "attnopt_ort cuda=13.0.88 archs=75-real,80-real,86-real,89-real,90", "built=generic supported=generic selected=generic",
			LibraryContent{Build: "attnopt_ort cuda=13.0.88 archs=75-real,80-real,86-real,89-real,90", CUDA: "13.0.88",
				CUDAArchs: []string{"sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "compute_90"},
				CPUISAs:   []string{"generic"}, CPUSupported: []string{"generic"}, CPUSelected: "generic"},
			// sm_70 has neither machine code nor PTX old enough; sm_100 compiles compute_90.
			map[int]bool{70: false, 75: true, 87: false, 90: true, 100: true}},
		{"PTX only, older library without cpu info", "attnopt_ort cuda=12.4 archs=70-virtual", "",
			LibraryContent{Build: "attnopt_ort cuda=12.4 archs=70-virtual", CUDA: "12.4", CUDAArchs: []string{"compute_70"}},
			map[int]bool{61: false, 70: true, 90: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := parseLibraryContent(tc.build, tc.cpu)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
			for sm, want := range tc.runs {
				if got.RunsOn(sm) != want {
					t.Errorf("RunsOn(%d) = %v", sm, !want)
				}
			}
		})
	}
}

// The library CI built ($ATTNOPT_CUSTOM_OPS, or kernels/build in the
// development mode scripts/test.sh sets) answers both build-info
// functions; its CPU kernels always include the generic ones.
func TestReadLibraryContent(t *testing.T) {
	found, err := LocateCustomOps("")
	if err != nil {
		t.Skipf("no custom-op library (the one kernels/ci.sh builds): %v", err)
	}
	path := found.Path
	c, err := ReadLibraryContent(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Build == "" || len(c.CPUISAs) == 0 || c.CPUISAs[0] != "generic" || c.CPUSelected == "" {
		t.Errorf("%s: %+v", path, c)
	}
	if _, err := ReadLibraryContent(path + ".missing"); err == nil {
		t.Error("a missing library read without error")
	}
}

// Without a GPU the probe says why, and never reports a device.
func TestProbeCUDA(t *testing.T) {
	s := ProbeCUDA(LocateCUDADriver().Path)
	if len(s.Devices) == 0 && s.Error == "" {
		t.Errorf("no device and no reason: %+v", s)
	}
	for _, d := range s.Devices {
		if d.Name == "" || d.SM < 30 {
			t.Errorf("device %+v", d)
		}
	}
}
