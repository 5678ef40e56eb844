module github.com/attnopt/attnopt

go 1.26

require (
	github.com/bufbuild/protocompile v0.14.1
	github.com/google/go-cmp v0.7.0
	github.com/spf13/cobra v1.10.2
	google.golang.org/protobuf v1.36.12
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	golang.org/x/sync v0.8.0 // indirect
)
