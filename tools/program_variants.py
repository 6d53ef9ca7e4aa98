"""The same four kinds of program written other ways (`program_bench.py
--sizes variants`): an Adam step, tanh activations, a pre-LayerNorm causal
transformer block, causal attention, NCHW strided convolutions with average
pooling, batch norm, the exact (erf) GELU, RMSNorm with SiLU, a softmax, and
LayerNorm + GELU in bfloat16. Found in the eighteenth session: rhs-transposed
Dots (backward passes) and the causal mask's extra pass."""

import jax
import jax.numpy as jnp
import numpy as np


def normal(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def layernorm_gelu(x, gamma, beta):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
    y = (x - mean) * jax.lax.rsqrt(var + 1e-5) * gamma + beta
    return jax.nn.gelu(y, approximate=True)


def mlp_gelu_adam(w1, b1, w2, b2, w3, b3, m1, v1, x, y):
    """Two hidden GELU layers, softmax cross-entropy, an Adam-style update of w1."""
    def loss(params):
        w1, b1, w2, b2, w3, b3 = params
        h = jax.nn.gelu(x @ w1 + b1)
        h = jax.nn.gelu(h @ w2 + b2)
        return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(h @ w3 + b3), axis=-1))
    value, g = jax.value_and_grad(loss)((w1, b1, w2, b2, w3, b3))
    m = 0.9 * m1 + 0.1 * g[0]
    v = 0.999 * v1 + 0.001 * g[0] * g[0]
    w = w1 - 1e-3 * m / (jnp.sqrt(v) + 1e-8)
    rest = tuple(p - 0.01 * d for p, d in zip((b1, w2, b2, w3, b3), g[1:]))
    return (w, m, v) + rest + (value,)

def mlp_tanh(w1, b1, w2, b2, x, y):
    """A tanh MLP with squared-error loss, SGD."""
    def loss(params):
        w1, b1, w2, b2 = params
        h = jnp.tanh(x @ w1 + b1)
        return jnp.mean((h @ w2 + b2 - y) ** 2)
    value, grads = jax.value_and_grad(loss)((w1, b1, w2, b2))
    return tuple(p - 0.01 * g for p, g in zip((w1, b1, w2, b2), grads)) + (value,)

def ln(x, g, b):
    m = jnp.mean(x, -1, keepdims=True)
    v = jnp.var(x, -1, keepdims=True)
    return (x - m) / jnp.sqrt(v + 1e-6) * g + b

def transformer_block(x, g1, b1, wqkv, wo, g2, b2, w1, w2):
    """Pre-LayerNorm causal self-attention (4 heads) and a GELU MLP, residuals."""
    s, d = x.shape
    h = ln(x, g1, b1)
    qkv = (h @ wqkv).reshape(s, 3, 4, d // 4).transpose(1, 2, 0, 3)
    q, k, v = qkv[0], qkv[1], qkv[2]
    sc = jnp.einsum("hqd,hkd->hqk", q, k) / np.float32(np.sqrt(d // 4))
    mask = jnp.tril(jnp.ones((s, s), bool))
    sc = jnp.where(mask, sc, -1e9)
    ctx = jnp.einsum("hqk,hkd->hqd", jax.nn.softmax(sc, -1), v).transpose(1, 0, 2).reshape(s, d)
    x = x + ctx @ wo
    return x + jax.nn.gelu(ln(x, g2, b2) @ w1) @ w2

def attention_causal(x, wq, wk, wv, wo):
    """Causal self-attention, S=512, width 512, 8 heads, residual."""
    s, d = x.shape
    def split(t):
        return t.reshape(s, 8, d // 8).transpose(1, 0, 2)
    q, k, v = split(x @ wq), split(x @ wk), split(x @ wv)
    sc = jnp.einsum("hqd,hkd->hqk", q, k) / np.float32(np.sqrt(d // 8))
    sc = jnp.where(jnp.tril(jnp.ones((s, s), bool)), sc, -jnp.inf)
    ctx = jnp.einsum("hqk,hkd->hqd", jax.nn.softmax(sc, axis=-1), v).transpose(1, 0, 2).reshape(s, d)
    return x + ctx @ wo

def conv_nchw_strided(x, k1, k2):
    """NCHW: a strided 3×3 convolution, ReLU, a 1×1 convolution, 2×2 average pool."""
    dn = ("NCHW", "OIHW", "NCHW")
    h = jax.nn.relu(jax.lax.conv_general_dilated(x, k1, (2, 2), ((1, 1), (1, 1)), dimension_numbers=dn))
    h = jax.lax.conv_general_dilated(h, k2, (1, 1), "VALID", dimension_numbers=dn)
    return jax.lax.reduce_window(h, 0.0, jax.lax.add, (1, 1, 2, 2), (1, 1, 2, 2), "VALID") / 4.0

def conv_batchnorm(x, k1, k2, gamma, beta):
    """Conv, batch norm over N, H, W (training statistics), ReLU, twice."""
    dn = ("NHWC", "HWIO", "NHWC")
    def bn(h):
        m = jnp.mean(h, (0, 1, 2))
        v = jnp.mean(jnp.square(h - m), (0, 1, 2))
        return jax.nn.relu((h - m) * jax.lax.rsqrt(v + 1e-5) * gamma + beta)
    h = bn(jax.lax.conv_general_dilated(x, k1, (1, 1), "SAME", dimension_numbers=dn))
    return bn(jax.lax.conv_general_dilated(h, k2, (1, 1), "SAME", dimension_numbers=dn))

def layernorm_erf_gelu(x, g, b):
    """LayerNorm then the exact (erf) GELU."""
    return jax.nn.gelu(ln(x, g, b), approximate=False)

def rmsnorm_silu(x, g):
    """RMSNorm then SiLU."""
    y = x * jax.lax.rsqrt(jnp.mean(x * x, -1, keepdims=True) + 1e-6) * g
    return jax.nn.silu(y)

def softmax_rows(x):
    """Softmax over the last axis."""
    return jax.nn.softmax(x, -1)

def layernorm_gelu_bf16(x, g, b):
    """LayerNorm + tanh GELU in bfloat16."""
    return layernorm_gelu(x, g, b)

def variant_programs(rng):
    """(name, function, arguments, tolerance), as `program_bench.programs`."""
    n = lambda *s, scale=1.0: normal(rng, *s, scale=scale)
    onehot = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)]
    t = {"atol": 1e-4, "rtol": 1e-3}
    yield from [
        ("v_mlp_gelu_adam", mlp_gelu_adam, [n(784, 512, scale=0.05), np.zeros(512, np.float32), n(512, 512, scale=0.05),
          np.zeros(512, np.float32), n(512, 10, scale=0.05), np.zeros(10, np.float32), n(784, 512, scale=1e-3),
          np.abs(n(784, 512, scale=1e-4)), n(128, 784), onehot], {"atol": 1e-4, "rtol": 1e-3}),
        ("v_mlp_tanh", mlp_tanh, [n(784, 1024, scale=0.05), np.zeros(1024, np.float32), n(1024, 10, scale=0.05),
          np.zeros(10, np.float32), n(256, 784), n(256, 10)], {"atol": 1e-5, "rtol": 1e-4}),
        ("v_transformer_block", transformer_block, [n(256, 256), 1 + n(256, scale=0.1), n(256, scale=0.1),
          n(256, 768, scale=0.05), n(256, 256, scale=0.05), 1 + n(256, scale=0.1), n(256, scale=0.1),
          n(256, 1024, scale=0.05), n(1024, 256, scale=0.05)], {"atol": 1e-4, "rtol": 1e-4}),
        ("v_attention_causal", attention_causal, [n(512, 512)] + [n(512, 512, scale=0.05) for _ in range(4)], {"atol": 1e-4, "rtol": 1e-4}),
        ("v_conv_nchw_strided", conv_nchw_strided, [n(16, 32, 64, 64), n(64, 32, 3, 3, scale=0.1), n(64, 64, 1, 1, scale=0.1)], t),
        ("v_conv_batchnorm", conv_batchnorm, [n(16, 32, 32, 32), n(3, 3, 32, 32, scale=0.1), n(3, 3, 32, 32, scale=0.1),
          1 + n(32, scale=0.1), n(32, scale=0.1)], t),
        ("v_layernorm_erf_gelu", layernorm_erf_gelu, [n(4096, 1024), n(1024), n(1024)], {"atol": 1e-5, "rtol": 1e-4}),
        ("v_rmsnorm_silu", rmsnorm_silu, [n(4096, 1024), n(1024)], {"atol": 1e-5, "rtol": 1e-4}),
        ("v_softmax_rows", softmax_rows, [n(4096, 1024)], {"atol": 1e-6, "rtol": 1e-4}),
        ("v_layernorm_gelu_bf16", layernorm_gelu_bf16, [n(4096, 1024).astype(jnp.bfloat16), n(1024).astype(jnp.bfloat16),
          n(1024).astype(jnp.bfloat16)], {"atol": 0.05, "rtol": 0.05}),
    ]
