package graph

import (
	"bufio"
	"io"

	"github.com/attnopt/attnopt/graph/onnxpb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// writeModel serialises pb to w without building it in one buffer: the
// model and graph messages are marshalled without the main graph's
// initializers, and each initializer's raw_data is written from where it
// lies (the loaded file's mapping), after a header protobuf would have
// written. Field order differs from proto.Marshal (graph last, initializers
// last in the graph, raw_data last in a tensor); the bytes are still
// deterministic and any protobuf parser reads the same message.
func writeModel(w io.Writer, pb *onnxpb.ModelProto) error {
	det := proto.MarshalOptions{Deterministic: true}
	mp := shallowClone(pb)
	mp.Graph = nil
	head, err := det.Marshal(mp)
	if err != nil {
		return err
	}
	var graph []byte
	type piece struct{ hdr, raw []byte }
	var pieces []piece
	graphLen := 0
	if pb.Graph != nil {
		gp := shallowClone(pb.Graph)
		gp.Initializer = nil
		if graph, err = det.Marshal(gp); err != nil {
			return err
		}
		graphLen = len(graph)
		for _, t := range pb.Graph.Initializer {
			tc := shallowClone(t)
			raw := tc.RawData
			tc.RawData = nil
			tb, err := det.Marshal(tc)
			if err != nil {
				return err
			}
			if raw != nil {
				tb = protowire.AppendVarint(protowire.AppendTag(tb, tensorRawDataField, protowire.BytesType), uint64(len(raw)))
			}
			hdr := protowire.AppendVarint(protowire.AppendTag(nil, graphInitializerField, protowire.BytesType), uint64(len(tb)+len(raw)))
			pieces = append(pieces, piece{append(hdr, tb...), raw})
			graphLen += len(hdr) + len(tb) + len(raw)
		}
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	bw.Write(head)
	if pb.Graph != nil {
		bw.Write(protowire.AppendVarint(protowire.AppendTag(nil, modelGraphField, protowire.BytesType), uint64(graphLen)))
		bw.Write(graph)
		for _, p := range pieces {
			bw.Write(p.hdr)
			if _, err := bw.Write(p.raw); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}
