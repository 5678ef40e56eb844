package main

import (
	"io"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/passes"
)

// Every command's --help shows examples, and each example is a command
// line attnopt accepts: its command exists, its flags parse and it names
// as many files as the command takes.
func TestHelpExamplesParse(t *testing.T) {
	root := newRootCmd(io.Discard, io.Discard)
	for _, c := range append(root.Commands(), root) {
		if c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		t.Run(c.Name(), func(t *testing.T) {
			code, stdout, _ := runCLI(strings.Fields(strings.TrimPrefix(c.CommandPath()+" --help", "attnopt "))...)
			if code != 0 || !strings.Contains(stdout, "Examples:\n  attnopt ") {
				t.Fatalf("--help: exit %d, no examples:\n%s", code, stdout)
			}
			for _, line := range strings.Split(c.Example, "\n") {
				line, _, _ = strings.Cut(line, "#")
				args := strings.Fields(line)
				if len(args) == 0 || args[0] != "attnopt" {
					t.Fatalf("example %q does not begin with attnopt", line)
				}
				fresh := newRootCmd(io.Discard, io.Discard)
				cmd, rest, err := fresh.Find(args[1:])
				if err != nil {
					t.Fatalf("example %q: %v", line, err)
				}
				if err := cmd.ParseFlags(rest); err != nil {
					t.Fatalf("example %q: %v", line, err)
				}
				if cmd.Args != nil {
					if err := cmd.Args(cmd, cmd.Flags().Args()); err != nil {
						t.Fatalf("example %q: %v", line, err)
					}
				}
			}
		})
	}
}

// A wrong number of files names the missing ones as --help's usage line
// does (MODEL, ORIGINAL REWRITTEN, A B), exit 2, instead of cobra's
// "accepts 1 arg(s), received 0".
func TestMissingOperandsAreNamed(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"inspect"}, "attnopt: missing MODEL (usage: attnopt inspect MODEL)"},
		{[]string{"rewrite"}, "attnopt: missing MODEL (usage: attnopt rewrite MODEL)"},
		{[]string{"check", "--memory-budget", "1GiB"}, "attnopt: missing MODEL (usage: attnopt check MODEL)"},
		{[]string{"validate"}, "attnopt: missing ORIGINAL and REWRITTEN (usage: attnopt validate ORIGINAL REWRITTEN)"},
		{[]string{"validate", "a.onnx"}, "attnopt: missing REWRITTEN (usage: attnopt validate ORIGINAL REWRITTEN)"},
		{[]string{"diff", "a.onnx"}, "attnopt: missing B (usage: attnopt diff A B)"},
		{[]string{"inspect", "a.onnx", "b.onnx"}, "attnopt: too many arguments: attnopt inspect takes MODEL, got 2 (a.onnx b.onnx)"},
		{[]string{"version", "x"}, "attnopt: attnopt version takes no arguments, got x"},
	}
	for _, tc := range cases {
		code, stdout, stderr := runCLI(tc.args...)
		if code != exitBadInput || stdout != "" || stderr != tc.want+"\n" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
}

// rewrite --help lists every target of the table, with the op it writes.
func TestRewriteHelpListsEveryTarget(t *testing.T) {
	_, stdout, _ := runCLI("rewrite", "--help")
	names := passes.TargetNames()
	if len(names) < 4 {
		t.Fatalf("targets %v: want attnopt, gqa, onnx and ort at least", names)
	}
	for _, name := range names {
		tg, _ := passes.TargetByName(name)
		if line := "  " + name; !strings.Contains(stdout, line) || !strings.Contains(stdout, tg.Op()+": "+tg.Summary()) {
			t.Errorf("rewrite --help does not list target %s (%s):\n%s", name, tg.Op(), stdout)
		}
	}
}
