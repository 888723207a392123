//! The self-attention encoder of a neural network (`neural` with `scorer=attention`) as ONNX nodes: allRank's
//! pre-norm blocks, each `x + Gemm(attention(norm(x)))` then `x + Gemm(Relu(Gemm(norm(x))))`, and a final norm.
//!
//! The graph's `N` rows are the documents of **one query**: every row attends to every row, so a caller scores a
//! query per call (any number of documents; no padding and no mask is needed, as in `ltr predict`). The heads are
//! `Reshape` `[N, h, dk]` → `Transpose` → `MatMul` `[h, N, N]` → `Div` √dk → `Softmax` (last axis) → `MatMul` →
//! `Transpose` → `Reshape` `[N, width]`. allRank's norm (unbiased standard deviation, ε added to it) is not ONNX's
//! `LayerNormalization`, so it is written out: `ReduceMean`, `Sub`, `Mul`, `ReduceMean`, `Mul` by w/(w − 1),
//! `Sqrt`, `Add` ε, `Div`, then γ and β.

use ltr_core::neural::{Dense, Encoder, LayerNorm, ENCODER_NORM_EPS};

use crate::onnx_pb as pb;
use pb::attribute_proto::AttributeType;

fn attr_int(name: &str, i: i64) -> pb::AttributeProto {
    pb::AttributeProto {
        name: name.into(),
        r#type: AttributeType::Int as i32,
        i,
        ..Default::default()
    }
}

fn attr_ints(name: &str, ints: Vec<i64>) -> pb::AttributeProto {
    pb::AttributeProto {
        name: name.into(),
        r#type: AttributeType::Ints as i32,
        ints,
        ..Default::default()
    }
}

fn node(op: &str, inputs: &[&str], out: &str) -> pb::NodeProto {
    pb::NodeProto {
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: vec![out.into()],
        name: out.into(),
        op_type: op.into(),
        ..Default::default()
    }
}

fn unary(op: &str, a: &str, out: &str) -> pb::NodeProto {
    node(op, &[a], out)
}

fn binary(op: &str, a: &str, b: &str, out: &str) -> pb::NodeProto {
    node(op, &[a, b], out)
}

/// The tensors and nodes being built.
struct Builder<'a> {
    init: &'a mut Vec<pb::TensorProto>,
    node: &'a mut Vec<pb::NodeProto>,
}

impl Builder<'_> {
    fn f32s(&mut self, name: &str, dims: Vec<i64>, v: &[f32]) {
        self.init.push(pb::TensorProto {
            dims,
            data_type: 1,
            float_data: v.to_vec(),
            name: name.into(),
            ..Default::default()
        });
    }
    fn i64s(&mut self, name: &str, v: Vec<i64>) {
        self.init.push(pb::TensorProto {
            dims: vec![v.len() as i64],
            data_type: 7,
            int64_data: v,
            name: name.into(),
            ..Default::default()
        });
    }
    fn gemm(&mut self, d: &Dense, input: &str, out: &str) {
        self.f32s(
            &format!("{out}_w"),
            vec![d.inputs as i64, d.outputs as i64],
            &d.weights,
        );
        self.f32s(&format!("{out}_b"), vec![d.outputs as i64], &d.bias);
        self.node.push(pb::NodeProto {
            input: vec![input.into(), format!("{out}_w"), format!("{out}_b")],
            output: vec![out.into()],
            name: out.into(),
            op_type: "Gemm".into(),
            ..Default::default()
        });
    }
    fn op(&mut self, op: &str, inputs: &[&str], out: &str, attribute: Vec<pb::AttributeProto>) {
        self.node.push(pb::NodeProto {
            attribute,
            ..node(op, inputs, out)
        });
    }
    /// allRank's norm of the rows of `x` into `out`.
    fn norm(&mut self, n: &LayerNorm, x: &str, out: &str) {
        let w = n.gamma.len();
        let mean = |s: &mut Self, a: &str, o: &str| {
            s.op(
                "ReduceMean",
                &[a],
                o,
                vec![attr_ints("axes", vec![-1]), attr_int("keepdims", 1)],
            )
        };
        mean(self, x, &format!("{out}_mean"));
        self.node.push(binary(
            "Sub",
            x,
            &format!("{out}_mean"),
            &format!("{out}_c"),
        ));
        self.node.push(binary(
            "Mul",
            &format!("{out}_c"),
            &format!("{out}_c"),
            &format!("{out}_sq"),
        ));
        mean(self, &format!("{out}_sq"), &format!("{out}_msq"));
        let dof = w as f32 / (w.saturating_sub(1).max(1)) as f32;
        self.f32s(&format!("{out}_dof"), vec![1], &[dof]);
        self.f32s(&format!("{out}_eps"), vec![1], &[ENCODER_NORM_EPS]);
        self.f32s(&format!("{out}_gamma"), vec![w as i64], &n.gamma);
        self.f32s(&format!("{out}_beta"), vec![w as i64], &n.beta);
        self.node.extend([
            binary(
                "Mul",
                &format!("{out}_msq"),
                &format!("{out}_dof"),
                &format!("{out}_var"),
            ),
            unary("Sqrt", &format!("{out}_var"), &format!("{out}_std")),
            binary(
                "Add",
                &format!("{out}_std"),
                &format!("{out}_eps"),
                &format!("{out}_den"),
            ),
            binary(
                "Div",
                &format!("{out}_c"),
                &format!("{out}_den"),
                &format!("{out}_hat"),
            ),
            binary(
                "Mul",
                &format!("{out}_hat"),
                &format!("{out}_gamma"),
                &format!("{out}_scaled"),
            ),
            binary("Add", &format!("{out}_scaled"), &format!("{out}_beta"), out),
        ]);
    }
}

/// Append the encoder's tensors and nodes after `x` (`[N, width]`); the name of its output.
pub(crate) fn encoder_nodes(
    e: &Encoder,
    x: &str,
    init: &mut Vec<pb::TensorProto>,
    node: &mut Vec<pb::NodeProto>,
) -> String {
    let mut b = Builder { init, node };
    let (w, h) = (e.width() as i64, e.heads as i64);
    let dk = w / h;
    b.i64s("enc_heads_shape", vec![-1, h, dk]);
    b.i64s("enc_rows_shape", vec![-1, w]);
    b.f32s("enc_scale", vec![1], &[(dk as f32).sqrt()]);
    let mut x = x.to_string();
    for (l, blk) in e.blocks.iter().enumerate() {
        let p = format!("enc{}", l + 1);
        b.norm(&blk.attn_norm, &x, &format!("{p}_n1"));
        for (which, d) in [("q", &blk.query), ("k", &blk.key), ("v", &blk.value)] {
            b.gemm(d, &format!("{p}_n1"), &format!("{p}_{which}"));
            b.op(
                "Reshape",
                &[&format!("{p}_{which}"), "enc_heads_shape"],
                &format!("{p}_{which}3"),
                vec![],
            );
            // q, v: [h, N, dk]; k: [h, dk, N].
            let perm = if which == "k" {
                vec![1, 2, 0]
            } else {
                vec![1, 0, 2]
            };
            b.op(
                "Transpose",
                &[&format!("{p}_{which}3")],
                &format!("{p}_{which}h"),
                vec![attr_ints("perm", perm)],
            );
        }
        b.op(
            "MatMul",
            &[&format!("{p}_qh"), &format!("{p}_kh")],
            &format!("{p}_s"),
            vec![],
        );
        b.node.push(binary(
            "Div",
            &format!("{p}_s"),
            "enc_scale",
            &format!("{p}_ss"),
        ));
        b.op(
            "Softmax",
            &[&format!("{p}_ss")],
            &format!("{p}_p"),
            vec![attr_int("axis", -1)],
        );
        b.op(
            "MatMul",
            &[&format!("{p}_p"), &format!("{p}_vh")],
            &format!("{p}_oh"),
            vec![],
        );
        b.op(
            "Transpose",
            &[&format!("{p}_oh")],
            &format!("{p}_o3"),
            vec![attr_ints("perm", vec![1, 0, 2])],
        );
        b.op(
            "Reshape",
            &[&format!("{p}_o3"), "enc_rows_shape"],
            &format!("{p}_o"),
            vec![],
        );
        b.gemm(&blk.out, &format!("{p}_o"), &format!("{p}_att"));
        b.node
            .push(binary("Add", &x, &format!("{p}_att"), &format!("{p}_x1")));
        b.norm(&blk.ff_norm, &format!("{p}_x1"), &format!("{p}_n2"));
        b.gemm(&blk.ff_in, &format!("{p}_n2"), &format!("{p}_f1"));
        b.node
            .push(unary("Relu", &format!("{p}_f1"), &format!("{p}_f1r")));
        b.gemm(&blk.ff_out, &format!("{p}_f1r"), &format!("{p}_f2"));
        b.node.push(binary(
            "Add",
            &format!("{p}_x1"),
            &format!("{p}_f2"),
            &format!("{p}_x2"),
        ));
        x = format!("{p}_x2");
    }
    b.norm(&e.norm, &x, "enc_out");
    "enc_out".into()
}
