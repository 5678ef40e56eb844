package graph

import (
	"github.com/attnopt/attnopt/graph/onnxpb"
	"google.golang.org/protobuf/proto"
)

// Meta returns the node's metadata_props entry for key ("" when absent).
// Rewrites record there which site a fused node replaced and with what plan,
// so later readers ask the node instead of parsing names.
func (n *Node) Meta(key string) string {
	if n.pb == nil {
		return ""
	}
	for _, e := range n.pb.GetMetadataProps() {
		if e.GetKey() == key {
			return e.GetValue()
		}
	}
	return ""
}

// SetMeta sets the node's metadata_props entry for key, keeping the others
// in order. The loaded proto is cloned first: it may be shared with the
// model as read.
func (n *Node) SetMeta(key, value string) {
	if n.pb == nil {
		n.pb = &onnxpb.NodeProto{}
	} else {
		n.pb = proto.Clone(n.pb).(*onnxpb.NodeProto)
	}
	for _, e := range n.pb.MetadataProps {
		if e.GetKey() == key {
			e.Value = proto.String(value)
			return
		}
	}
	n.pb.MetadataProps = append(n.pb.MetadataProps, &onnxpb.StringStringEntryProto{Key: proto.String(key), Value: proto.String(value)})
}
