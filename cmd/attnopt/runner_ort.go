package main

import (
	"github.com/attnopt/attnopt/validate"
)

func newORTRunner(ortLib, customOps string) (validate.Runner, error) {
	r, err := validate.NewORTRunner(ortLib, customOps)
	if err != nil {
		return nil, usageError{err}
	}
	return r, nil
}
