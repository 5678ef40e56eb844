// Command protogen compiles onnx.proto and runs protoc-gen-go's generator on
// it in-process, so `go generate` needs no protoc binary: the schema parser
// (protocompile) and the generator are ordinary Go modules pinned in go.mod.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/bufbuild/protocompile"
	gengo "google.golang.org/protobuf/cmd/protoc-gen-go/internal_gengo"
	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/pluginpb"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: protogen SCHEMA.proto OUT.pb.go")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "protogen:", err)
		os.Exit(1)
	}
}

func run(schema, out string) error {
	c := protocompile.Compiler{Resolver: &protocompile.SourceResolver{}}
	files, err := c.Compile(context.Background(), schema)
	if err != nil {
		return err
	}
	fdp := protodesc.ToFileDescriptorProto(files[0])
	// The generated header names the compiler; leave it empty so that output
	// does not depend on which protoc is installed.
	req := &pluginpb.CodeGeneratorRequest{
		FileToGenerate: []string{schema},
		Parameter:      nil,
		ProtoFile:      []*descriptorpb.FileDescriptorProto{fdp},
	}
	plugin, err := protogen.Options{}.New(req)
	if err != nil {
		return err
	}
	for _, f := range plugin.Files {
		if f.Generate {
			gengo.GenerateFile(plugin, f)
		}
	}
	resp := plugin.Response()
	if resp.Error != nil {
		return fmt.Errorf("%s", resp.GetError())
	}
	if len(resp.File) != 1 {
		return fmt.Errorf("expected one generated file, got %d", len(resp.File))
	}
	tmp := out + ".tmp"
	if err := os.WriteFile(tmp, []byte(resp.File[0].GetContent()), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, out)
}
