"""Writes a copy of ONNX Runtime's tiny GPT-2 BeamSearch model (the corpus
file, read-only) whose decoder subgraph computes each com.microsoft.Attention
with primitive ops instead: QKV projection, past/present concat, scores,
unidirectional mask (query i sees keys j <= past + i, fill -10000), the 0/1
attention_mask as a -10000 additive bias, Softmax, probs·V. ONNX Runtime's
BeamSearch gives the same sequences for it as for the original, and attnopt
has MatMul→Softmax→MatMul attention to rewrite inside BeamSearch.

usage: unfuse_decoder.py CORPUS_MODEL OUT_MODEL (OUT outside the repo)
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh

m = onnx.load(sys.argv[1])
bs = m.graph.node[0]
dec = [a for a in bs.attribute if a.name == 'decoder'][0].g
H, D = 4, 8
C = H * D
new_nodes, inits = [], []
def c(name, arr):
    inits.append(nh.from_array(np.array(arr), name)); return name
c('dc_hd', np.array([0, 0, H, D], np.int64))
c('dc_c', np.array([0, 0, C], np.int64))
c('dc_ax0', np.array([0], np.int64))
c('dc_ax1', np.array([1], np.int64))
c('dc_scale', np.array(1 / np.sqrt(D), np.float32))
c('dc_neg', np.array(-10000.0, np.float32))
c('dc_one', np.array(1.0, np.float32))
c('dc_i0', np.array(0, np.int64))
c('dc_i1', np.array(1, np.int64))
c('dc_split', np.array([C, C, C], np.int64))
for n in dec.node:
    if n.op_type != 'Attention':
        new_nodes.append(n); continue
    x, w, b, mask, past = n.input
    out, present = n.output
    p = n.name + '/'
    def nd(op, ins, outs=None, **kw):
        outs = outs or [p + op + str(len(new_nodes))]
        new_nodes.append(h.make_node(op, ins, outs, name=outs[0] + '_n', **kw)); return outs[0] if len(outs) == 1 else outs
    qkv = nd('Add', [nd('MatMul', [x, w]), b])
    q, k, v = nd('Split', [qkv, 'dc_split'], [p + 'q', p + 'k', p + 'v'], axis=2)
    def heads(t):
        return nd('Transpose', [nd('Reshape', [t, 'dc_hd'])], perm=[0, 2, 1, 3])
    q, k, v = heads(q), heads(k), heads(v)
    pk = nd('Gather', [past, 'dc_i0'], axis=0)
    pv = nd('Gather', [past, 'dc_i1'], axis=0)
    ka = nd('Concat', [pk, k], axis=2)
    va = nd('Concat', [pv, v], axis=2)
    nd('Concat', [nd('Unsqueeze', [ka, 'dc_ax0']), nd('Unsqueeze', [va, 'dc_ax0'])], [present], axis=0)
    s = nd('Mul', [nd('MatMul', [q, nd('Transpose', [ka], perm=[0, 1, 3, 2])]), 'dc_scale'])
    # causal with past: query i sees keys j <= P + i
    sh_q = nd('Shape', [q]); sh_k = nd('Shape', [ka])
    S = nd('Gather', [sh_q, c(p + 'two', np.array(2, np.int64))], axis=0)
    Tn = nd('Gather', [sh_k, p + 'two'], axis=0)
    P = nd('Sub', [Tn, S])
    rows = nd('Unsqueeze', [nd('Range', [P, Tn, 'dc_i1']), 'dc_ax1'])
    cols = nd('Unsqueeze', [nd('Range', ['dc_i0', Tn, 'dc_i1']), 'dc_ax0'])
    allowed = nd('LessOrEqual', [cols, rows])
    s = nd('Where', [allowed, s, 'dc_neg'])
    # padding mask (B, T) of 0/1 -> (B,1,1,T) additive
    mf = nd('Cast', [mask], to=T.FLOAT)
    add = nd('Mul', [nd('Sub', ['dc_one', mf]), 'dc_neg'])
    add = nd('Unsqueeze', [add, c(p + 'ax12', np.array([1, 2], np.int64))])
    s = nd('Add', [s, add])
    pr = nd('Softmax', [s], axis=-1)
    o = nd('MatMul', [pr, va])
    nd('Reshape', [nd('Transpose', [o], perm=[0, 2, 1, 3]), 'dc_c'], [out])
del dec.node[:]
dec.node.extend(new_nodes)
dec.initializer.extend(inits)
# Split with sizes and Unsqueeze with axes as inputs need opset 13
for o in m.opset_import:
    if o.domain in ('', 'ai.onnx'):
        o.version = max(o.version, 14)
onnx.save(m, sys.argv[2])
