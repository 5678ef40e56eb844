package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// operands checks a command's arguments against the operands its Use line
// names (MODEL; ORIGINAL REWRITTEN; A B) and, when the count is wrong,
// says which is missing or which are extra, by name, instead of cobra's
// "accepts 1 arg(s), received 0".
func operands(c *cobra.Command, args []string) error {
	names := operandNames(c)
	usage := strings.TrimSpace(c.CommandPath() + " " + strings.Join(names, " "))
	switch {
	case len(args) < len(names):
		return fmt.Errorf("missing %s (usage: %s)", strings.Join(names[len(args):], " and "), usage)
	case len(args) > len(names) && len(names) == 0:
		return fmt.Errorf("%s takes no arguments, got %s", c.CommandPath(), strings.Join(args, " "))
	case len(args) > len(names):
		return fmt.Errorf("too many arguments: %s takes %s, got %d (%s)", c.CommandPath(), strings.Join(names, " "), len(args), strings.Join(args, " "))
	}
	return nil
}

// operandNames are the words of c's Use line after its name up to the
// first flag: "check MODEL --memory-budget SIZE" names MODEL.
func operandNames(c *cobra.Command) []string {
	var names []string
	for _, w := range strings.Fields(c.Use)[1:] {
		if strings.HasPrefix(w, "-") || strings.HasPrefix(w, "[") {
			break
		}
		names = append(names, w)
	}
	return names
}
