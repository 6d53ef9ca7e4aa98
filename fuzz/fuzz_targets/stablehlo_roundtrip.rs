//! Structured input → a valid random program → written as StableHLO
//! (`stablehlo::write_stablehlo`), read back (`mlir::mlir_to_json`) and
//! run: the result must equal the original module's bit for bit on both
//! engines. The first two bytes pick the generator, the rest seed the
//! program's random stream (as `diff_programs`), so a crash input replays
//! as `xlaref fuzz --ops OP --seed S` for the program.
#![no_main]

use libfuzzer_sys::fuzz_target;
use xlaref::gen::{self, Program};
use xlaref::harness::campaign::{campaign_limits, draw};
use xlaref::harness::engine::{run_replicas, Engine, Fast, Reference};
use xlaref_reference::eval::Env;
use xlaref_reference::json::{read_module, Path, ReadOptions};
use xlaref_reference::literal::Literal;
use xlaref_reference::stablehlo::{write_stablehlo, ExportErrorKind};
use xlaref_reference::verify::{verify, VerifiedModule, VerifyOptions};

type Generators = Vec<(&'static str, proptest::strategy::BoxedStrategy<Program>)>;

thread_local! {
    // Strategies are not Sync; libFuzzer runs the target on one thread.
    static ALL: Generators = gen::generators();
}

fuzz_target!(|data: &[u8]| ALL.with(|all| check(all, data)));

fn eval(engine: &dyn Engine, m: &VerifiedModule, p: &Program) -> Vec<Option<Literal>> {
    let make_env = || Env::new(campaign_limits());
    let results = match &p.replica_args {
        Some(lists) => run_replicas(engine, m, lists.clone(), &make_env).results,
        None => vec![engine.run(m, p.args.clone(), &mut make_env())],
    };
    results
        .into_iter()
        .map(|r| {
            r.ok().map(|mut l| {
                l.clear_padding();
                l
            })
        })
        .collect()
}

fn check(all: &Generators, data: &[u8]) {
    let (pick, rest) = match data {
        [a, b, rest @ ..] => (u16::from_le_bytes([*a, *b]) as usize, rest),
        _ => return,
    };
    let (op, strategy) = &all[pick % all.len()];
    let mut seed = [0u8; 8];
    for (i, b) in rest.iter().take(16).enumerate() {
        seed[i % 8] ^= b.rotate_left(i as u32);
    }
    let seed = u64::from_le_bytes(seed);
    let Some(p) = draw(strategy, seed, 0) else { return };
    let max_elements = campaign_limits().max_elements;
    let Ok(m) = p.verified(max_elements) else { return };
    let text = match write_stablehlo(&m) {
        Ok(t) => t,
        Err(e) if e.kind != ExportErrorKind::Internal => return,
        Err(e) => panic!("{op} (seed {seed}): export failed: {e}"),
    };
    let value = xlaref_reference::mlir::mlir_to_json(&text).unwrap_or_else(|e| panic!("{op} (seed {seed}): import failed: {e}\n{text}"));
    let module = read_module(&value, &Path::root(), ReadOptions { max_elements })
        .unwrap_or_else(|e| panic!("{op} (seed {seed}): read failed: {e}\n{text}"));
    let back = verify(module, &VerifyOptions { max_elements, ..VerifyOptions::default() }).unwrap_or_else(|e| panic!("{op} (seed {seed}): verify failed: {e}\n{text}"));
    for engine in [&Reference as &dyn Engine, &Fast] {
        let (before, after) = (eval(engine, &m, &p), eval(engine, &back, &p));
        let equal = before.len() == after.len()
            && before.iter().zip(&after).all(|(x, y)| match (x, y) {
                (None, None) => true,
                (Some(x), Some(y)) => x.bits_equal(y),
                _ => false,
            });
        assert!(equal, "{op} (seed {seed}) on the {} engine: {before:?} before the round trip, {after:?} after\n{text}", engine.name());
    }
}
