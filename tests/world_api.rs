//! The world through the library API: user custom-call targets, the feed
//! queues, and both engines agreeing on them.

use xlaref_reference::custom_call::Registry;
use xlaref_reference::eval::{self, Env, Limits};
use xlaref_reference::json::{self, ReadOptions};
use xlaref_reference::literal::{ArrayLiteral, Literal};
use xlaref_reference::types::Shape;
use xlaref_reference::verify::{self, VerifiedModule, VerifyOptions};
use xlaref_reference::RunError;

/// Verified against the built-in targets and `user.scale` (the verifier
/// knows the targets it is told of).
fn module(text: &str) -> VerifiedModule {
    let m = json::parse_module(text, ReadOptions { max_elements: 1 << 20 }).expect("module reads");
    let mut targets = Registry::default();
    targets.register("user.scale", scale);
    let options = VerifyOptions { custom_call_targets: targets.known_targets(), ..VerifyOptions::default() };
    verify::verify(m, &options).expect("module verifies")
}

const SCALE: &str = r#"{"format": "xla-json/1", "computations": {"main": {
  "params": [{"name": "x", "shape": "f32[3]"}],
  "instructions": [
    {"name": "r", "op": "CustomCall", "operands": ["x"], "target_name": "user.scale", "shape": "f32[3]", "opaque": "2.5"}
  ]}}}"#;

/// A target registered through the API: multiplies by the factor in `opaque`.
fn scale(args: &[Literal], shape: &Shape, opaque: &str) -> Result<Literal, RunError> {
    let factor: f32 = opaque.trim().parse().map_err(|_| RunError::CustomCall("user.scale: opaque is a number".into()))?;
    let x = args
        .first()
        .and_then(Literal::as_array)
        .and_then(|a| a.typed::<f32>())
        .ok_or_else(|| RunError::CustomCall("user.scale: f32 operand".into()))?;
    let dims = shape.as_array().map(|s| s.dims.clone()).unwrap_or_default();
    Ok(ArrayLiteral::from_vec(dims, x.iter().map(|v| v * factor).collect::<Vec<f32>>()).into())
}

#[test]
fn user_target_runs_on_both_engines() {
    let m = module(SCALE);
    let arg: Literal = ArrayLiteral::from_vec(vec![3], vec![1.0f32, -2.0, 4.0]).into();
    let expected: Literal = ArrayLiteral::from_vec(vec![3], vec![2.5f32, -5.0, 10.0]).into();
    for fast in [false, true] {
        let mut env = Env::new(Limits::default());
        env.custom_calls.register("user.scale", scale);
        let out = if fast { xlaref_fast::run(&m, vec![arg.clone()], &mut env) } else { eval::run(&m, vec![arg.clone()], &mut env) };
        assert_eq!(out.unwrap(), expected, "fast = {fast}");
    }
}

#[test]
fn unknown_target_names_the_registered_ones() {
    let m = module(SCALE);
    let arg: Literal = ArrayLiteral::from_vec(vec![3], vec![1.0f32, 2.0, 3.0]).into();
    let mut env = Env::new(Limits::default());
    let e = eval::run(&m, vec![arg], &mut env).unwrap_err().to_string();
    assert!(e.contains("user.scale") && e.contains("xlaref.identity"), "{e}");
}

#[test]
fn verify_rejects_targets_it_is_not_told_of() {
    let m = json::parse_module(SCALE, ReadOptions { max_elements: 1 << 20 }).expect("module reads");
    let e = verify::verify(m.clone(), &VerifyOptions::default()).unwrap_err().to_string();
    assert!(e.contains("no target named `user.scale`"), "{e}");
    let any = VerifyOptions { custom_call_targets: xlaref_reference::custom_call::KnownTargets::any(), ..VerifyOptions::default() };
    assert!(verify::verify(m, &any).is_ok());
}

#[test]
fn feeds_through_the_env() {
    let m = module(
        r#"{"format": "xla-json/1", "computations": {"main": {"params": [],
      "instructions": [
        {"name": "a", "op": "Infeed", "operands": [], "shape": "s32[]"},
        {"name": "o", "op": "Outfeed", "operands": ["a"]},
        {"name": "b", "op": "Infeed", "operands": [], "shape": "s32[]"},
        {"name": "r", "op": "Mul", "operands": ["a", "b"]}
      ]}}}"#,
    );
    for fast in [false, true] {
        let mut env = Env::new(Limits::default());
        env.infeed = vec![ArrayLiteral::scalar(6i32).into(), ArrayLiteral::scalar(7i32).into()].into();
        let out = if fast { xlaref_fast::run(&m, vec![], &mut env) } else { eval::run(&m, vec![], &mut env) };
        assert_eq!(out.unwrap(), ArrayLiteral::scalar(42i32).into());
        assert_eq!(env.outfeed, vec![Literal::from(ArrayLiteral::scalar(6i32))]);
        assert!(env.infeed.is_empty());
        // A second run finds the queue dry.
        let again = if fast { xlaref_fast::run(&m, vec![], &mut env) } else { eval::run(&m, vec![], &mut env) };
        assert!(matches!(again, Err(RunError::InfeedExhausted(_))), "{again:?}");
    }
}
