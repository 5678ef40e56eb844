package report

// Kinds the reports record, as typed values; JSON writes each as its text
// (report/schema/*.json list them).

// Kind is what a Report compares: two files, or a rewrite's input and
// output.
type Kind string

const (
	KindDiff    Kind = "diff"
	KindRewrite Kind = "rewrite"
)

// SiteStatus is what happened to an attention site of A.
type SiteStatus string

const (
	SiteFused     SiteStatus = "fused" // replaced by a fused op (exact)
	SiteApprox    SiteStatus = "approximated"
	SiteUnchanged SiteStatus = "unchanged" // still an unfused site in B
	SiteLeft      SiteStatus = "left"      // the rewrite declined it (Reason says why)
	SiteRemoved   SiteStatus = "removed"   // gone from B with no fused op attributable to it
	SiteNew       SiteStatus = "new"       // a site of B only
)

// SigStatus is how a graph input or output differs between A and B.
type SigStatus string

const (
	SigSame    SigStatus = "same"
	SigAdded   SigStatus = "added"
	SigRemoved SigStatus = "removed"
	SigChanged SigStatus = "changed" // dtype or shape
)

// CheckStatus is one unfused site of a Check against its budget.
type CheckStatus string

const (
	CheckOK      CheckStatus = "ok"      // score tensor within the budget
	CheckOver    CheckStatus = "over"    // score tensor larger than the budget
	CheckUnknown CheckStatus = "unknown" // a dim is symbolic: pin it with --dim or --shape
)

// CheckVerdict is the verdict of one validation check in a Report.
type CheckVerdict string

const (
	VerdictOK          CheckVerdict = "ok"
	VerdictWithinBound CheckVerdict = "approximate"  // an approximate site within its --max-error
	VerdictApproximate CheckVerdict = "APPROXIMATE"  // an approximate site with no bound: not a pass
	VerdictCannotCheck CheckVerdict = "CANNOT CHECK" // the runtime lacks an op the check needs
	VerdictFail        CheckVerdict = "FAIL"
	VerdictError       CheckVerdict = "ERROR"
)
