package graph

// Contrib ops of ONNX Runtime (com.microsoft) that its transformers
// optimizer writes around attention in BERT, ViT and GPT-2 graphs, and that
// ONNX Runtime's own exports carry (the GPT-2 decoder of its BeamSearch test
// model). Without their shapes nothing after the first of them has one, and
// only the first attention layer can be matched or lifted. Each rule gives
// what ONNX Runtime's schema infers (checked against its outputs on the
// testdata/ops/ms_* cases and the ORT-optimised fixtures' runtime shapes in
// testdata/golden/shapes).
func init() {
	const ms = "com.microsoft."
	// Elementwise, shaped like input 0 (a bias input broadcasts over its
	// last axis).
	for _, op := range []string{"FastGelu", "Gelu", "QuickGelu", "BiasGelu", "BiasAdd", "RotaryEmbedding"} {
		customRules[ms+op] = inferSame
	}
	// Output 0 and input_skip_bias_sum (output 3) are shaped like the input;
	// mean and inv_std_var, for training, are left as the file has them.
	skipNorm := func(c *ictx) {
		c.same()
		if t := c.inType(0); c.out(3) != nil {
			c.set(3, t.DType, append(Shape(nil), t.Shape...), t.Ranked)
		}
	}
	customRules[ms+"SkipLayerNormalization"] = skipNorm
	customRules[ms+"SkipSimplifiedLayerNormalization"] = skipNorm
	// RMS normalization, in ONNX Runtime's registration the default
	// domain: output like X, inv_std_var like LayerNormalization's.
	customRules[".SimplifiedLayerNormalization"] = inferLayerNorm
	customRules[ms+"SimplifiedLayerNormalization"] = inferLayerNorm
	customRules[ms+"FusedMatMul"] = inferFusedMatMul
	// EmbedLayerNormalization gives (B, S, hidden) from input_ids (B, S)
	// and the word embedding (vocab, hidden), the mask index (B) as int32,
	// and the embedding sum like its output.
	customRules[ms+"EmbedLayerNormalization"] = func(c *ictx) {
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
}

// FusedMatMul is MatMul(transA? Aᵀ : A, transB? Bᵀ : B)·alpha over the last
// two axes; transBatchA/B (batch axes moved) are not followed.
func inferFusedMatMul(c *ictx) {
	a, ok1 := c.shape(0)
	b, ok2 := c.shape(1)
	dt := c.inType(0).DType
	if !ok1 || !ok2 || len(a) < 2 || len(b) < 2 || c.n.AttrInt("transBatchA", 0) != 0 || c.n.AttrInt("transBatchB", 0) != 0 {
		c.set(0, dt, nil, false)
		return
	}
	swap := func(s Shape) Shape {
		s = append(Shape(nil), s...)
		s[len(s)-1], s[len(s)-2] = s[len(s)-2], s[len(s)-1]
		return s
	}
	if c.n.AttrInt("transA", 0) != 0 {
		a = swap(a)
	}
	if c.n.AttrInt("transB", 0) != 0 {
		b = swap(b)
	}
	c.setShape(0, dt, MatMulShape(a, b))
}
