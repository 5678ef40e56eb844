package main

import (
	"fmt"

	"github.com/attnopt/attnopt/validate"
)

// newRunner picks the runtime for validation.
func newRunner(name, ortLib, customOps string) (validate.Runner, error) {
	switch name {
	case "go":
		return validate.GoRunner{}, nil
	case "ort":
		return newORTRunner(ortLib, customOps)
	}
	return nil, usageError{fmt.Errorf("--runtime %q: want go or ort", name)}
}
