package units

import "testing"

func TestParseSize(t *testing.T) {
	cases := map[string]int64{"16GiB": 16 << 30, "512MiB": 512 << 20, "1.5GB": 1500000000, "1000000": 1000000, "4G": 4 << 30, "64 KiB": 64 << 10}
	for in, want := range cases {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("%s = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "GiB", "-1GiB", "lots", "1e400", "1.5", "0.5B"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if d, err := ParseDims("8x4x2"); err != nil || len(d) != 3 || d[0] != 8 || d[2] != 2 {
		t.Errorf("ParseDims: %v %v", d, err)
	}
}

func TestFormat(t *testing.T) {
	cases := map[int64]string{512: "512 B", 1536: "1.5 KiB", 16 << 30: "16.0 GiB", 70368744177664: "64.0 TiB"}
	for in, want := range cases {
		if got := FormatBytes(in); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", in, got, want)
		}
	}
	if got := FormatDims([]int64{128, 64, 2}); got != "128x64x2" {
		t.Errorf("FormatDims = %q", got)
	}
}
