package graph

// Contrib ops of ONNX Runtime's transformer exports (the GPT-2 decoder inside
// its BeamSearch test model): without their shapes nothing after the
// embedding has one. com.microsoft EmbedLayerNormalization gives (B, S,
// hidden) from input_ids (B, S) and the word embedding (vocab, hidden), and
// the mask index (B) as int32, and the embedding sum like its output;
// FastGelu keeps its input's type.
func init() {
	customRules["com.microsoft.EmbedLayerNormalization"] = func(c *ictx) {
		ids, ok := c.shape(0)
		emb, ok2 := c.shape(2)
		if !ok || !ok2 || len(ids) != 2 || len(emb) != 2 {
			return
		}
		dt, s := c.inType(2).DType, Shape{ids[0], ids[1], emb[1]}
		c.setShape(0, dt, s)
		if c.out(1) != nil {
			c.setShape(1, Int32, Shape{ids[0]})
		}
		if c.out(2) != nil { // embedding_sum: the sum before normalisation
			c.setShape(2, dt, s)
		}
	}
	customRules["com.microsoft.FastGelu"] = inferSame
}
