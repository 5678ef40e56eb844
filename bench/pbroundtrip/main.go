// Command pbroundtrip is the baseline of bench/load_save_mem.sh: a bare
// protobuf parse and serialise of a model file ("roundtrip IN OUT"), and
// the generator of the 1 GiB benchmark model ("gen OUT": 16 BERT-style
// layers, hidden 2048).
package main

import (
	"fmt"
	"os"

	"github.com/attnopt/attnopt/graph/onnxpb"
	"github.com/attnopt/attnopt/internal/testgraph"
	"google.golang.org/protobuf/proto"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "pbroundtrip:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	switch {
	case len(args) == 2 && args[0] == "gen":
		return os.WriteFile(args[1], testgraph.Transformer(16, 2048, 16, "seq").Bytes(), 0o644)
	case len(args) == 3 && args[0] == "roundtrip":
		data, err := os.ReadFile(args[1])
		if err != nil {
			return err
		}
		var m onnxpb.ModelProto
		if err := proto.Unmarshal(data, &m); err != nil {
			return err
		}
		out, err := proto.MarshalOptions{Deterministic: true}.Marshal(&m)
		if err != nil {
			return err
		}
		return os.WriteFile(args[2], out, 0o644)
	}
	return fmt.Errorf("usage: pbroundtrip gen OUT | pbroundtrip roundtrip IN OUT")
}
