package graph

// The default ONNX domain is written "" or "ai.onnx" in files; every
// comparison and every display goes through these two, so the spelling
// is decided once.

// CanonicalDomain is d with the default domain as "" (for comparisons and
// map keys).
func CanonicalDomain(d string) string {
	if d == "ai.onnx" {
		return ""
	}
	return d
}

// DomainName is d with the default domain as "ai.onnx" (for people and
// JSON).
func DomainName(d string) string {
	if d == "" {
		return "ai.onnx"
	}
	return d
}

// IsDefaultDomain reports whether d is the default ONNX domain.
func IsDefaultDomain(d string) bool { return d == "" || d == "ai.onnx" }
