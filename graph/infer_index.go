package graph

// Inference rules for the gathers that index with a tensor of indices.

// GatherND: indices (…, k) pick k-tuples of coordinates after batch_dims
// leading dims, so the output is indices' dims but the last, then the data
// dims the tuples do not index (dynamo writes HF masks' padding lookup this
// way).
func inferGatherND(c *ictx) {
	data, ok1 := c.shape(0)
	idx, ok2 := c.shape(1)
	dt := c.inType(0).DType
	if !ok1 || !ok2 || len(idx) == 0 {
		c.set(0, dt, nil, false)
		return
	}
	b := int(c.n.AttrInt("batch_dims", 0))
	k, known := idx[len(idx)-1].Value()
	if !known || b < 0 || b+int(k) > len(data) {
		c.set(0, dt, nil, false)
		return
	}
	out := append(append(Shape(nil), idx[:len(idx)-1]...), data[b+int(k):]...)
	c.setShape(0, dt, out)
}

// GatherElements: the output has the indices' shape and the data's type.
func inferGatherElements(c *ictx) {
	s, ok := c.shape(1)
	c.set(0, c.inType(0).DType, append(Shape(nil), s...), ok)
}
