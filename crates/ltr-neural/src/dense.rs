//! A dense layer's backward pass, shared by the feed-forward layers (`net.rs`) and the encoder (`encoder.rs`).

use ltr_core::neural::{kernels, Dense};

/// `Wᵀ` of a layer, row-major `[outputs][inputs]`.
pub(crate) fn transposed(d: &Dense) -> Vec<f32> {
    let mut t = vec![0f32; d.weights.len()];
    for k in 0..d.inputs {
        for j in 0..d.outputs {
            t[j * d.inputs + k] = d.weights[k * d.outputs + j];
        }
    }
    t
}

/// `dW += aᵀ dy` (each entry's nonzero terms with rows in order, [`kernels::weight_gradient`]), `db += Σ dy`
/// (rows in order); `dx = dy Wᵀ` when asked.
pub(crate) fn dense_backward(
    a: &[f32],
    dy: &[f32],
    wt: &[f32],
    layer: &Dense,
    grad: &mut Dense,
    want_dx: bool,
) -> Vec<f32> {
    let (k_dim, o_dim) = (layer.inputs, layer.outputs);
    kernels::weight_gradient(a, dy, &mut grad.weights, k_dim, o_dim);
    for dyr in dy.chunks(o_dim) {
        kernels::axpy(1.0, dyr, &mut grad.bias);
    }
    if !want_dx {
        return Vec::new();
    }
    let rows = dy.len() / o_dim;
    let mut dx = vec![0f32; rows * k_dim];
    kernels::matmul_rows(dy, wt, None, &mut dx, o_dim, k_dim);
    dx
}
